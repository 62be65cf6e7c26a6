"""Trajectory table format and its validation errors."""

import numpy as np
import pandas as pd
import pytest
from fairlib.core import FairlibInputError
from fairlib.agent.trajectory import (
    ACTIONS,
    TRAJECTORY_COLUMNS,
    validate_trajectories,
    read_trajectories,
    cell_counts,
    parse_items,
)


def _table():
    rows = []
    for v in ("v1", "v2"):
        for r in range(3):
            esi = 2 if (v, r) != ("v2", 1) else 3
            rows += [
                dict(
                    vignette=v, replicate=r, action="high_acuity", value=int(esi <= 2), ordinal=esi
                ),
                dict(vignette=v, replicate=r, action="admit", value=r % 2, ordinal=np.nan),
                dict(
                    vignette=v,
                    replicate=r,
                    action="any_opioid",
                    value=int(r == 0),
                    ordinal=3 if r == 0 else 1,
                ),
            ]
    return pd.DataFrame(rows)


def test_valid_table_fills_documented_columns():
    t = validate_trajectories(_table())
    assert list(t.columns[: len(TRAJECTORY_COLUMNS)]) == list(TRAJECTORY_COLUMNS)
    assert set(t.model) == {"model"} and set(t.condition) == {"reference"}
    assert t.loc[t.action == "any_opioid", "step"].eq("prescribe").all()


def test_dichotomisations_match_paper_rules():
    assert ACTIONS["high_acuity"].dichotomize([1, 2, 3, 4, 5]).tolist() == [
        int(e <= 2) for e in range(1, 6)
    ]
    assert ACTIONS["any_opioid"].dichotomize([0, 1, 2, 3]).tolist() == [
        int(t >= 2) for t in range(4)
    ]


@pytest.mark.parametrize(
    "mutate,msg",
    [
        (lambda d: pd.concat([d, d.iloc[[0]]]), "duplicate rows"),
        (lambda d: d.drop(index=4), "missing action(s) ['admit']"),
        (lambda d: d.assign(value=d.value.where(d.index != 1, 3)), "must be 0/1"),
        (lambda d: d.assign(ordinal=d.ordinal.where(d.index != 0, 0)), "outside its domain"),
        (
            lambda d: d.assign(ordinal=d.ordinal.where(d.index != 0, 4)),
            "disagrees with its ordinal",
        ),
        (lambda d: d.assign(action=d.action.where(d.index != 0, "teleport")), "unknown action"),
        (lambda d: d.drop(columns="replicate"), "missing required column"),
        (lambda d: d.iloc[:0], "is empty"),
    ],
)
def test_validation_errors(mutate, msg):
    with pytest.raises(FairlibInputError, match="trajectories") as e:
        validate_trajectories(mutate(_table()))
    assert msg in str(e.value)


def test_mixed_models_and_conditions_refused_when_one_expected():
    d = _table().assign(model=np.where(np.arange(18) < 9, "a", "b"))
    validate_trajectories(d)  # fine when not required
    with pytest.raises(FairlibInputError, match="mixes 2 models"):
        validate_trajectories(d, one_model=True)
    with pytest.raises(FairlibInputError, match="mixes 2 conditions"):
        validate_trajectories(
            _table().assign(condition=np.where(np.arange(18) < 9, "x", "y")), one_condition=True
        )


def test_not_a_dataframe():
    with pytest.raises(FairlibInputError, match="must be a DataFrame"):
        validate_trajectories([1, 2])


def test_csv_roundtrip_and_cell_counts(tmp_path):
    p = tmp_path / "t.csv"
    validate_trajectories(_table()).to_csv(p, index=False)
    t = read_trajectories(p)
    c = cell_counts(t)
    ref = _table().groupby(["vignette", "action"]).value.agg(["size", "sum"])
    m = c.set_index(["vignette", "action"])
    assert (m.n == ref["size"].reindex(m.index)).all() and (
        m.k == ref["sum"].reindex(m.index)
    ).all()


def test_parse_items():
    assert parse_items("cbc;lipase; ct_abdomen") == {"cbc", "lipase", "ct_abdomen"}
    assert parse_items("") == frozenset() and parse_items(None) == frozenset()
