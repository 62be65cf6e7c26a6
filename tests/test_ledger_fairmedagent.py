"""The FairMedAgent reproduction ledger: every published value is claimed once, with the kind of evidence its
computation is and a computed status.

Oracles: the published id list (fairlib/paper_values/fairmedagent.csv); flips and comparisons counted here by brute
force over replicate pairs; binomial tail probabilities written out by hand; Spearman's exact p by enumerating the
720 orderings here; the pilot's flips per contrast as the authors' own pilot write-up lists them
(docs/PILOT3_FINDINGS.md of their repository: 6, 4, 3, 1 and 0 of 24); the wild bootstrap's p at the true mean computed
here from the formulas (restricted residuals, CR1 standard error), which decides coverage by test inversion. The
notebook wiring is checked from the notebooks' source cells.
"""

from __future__ import annotations
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairlib.published import published_value, published_values
from fairlib.stats import WILD_WEIGHTS
from fairlib.agent.trajectory import FLOOR_ACTIONS
from fairlib.agent.interchange import load_published_extract
from fairlib.agent.simulate import simulate_trajectories
from fairlib.agent.coverage import wild_bootstrap_coverage
from fairlib.agent.claims import (
    NOTEBOOK_IDS,
    claimed_ids,
    extract_data,
    floor_data,
    floor_inputs,
    methods_claims,
)
from fairlib.agent.claims import pilot_claims
from fairlib.agent.floorclaims import floor_claims

ROOT = Path(__file__).resolve().parents[1]
M1 = "claude-haiku-4-5"
RECOMPUTED = "recomputed from per-case data"


def _pairs(t: pd.DataFrame, model: str) -> tuple[int, int]:
    "Brute force: disagreeing and all unordered replicate pairs within each vignette x action cell of `model`."
    flips = comps = 0
    for _, g in t[(t.model == model) & t.action.isin(FLOOR_ACTIONS)].groupby(
        ["vignette", "action"]
    ):
        for a, b in itertools.combinations(g.sort_values("replicate").value.tolist(), 2):
            flips += a != b
            comps += 1
    return flips, comps


@pytest.fixture(scope="module")
def short_coverage():
    return wild_bootstrap_coverage(n_replications=30, n_resamples=199)


@pytest.fixture(scope="module")
def published_rows(short_coverage):
    rows = floor_claims(
        load_published_extract(), data=extract_data(), n_resamples=400, n_null_resamples=300, seed=0
    )
    return {r["claim"]: r for r in rows + pilot_claims() + methods_claims(short_coverage)}


def test_every_published_id_is_claimed_exactly_once(published_rows):
    ids = published_values("fairmedagent").id.tolist()
    per_nb = {nb: claimed_ids(nb) for nb in NOTEBOOK_IDS}
    flat = [i for v in per_nb.values() for i in v]
    assert sorted(flat) == sorted(ids) and len(flat) == len(
        set(flat)
    )  # a partition of the published ids
    assert sorted(published_rows) == sorted(ids)


