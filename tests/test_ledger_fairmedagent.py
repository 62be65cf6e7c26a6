"""The FairMedAgent reproduction ledger: every published value is claimed once, with a computed status.

Oracles: the published id list (fairlib/paper_values/fairmedagent.csv); flips and comparisons counted here by brute
force over replicate pairs; binomial tail probabilities written out by hand; Spearman's exact p by enumerating the
720 orderings here. The notebook wiring is checked from the notebooks' source cells.
"""

from __future__ import annotations
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairlib.published import published_values
from fairlib.agent.trajectory import FLOOR_ACTIONS
from fairlib.agent.interchange import load_published_extract
from fairlib.agent.simulate import simulate_trajectories
from fairlib.agent.claims import (
    NOTEBOOK_IDS,
    claimed_ids,
    floor_claims,
    floor_inputs,
    methods_claims,
    pilot_claims,
)

ROOT = Path(__file__).resolve().parents[1]
M1 = "claude-haiku-4-5"


def _pairs(t: pd.DataFrame, model: str) -> tuple[int, int]:
    "Brute force: disagreeing and all unordered replicate pairs within each vignette x action cell of `model`."
    flips = comps = 0
    for _, g in t[(t.model == model) & t.action.isin(FLOOR_ACTIONS)].groupby(["vignette", "action"]):
        for a, b in itertools.combinations(g.sort_values("replicate").value.tolist(), 2):
            flips += a != b
            comps += 1
    return flips, comps


@pytest.fixture(scope="module")
def published_rows():
    rows = floor_claims(load_published_extract(), n_resamples=400, n_null_resamples=300, seed=0)
    return {r["claim"]: r for r in rows + pilot_claims() + methods_claims()}


def test_every_published_id_is_claimed_exactly_once(published_rows):
    ids = published_values("fairmedagent").id.tolist()
    per_nb = {nb: claimed_ids(nb) for nb in NOTEBOOK_IDS}
    flat = [i for v in per_nb.values() for i in v]
    assert sorted(flat) == sorted(ids) and len(flat) == len(set(flat))  # a partition of the published ids
    assert sorted(published_rows) == sorted(ids)
    rows = floor_claims(load_published_extract(), n_resamples=200, n_null_resamples=200)
    rows += pilot_claims() + methods_claims()
    assert len(rows) == len(ids)  # no id claimed twice


def test_floor_claims_are_exact_on_the_authors_extract(published_rows):
    t = load_published_extract()
    flips, comps = _pairs(t, M1)
    assert (flips, comps) == (374, 4320)
    r = published_rows
    assert r["floor_pooled.model_1.flips"]["fairlib"] == flips
    assert r["floor_pooled.model_1.comparisons"]["fairlib"] == comps
    assert r["floor_pooled.model_1.floor"]["fairlib"] == pytest.approx(flips / comps)
    f2, c2 = _pairs(t, "claude-sonnet-5")
    assert r["floor_pooled.model_2.floor"]["fairlib"] == pytest.approx(f2 / c2)
    exact = [
        "floor_pooled.model_1.floor",
        "floor_pooled.model_1.flips",
        "floor_pooled.model_1.comparisons",
        "floor_pooled.model_2.floor",
        "floor_action.icu_escalation.model_1",
        "floor_action.controlled_substance_caution.model_2",
        "cells.unanimous",
        "cells.near_boundary",
        "majority_vote.d5.floor",
        "majority_vote_summary.share_removed_pct",
        "rank_correlation.rho",
        "rank_correlation.p_exact",
    ]
    for i in exact:
        assert (r[i]["status"], r[i]["inputs"]) == ("exact", "authors' data"), (i, r[i])
    for i in ("floor_pooled.model_1.ci_low", "floor_pooled.model_1.ci_high", "majority_vote.d5.null_hi"):
        assert r[i]["status"] in ("exact", "within tolerance") and r[i]["tolerance"] > 0, (i, r[i])
    for i in ("floor_small_study.floor", "pilot.cs_caution_flips", "design.n_vignettes"):
        assert r[i]["status"] == "not reproducible here" and "make reproduce" in r[i]["command"]


