"""The issue-24 campaign (tests/campaign_cases.py): every case meets its contract -- a clear refusal naming the
argument, NaN where the quantity is undefined, or the correct value. `python tools/campaign.py` prints the counts."""

import pytest

from campaign_cases import cases, classify

CASES = cases()


def test_campaign_is_large_enough():
    assert len(CASES) >= 150
    assert len({c[0] for c in CASES}) == len(CASES), "case ids must be unique"


@pytest.mark.parametrize("call,contract", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_case_meets_its_contract(call, contract):
    kind, detail = classify(call, contract)
    assert kind in ("clear", "legitimate"), f"{kind}: {detail}"