def test_floor_claims_are_recomputed_from_the_authors_extract(published_rows):
    t = load_published_extract()
    flips, comps = _pairs(t, M1)
    assert (flips, comps) == (374, 4320)
    r = published_rows
    assert r["floor_pooled.model_1.flips"]["fairlib"] == flips
    assert r["floor_pooled.model_1.comparisons"]["fairlib"] == comps
    assert r["floor_pooled.model_1.floor"]["fairlib"] == pytest.approx(flips / comps)
    f2, c2 = _pairs(t, "claude-sonnet-5")
    assert r["floor_pooled.model_2.floor"]["fairlib"] == pytest.approx(f2 / c2)
    for i in (
        "floor_pooled.model_1.floor",
        "floor_pooled.model_1.flips",
        "floor_pooled.model_2.floor",
        "floor_action.icu_escalation.model_1",
        "cells.unanimous",
        "cells.near_boundary",
        "majority_vote.d5.floor",
        "rank_correlation.rho",
        "rank_correlation.p_exact",
    ):
        assert (r[i]["status"], r[i]["evidence"]) == ("exact", RECOMPUTED), (i, r[i])
        assert (
            extract_data().sha256[:16] in r[i]["source"]
        )  # the row names the shipped file by its digest
    for i in (
        "floor_pooled.model_1.ci_low",
        "floor_pooled.model_1.ci_high",
        "majority_vote.d5.null_hi",
    ):
        assert r[i]["status"] in ("exact", "within tolerance") and r[i]["tolerance"] > 0, (i, r[i])
    assert (
        r["design.n_vignettes"]["status"] == "not reproducible here"
        and "make reproduce" in r["design.n_vignettes"]["command"]
    )
    small = load_published_extract("instability")
    f4, c4 = _pairs(small, M1)  # the earlier four-vignette study, counted here from the raw rows
    assert (f4, c4) == (147, 1080)
    assert r["floor_small_study.floor"]["fairlib"] == pytest.approx(f4 / c4)
    for i in ("floor_small_study.floor", "floor_small_study.ci_low", "floor_small_study.ci_high"):
        assert (r[i]["status"], r[i]["evidence"]) == ("exact", RECOMPUTED), (i, r[i])
        assert "[instability]" in r[i]["source"] and extract_data().sha256[:16] in r[i]["source"]


def test_printed_arithmetic_and_settings_are_not_counted_as_recomputed(published_rows):
    r = published_rows
    for i in (
        "ties.p050.pct",
        "ties.expected",
        "floor_study.model_calls",
        "design.n_required.sixteen_vignettes",
    ):
        assert r[i]["evidence"] == "consistency of printed values" and r[i]["status"] == "exact", (
            i,
            r[i],
        )
    assert r["floor_study.model_calls"]["fairlib"] == 10 * 16 * 5 == 800
    for i in (
        "cells.near_boundary_lo",
        "stats.fdr",
        "stats.confirmatory_min_discordant",
        "design.model_calls_per_trajectory",
    ):
        assert r[i]["evidence"] == "restated input" and r[i]["status"] == "exact", (i, r[i])
    assert (
        r["stats.approximate_g_max"]["fairlib"] == 12
        and r["stats.approximate_g_max"]["evidence"] == "restated input"
    )


def test_p_next_swap_is_enumerated_honestly(published_rows):
    "The exact p at squared rank distance 4 (one disjoint adjacent swap beyond the observed 2), enumerated here."
    n = 6
    rho = 1 - 6 * 4 / (n * (n * n - 1))
    rs = [
        1 - 6 * sum((i - p) ** 2 for i, p in enumerate(q)) / (n * (n * n - 1))
        for q in itertools.permutations(range(n))
    ]
    p = np.mean(np.abs(rs) >= rho - 1e-12)
    row = published_rows["rank_correlation.p_next_swap"]
    assert row["fairlib"] == pytest.approx(p) and row["status"] == "differs" and row["reason"]


def test_pilot_claims_are_recomputed_from_both_released_arms(published_rows):
    r = published_rows
    q = 5 / 24  # the re-render control arm: 5 of 24 cells flipped (Sec. V-C)
    tail = lambda x: 4 * x**3 * (1 - x) + x**4  # noqa: E731  at least three of four vignettes flip
    assert r["pilot.single_draw_floor"]["fairlib"] == pytest.approx(q)
    assert r["pilot.p_cell_single_draw"]["fairlib"] == pytest.approx(tail(q))
    assert r["pilot.expected_cells"]["fairlib"] == pytest.approx(30 * tail(q))
    assert r["pilot.p_cell_replicated"]["fairlib"] == pytest.approx(tail(374 / 4320))
    assert [
        r[i]["fairlib"]
        for i in ("pilot.conditions", "pilot.cs_caution_flips", "pilot.cells_inspected")
    ] == [
        6,
        3,
        30,
    ]
    assert {r[i]["evidence"] for i in claimed_ids("02_pilot")} == {RECOMPUTED}
    assert {r[i]["status"] for i in claimed_ids("02_pilot")} == {"exact"}