def test_p_next_swap_is_enumerated_honestly(published_rows):
    "The exact p at squared rank distance 4 (one disjoint adjacent swap beyond the observed 2), enumerated here."
    n = 6
    rho = 1 - 6 * 4 / (n * (n * n - 1))
    rs = [
        1 - 6 * sum((i - p) ** 2 for i, p in enumerate(q)) / (n * (n * n - 1)) for q in itertools.permutations(range(n))
    ]
    p = np.mean(np.abs(rs) >= rho - 1e-12)
    row = published_rows["rank_correlation.p_next_swap"]
    assert row["fairlib"] == pytest.approx(p) and row["status"] == "differs" and row["reason"]


def test_pilot_arithmetic_worked_example(published_rows):
    q = 5 / 24  # the re-render control arm: 5 of 24 cells flipped (Sec. V-C)
    tail = 4 * q**3 * (1 - q) + q**4  # at least three of four vignettes flip
    r = published_rows
    assert r["pilot.single_draw_floor"]["fairlib"] == pytest.approx(q)
    assert r["pilot.p_cell_single_draw"]["fairlib"] == pytest.approx(tail)
    assert r["pilot.expected_cells"]["fairlib"] == pytest.approx(30 * tail)
    assert r["pilot.expected_cells"]["status"] == "exact"


def test_method_only_row_on_a_simulated_table():
    t = simulate_trajectories(n_vignettes=8, n_replicates=6, seed=3).trajectories
    rows = {r["claim"]: r for r in floor_claims(t, inputs="synthetic twin", n_resamples=100, n_null_resamples=100)}
    m = t.groupby("model").replicate.nunique().sort_values(ascending=False, kind="stable").index[0]
    flips, comps = _pairs(t, m)
    row = rows["floor_pooled.model_1.flips"]
    assert (row["fairlib"], row["status"], row["inputs"]) == (flips, "method only", "synthetic twin")
    assert rows["floor_pooled.model_1.comparisons"]["fairlib"] == comps == 8 * math.comb(6, 2) * len(FLOOR_ACTIONS)
    assert rows["null_ratio.any_opioid.ratio"]["shape_check"] in ("holds", "fails")
    assert {r["status"] for r in rows.values()} <= {"method only", "not reproducible here", "exact"}
    assert all(r["inputs"] == "authors' data" for r in rows.values() if r["status"] == "exact")  # the arithmetic


def test_the_floor_notebook_follows_its_source():
    assert floor_inputs("published") == "authors' data"
    assert floor_inputs("simulated") == "synthetic twin"
    assert floor_inputs("model") == "bundled model"
    assert floor_inputs("published", True) != "authors' data"  # a user table is never the authors'
    for nb, call in (("00_methods", "methods_claims("), ("01_floor", "floor_claims("), ("02_pilot", "pilot_claims(")):
        cells = json.loads((ROOT / f"nbs/papers/fairmedagent/{nb}.ipynb").read_text())["cells"]
        src = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert call in src and f'notebook="{nb}"' in src, nb
        assert "def " not in src.split("ledger")[-1]  # the rules live in fairlib.agent.claims, not in the notebook
    floor = "\n".join(
        "".join(c["source"]) for c in json.loads((ROOT / "nbs/papers/fairmedagent/01_floor.ipynb").read_text())["cells"]
    )
    assert "floor_inputs(source, bool(trajectories_csv))" in floor


def test_a_changed_decision_makes_the_floor_claims_differ():
    "Property: one replicate's decision flipped in a unanimous cell adds R - 1 = 9 flips: the count differs."
    t = load_published_extract()
    t = t[t.action.isin(FLOOR_ACTIONS)].reset_index(drop=True)
    cell = t[t.model == M1].groupby(["vignette", "action"]).value.nunique()
    cell = cell[cell.index.get_level_values("action").isin(["admit", "icu_escalation", "referral"])]  # no ordinal
    v, a = cell[cell == 1].index[0]
    i = t[(t.model == M1) & (t.vignette == v) & (t.action == a)].index[0]  # one replicate of that cell
    t.loc[i, "value"] = 1 - t.loc[i, "value"]
    rows = {r["claim"]: r for r in floor_claims(t, n_resamples=100, n_null_resamples=100)}
    assert rows["floor_pooled.model_1.flips"]["fairlib"] == 374 + 9 == _pairs(t, M1)[0]
    assert rows["floor_pooled.model_1.flips"]["status"] == "differs" and rows["floor_pooled.model_1.flips"]["reason"]
    assert rows["cells.unanimous"]["status"] == "differs"
