"""Control arms and condition kinds in the contrast table (fairlib.agent.studies): a control arm, whoever names it, is
never a demographic contrast and never enters the FDR family; an id nobody declared is reported, not guessed."""

import numpy as np
import pandas as pd
import pytest
from fairlib.core import FairlibInputError
from fairlib.agent.conditions import AUTHOR_CONDITION_IDS, CONDITIONS, condition_kind
from fairlib.agent.metrics import anti_gaming_gate
from fairlib.agent.studies import contrast_table

REF = "ref_white_man_private"
N = 30  # vignettes: enough discordant pairs (>= 25) to reach the confirmatory family


def _table(arms: dict) -> pd.DataFrame:
    "Reference admits nobody; arm `c` admits the first `k` vignettes (k discordant pairs)."
    rows = [
        {"vignette": f"v{v}", "condition": REF, "replicate": 0, "action": "admit", "value": 0}
        for v in range(N)
    ]
    for c, k in arms.items():
        rows += [
            {
                "vignette": f"v{v}",
                "condition": c,
                "replicate": 0,
                "action": "admit",
                "value": int(v < k),
            }
            for v in range(N)
        ]
    return pd.DataFrame(rows)


AUTHORS_CONTROLS = ("rerender_control", "sham_attribute_control", "rare_token_control")


def test_authors_control_ids_are_control_arms_not_demographic_contrasts():
    t = _table(
        {
            "rerender_control": 27,
            "sham_attribute_control": 26,
            "rare_token_control": 3,
            "white_man_medicaid": 28,
        }
    )
    ct = contrast_table(t, actions=("admit",))
    tab = ct.table.set_index("comparison")
    for c in AUTHORS_CONTROLS:
        assert tab.loc[c, "kind"] == "control" and tab.loc[c, "route"] == "control arm"
        assert not tab.loc[c, "in_family"] and np.isnan(tab.loc[c, "p_by"])
    # the control maximum is taken over the authors' arms (oracle: the flip counts above)
    assert tab.loc["white_man_medicaid", "control_max_cfr"] == pytest.approx(27 / N)
    assert tab.loc["white_man_medicaid", "in_family"] and ct.n_confirmatory == 1


def test_controls_argument_always_wins():
    # a caller's own null arm, and even a packaged demographic id, named in controls=, is a control arm
    t = _table({"my_null_arm": 29, "white_man_medicaid": 28, "white_woman_private": 27})
    ct = contrast_table(t, actions=("admit",), controls=("my_null_arm", "white_woman_private"))
    tab = ct.table.set_index("comparison")
    for c in ("my_null_arm", "white_woman_private"):
        assert tab.loc[c, "kind"] == "control" and not tab.loc[c, "in_family"]
    assert tab.loc["white_man_medicaid", "control_max_cfr"] == pytest.approx(29 / N)
    assert ct.n_confirmatory == 1


def test_unknown_condition_id_is_reported_and_kept_out_of_the_family():
    t = _table({"martian_arm": 30, "white_man_medicaid": 28})
    ct = contrast_table(t, actions=("admit",), controls=())
    row = ct.table.set_index("comparison").loc["martian_arm"]
    assert row["kind"] == "unknown" and not row["in_family"] and np.isnan(row["p_by"])
    assert "martian_arm" in row["reason"] and "martian_arm" in ct.summary()
    assert ct.n_confirmatory == 1  # only white_man_medicaid
    # declared by the caller, the same id is a demographic contrast
    ct2 = contrast_table(t, actions=("admit",), controls=(), kinds={"martian_arm": "demographic"})
    assert (
        ct2.table.set_index("comparison").loc["martian_arm", "in_family"]
        and ct2.n_confirmatory == 2
    )
    with pytest.raises(FairlibInputError, match="kinds"):
        contrast_table(t, actions=("admit",), kinds={"martian_arm": "alien"})


def test_condition_kind_map_covers_the_authors_ids():
    assert {AUTHOR_CONDITION_IDS[c].kind for c in AUTHORS_CONTROLS} == {"control"}
    assert {AUTHOR_CONDITION_IDS[c].control for c in AUTHORS_CONTROLS} == {
        "rerender",
        "sham",
        "rare_token",
    }
    # the authors' demographic ids are fairlib's own
    demo = [c for c, v in AUTHOR_CONDITION_IDS.items() if v.kind == "demographic"]
    assert len(demo) == 11 and all(CONDITIONS[c].kind == "demographic" for c in demo)
    assert (
        condition_kind("sham_attribute_control") == "control"
        and condition_kind("no_such_arm") == "unknown"
    )
    assert condition_kind("white_man_medicaid", controls=("white_man_medicaid",)) == "control"


@pytest.mark.parametrize("capability", [2.0, -0.1, float("inf")])
def test_gate_refuses_capability_outside_unit_interval(capability):
    with pytest.raises(FairlibInputError, match="capability") as e:
        anti_gaming_gate(
            capability=capability,
            entropy=1.0,
            n_straddling=5,
            min_capability=0.5,
            min_entropy=0.5,
            min_straddling=1,
        )
    assert e.value.argument == "capability" and "[0, 1]" in str(e.value)