def test_pilot_main_arm_matches_the_authors_write_up():
    "The shipped main arm gives the flips per contrast that the authors' pilot write-up lists (an independent oracle)."
    p = load_published_extract("pilot3")
    p = p[p.action.isin(FLOOR_ACTIONS)]
    assert (p.vignette.nunique(), p.condition.nunique(), len(p)) == (4, 6, 4 * 6 * 6)
    w = p.pivot_table(index=["vignette", "action"], columns="condition", values="value")
    ref = "ref_white_man_private"
    flips = {c: int((w[c] != w[ref]).sum()) for c in w.columns if c != ref}
    assert flips == {
        "black_woman_medicaid": 6,
        "white_man_private_lep": 4,
        "race_black_man_private": 3,
        "white_woman_private": 1,
        "white_man_medicaid": 0,
    }
    cs = w.xs("controlled_substance_caution", level="action")
    assert {
        c: int((cs[c] != cs[ref]).sum()) for c in ("black_woman_medicaid", "white_man_private_lep")
    } == {
        "black_woman_medicaid": published_value("fairmedagent", "pilot.cs_caution_flips"),
        "white_man_private_lep": published_value("fairmedagent", "pilot.cs_caution_flips"),
    }


def _wcb_p_at(y: np.ndarray, G: int, m: int, W: np.ndarray, b0: float) -> float:
    "The restricted wild cluster bootstrap p for H0: mean = b0 (intercept only, CR1), written out from the formulas."
    yc = y.reshape(G, m)
    N, mean = y.size, y.mean()
    se = math.sqrt(G / (G - 1) * (((yc - mean).sum(1)) ** 2).sum()) / N
    t0 = (mean - b0) / se
    u = (yc - b0).sum(1)  # restricted residual sums per cluster
    ts = []
    for w in W:
        ystar = b0 + w[:, None] * (yc - b0)
        ms = ystar.mean()
        ses = math.sqrt(G / (G - 1) * (((ystar - ms).sum(1)) ** 2).sum()) / N
        ts.append((ms - b0) / ses if ses > 0 else 0.0)
    assert np.isclose(u.sum() / N, mean - b0)
    return float(np.mean(np.abs(ts) >= abs(t0) * (1 - 1e-10)))


def test_coverage_decisions_match_the_test_written_out_here():
    """Coverage by test inversion: a replication's interval contains the true mean 0 exactly when the test of
    H0: mean = 0 does not reject. The same data and weight draws, p computed here from the formulas."""
    G, m, B, R = 8, 4, 199, 12
    res = wild_bootstrap_coverage(n_replications=R, n_resamples=B)
    covered = 0
    for r in range(R):
        rng = np.random.default_rng([0, r])
        y = (rng.normal(0, 1, G)[:, None] + rng.normal(0, 0.5, (G, m))).ravel()
        W = rng.choice(
            WILD_WEIGHTS["webb"], size=(B, G)
        )  # the draws fairlib's weight matrix makes next
        covered += _wcb_p_at(y, G, m, W, 0.0) > 0.05
    assert res.n_covered == covered and res.n_replications == R


def test_the_coverage_row_is_computed_from_the_stated_design(published_rows, short_coverage):
    row = published_rows["wild_bootstrap.coverage.pct"]
    assert row["evidence"] == "computed from the stated design"
    assert row["fairlib"] == pytest.approx(100 * short_coverage.coverage) and row["how"].count(
        "intervals cover"
    )
    assert (
        published_rows["wild_bootstrap.coverage.replications"]["status"] == "differs"
    )  # a short run: says so


@pytest.mark.slow
def test_the_papers_coverage_design_agrees_within_monte_carlo_error():
    "The paper's design (G = 8, 200 replications): fairlib's coverage within 1.96 combined MCSE of the printed 94.0%."
    res = wild_bootstrap_coverage()
    rows = {r["claim"]: r for r in methods_claims(res)}
    mcse = math.hypot(1.7, 100 * res.mcse)
    assert abs(100 * res.coverage - 94.0) <= round(1.96 * mcse, 1) + 1e-9
    assert rows["wild_bootstrap.coverage.pct"]["status"] in ("exact", "within tolerance")
    assert rows["wild_bootstrap.coverage.replications"]["status"] == "exact"


