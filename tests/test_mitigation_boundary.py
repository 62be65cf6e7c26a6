"""Runs the mitigators' boundary campaign (`tests/boundary_cases_mitigation.py`, issues 34 and 35): every case must be
a clear refusal naming the argument or a legitimate answer confirmed by an independent computation (the cases hold
their oracles); obscure errors, silent wrong answers and crashes fail. The tally of every surface is
`tests/boundary_harness.py`'s, printed by `python tools/campaign.py`."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boundary_cases_mitigation import CASES  # noqa: E402
from boundary_harness import classify  # noqa: E402


def test_the_campaign_has_enough_cases_with_unique_ids():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 60
    kinds = {type(c[2]).__name__ for c in CASES}
    assert kinds == {"Err", "Undef", "Val"}


@pytest.mark.parametrize("call,contract", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_case(call, contract):
    kind, detail = classify(call, contract)
    assert kind in ("clear", "legitimate"), f"{kind}: {detail}"