def test_method_only_rows_on_a_simulated_table():
    t = simulate_trajectories(n_vignettes=8, n_replicates=6, seed=3).trajectories
    rows = {
        r["claim"]: r
        for r in floor_claims(t, inputs="synthetic twin", n_resamples=100, n_null_resamples=100)
    }
    m = t.groupby("model").replicate.nunique().sort_values(ascending=False, kind="stable").index[0]
    flips, comps = _pairs(t, m)
    row = rows["floor_pooled.model_1.flips"]
    assert (row["fairlib"], row["status"], row["evidence"]) == (
        flips,
        "method only",
        "method on a twin",
    )
    assert (
        rows["floor_pooled.model_1.comparisons"]["fairlib"]
        == comps
        == 8 * math.comb(6, 2) * len(FLOOR_ACTIONS)
    )
    assert rows["null_ratio.any_opioid.ratio"]["shape_check"] in ("holds", "fails")
    on_table = {i: r for i, r in rows.items() if not i.startswith("floor_small_study.")}
    assert not {r["evidence"] for r in on_table.values()} & {
        RECOMPUTED
    }  # nothing of a twin counts as recomputed
    # the earlier four-vignette study never reads this table: always its own released decisions
    assert all(
        "[instability]" in rows[f"floor_small_study.{q}"]["source"]
        for q in ("floor", "ci_low", "ci_high")
    )
    with pytest.raises(ValueError, match="argument `data`"):
        floor_claims(load_published_extract())  # the authors' data need their provenance


def test_the_floor_notebook_follows_its_source():
    assert floor_inputs("published") == "authors' data"
    assert floor_inputs("simulated") == "synthetic twin"
    assert floor_inputs("model") == "bundled model"
    assert floor_inputs("published", True) != "authors' data"  # a user table is never the authors'
    assert (
        floor_data("published").sha256 == extract_data("floor").sha256
        and floor_data("model") is None
    )
    for nb, call in (
        ("00_methods", "methods_claims("),
        ("01_floor", "floor_claims("),
        ("02_pilot", "pilot_claims("),
    ):
        cells = json.loads((ROOT / f"nbs/papers/fairmedagent/{nb}.ipynb").read_text())["cells"]
        src = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert call in src and f'notebook="{nb}"' in src, nb
        assert (
            "def " not in src.split("ledger")[-1]
        )  # the rules live in fairlib.agent, not in the notebook
    floor = "\n".join(
        "".join(c["source"])
        for c in json.loads((ROOT / "nbs/papers/fairmedagent/01_floor.ipynb").read_text())["cells"]
    )
    assert "floor_inputs(source, bool(trajectories_csv))" in floor and "floor_data(source" in floor


def test_a_changed_decision_makes_the_floor_claims_differ():
    "Property: one replicate's decision flipped in a unanimous cell adds R - 1 = 9 flips: the count differs."
    t = load_published_extract()
    t = t[t.action.isin(FLOOR_ACTIONS)].reset_index(drop=True)
    cell = t[t.model == M1].groupby(["vignette", "action"]).value.nunique()
    cell = cell[
        cell.index.get_level_values("action").isin(["admit", "icu_escalation", "referral"])
    ]  # no ordinal
    v, a = cell[cell == 1].index[0]
    i = t[(t.model == M1) & (t.vignette == v) & (t.action == a)].index[
        0
    ]  # one replicate of that cell
    t.loc[i, "value"] = 1 - t.loc[i, "value"]
    rows = {
        r["claim"]: r
        for r in floor_claims(t, data=extract_data(), n_resamples=100, n_null_resamples=100)
    }
    assert rows["floor_pooled.model_1.flips"]["fairlib"] == 374 + 9 == _pairs(t, M1)[0]
    assert (
        rows["floor_pooled.model_1.flips"]["status"] == "differs"
        and rows["floor_pooled.model_1.flips"]["reason"]
    )
    assert rows["cells.unanimous"]["status"] == "differs"
