"""The FairMedAgent authors' released decisions, shipped as an extract: the paper's floor numbers recomputed from them.

Oracle: the paper's printed values (fairlib/paper_values/fairmedagent.csv via `published_value`), each compared
at the precision it is printed with (exactly for counts); the computations are fairlib's floor functions on the
extract. A second group checks the writer of the authors' layout by a write-then-read round trip and its refusals.
"""

from __future__ import annotations
import itertools, json, math

import numpy as np
import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib.published import published_value, published_values
from fairlib.agent.trajectory import FLOOR_ACTIONS
from fairlib.agent.floor import instability_floor, majority_vote_curve, floor_rank_correlation
from fairlib.agent.interchange import (
    load_published_extract,
    read_published_trajectories,
    write_published_trajectories,
)

M1, M2 = "claude-haiku-4-5", "claude-sonnet-5"
PRINTED = published_values("fairmedagent").set_index("id")["printed"]


def agrees(id_: str, computed) -> None:
    "`computed` equals the paper's value `id_` at the precision the paper prints it with."
    paper, printed = published_value("fairmedagent", id_), str(PRINTED[id_])
    if printed == "int":
        assert computed == paper, f"{id_}: computed {computed}, paper {paper}"
    else:
        tol = 0.5 * 10 ** -int(printed) + 1e-12
        assert abs(float(computed) - float(paper)) <= tol, (
            f"{id_}: computed {computed}, paper {paper} ({printed} dp)"
        )


@pytest.fixture(scope="module")
def traj():
    t = load_published_extract()
    return t[t.action.isin(FLOOR_ACTIONS)].reset_index(drop=True)


@pytest.fixture(scope="module")
def floors(traj):
    return {m: instability_floor(traj, model=m) for m in (M1, M2)}


def test_extract_shape_and_provenance():
    t = load_published_extract()
    assert t.attrs["source"]["commit"] == "f7636b3f5094ad6a191b6643973493ab82973d6b"
    assert t.attrs["source"]["licence"] == "Apache-2.0"
    reps = t.groupby("model").replicate.nunique().to_dict()
    agrees("floor_pooled.model_1.replicates", reps[M1])
    agrees("floor_pooled.model_2.replicates", reps[M2])
    agrees("floor_pooled.model_1.vignettes", t[t.model == M1].vignette.nunique())
    agrees("floor_pooled.model_2.vignettes", t[t.model == M2].vignette.nunique())
    assert t.condition.unique().tolist() == ["ref_white_man_private"]
    one = load_published_extract("floor16_sonnet")
    assert one.model.unique().tolist() == [M2]
    with pytest.raises(FairlibInputError, match="study"):
        load_published_extract("floor99")
    assert set(t.study) == {
        "floor16",
        "floor16_sonnet",
    }  # the pilot's draw never joins the floor replicates


def test_extract_holds_no_free_text():
    from importlib import resources

    raw = pd.read_csv(
        resources.files("fairlib.agent").joinpath("data/published/decisions.csv").open()
    )
    ids = ["study", "model", "vignette", "condition", "replicate", "scaffold"]
    decisions = ["esi_acuity", "urgency_score", "admit", "escalate_icu", "analgesia_tier",
                 "controlled_substance_caution", "referral", "followup_days"]  # fmt: skip
    assert list(raw.columns) == ids + decisions
    assert all(pd.api.types.is_integer_dtype(raw[c]) for c in decisions)
    assert (
        raw[["study", "model", "vignette"]]
        .apply(lambda s: s.str.fullmatch(r"[A-Za-z0-9_.\-]+"))
        .all()
        .all()
    )


def test_pooled_floor_first_model_is_exact(floors):
    f = floors[M1]
    agrees("floor_pooled.model_1.flips", f.flips)
    agrees("floor_pooled.model_1.comparisons", f.comparisons)
    agrees("floor_pooled.model_1.floor", f.floor)
    assert (f.flips, f.comparisons) == (374, 4320)


def test_pooled_floor_second_model_is_exact(floors):
    f = floors[M2]
    # 16 vignettes x C(6, 2) pairs x 6 actions: arithmetic oracle for the denominator
    assert f.comparisons == 16 * math.comb(6, 2) * 6 == 1440
    assert f.flips == 96
    agrees("floor_pooled.model_2.floor", f.floor)


def test_per_action_floors_and_null_ratios(floors):
    p1 = floors[M1].per_action.set_index("action")
    p2 = floors[M2].per_action.set_index("action")
    agrees("table2.comparisons_per_action", int(p1.comparisons.iloc[0]))
    assert p1.comparisons.nunique() == 1
    agrees("floor_study.pairs_per_cell", math.comb(floors[M1].n_replicates, 2))
    for a in ("icu_escalation", "controlled_substance_caution"):
        agrees(f"floor_action.{a}.model_1", p1.floor[a])
        agrees(f"floor_action.{a}.model_2", p2.floor[a])
    agrees("floor_study.action_spread_factor", round(p1.floor.max() / p1.floor.min()))
    agrees("null_ratio.any_opioid.ratio", p1.null_ratio["any_opioid"])
    agrees(
        "null_ratio.controlled_substance_caution.ratio",
        p1.null_ratio["controlled_substance_caution"],
    )
    agrees("floor_study.acuity_flips", int(p1.flips["high_acuity"]))


def test_prevalence_of_admission_and_icu_escalation(traj):
    share = traj[traj.model == M1].groupby("action").value.mean()
    agrees("prevalence.icu_escalation.pct", round(100 * share["icu_escalation"]))
    agrees("prevalence.admit.pct", round(100 * share["admit"]))


def test_unanimous_and_contested_cells(floors):
    f = floors[M1]
    c = f.cells.assign(rate=f.cells.k / f.cells.n)
    agrees("cells.total", len(c))
    agrees("cells.unanimous", f.n_unanimous)
    agrees("cells.contested", int((~c.unanimous).sum()))
    lo, hi = (
        published_value("fairmedagent", "cells.near_boundary_lo"),
        published_value("fairmedagent", "cells.near_boundary_hi"),
    )
    agrees("cells.near_boundary", int(c.rate.between(lo, hi).sum()))
    agrees("cells.exact_ties", int((c.k * 2 == c.n).sum()))


def test_majority_vote_curve(traj):
    mv = majority_vote_curve(traj, [1, 3, 5], model=M1).set_index("depth")
    for d in (1, 3, 5):
        agrees(f"majority_vote.d{d}.floor", mv.floor[d])
    agrees("majority_vote_summary.share_removed_pct", round(100 * mv.share_removed[5]))
    agrees("majority_vote_summary.remaining_pct", round(100 * mv.floor[5] / mv.floor[1]))


def test_rank_correlation_exact(traj):
    rc, _ = floor_rank_correlation(traj, models=[M1, M2])
    agrees("rank_correlation.rho", rc.rho)
    agrees("rank_correlation.p_exact", rc.p_value)
    agrees("rank_correlation.orderings", rc.n_permutations)
    assert rc.exact


def test_rank_correlation_matches_brute_force(floors):
    "Independent oracle: enumerate all 720 orderings of the six actions by hand."
    a = floors[M1].per_action.set_index("action").floor
    b = floors[M2].per_action.set_index("action").floor.reindex(a.index)
    ra, rb = a.rank().to_numpy(), b.rank().to_numpy()
    rho = np.corrcoef(ra, rb)[0, 1]
    perms = [np.corrcoef(ra, rb[list(p)])[0, 1] for p in itertools.permutations(range(6))]
    p = np.mean(np.abs(perms) >= abs(rho) - 1e-12)
    assert round(rho, 3) == 0.943 and round(p, 4) == 0.0167


def test_pilot_control_arms():
    p = load_published_extract("pilot3ctl")
    p = p[p.action.isin(FLOOR_ACTIONS)]
    arms = sorted(set(p.condition) - {"ref_white_man_private"})
    agrees("pilot.control_arms", len(arms))
    agrees("pilot.vignettes", p.vignette.nunique())
    w = p.pivot_table(index=["vignette", "action"], columns="condition", values="value")
    flips = {a: int((w[a] != w["ref_white_man_private"]).sum()) for a in arms}
    assert len(w) == 24  # 4 vignettes x 6 actions
    # Sec. V-C of the paper: 5, 2 and 1 flips of 24 against the reference (not yet rows of the published CSV)
    assert flips == {"rerender_control": 5, "sham_attribute_control": 2, "rare_token_control": 1}


def test_extract_readme_names_the_files_digest():
    "The data README states the SHA-256 the ledger names the extract by, and it is the file's (recomputed here)."
    import hashlib
    from importlib import resources

    folder = resources.files("fairlib.agent").joinpath("data/published")
    digest = hashlib.sha256(folder.joinpath("decisions.csv").read_bytes()).hexdigest()
    readme = folder.joinpath("README.md").read_text(encoding="utf-8")
    assert digest in readme.replace("\n", "").replace(" ", "")
    assert set(pd.read_csv(folder.joinpath("decisions.csv").open()).study) == {
        "floor16",
        "floor16_sonnet",
        "instability",
        "pilot3",
        "pilot3ctl",
    }


def test_earlier_four_vignette_study_recomputed_from_its_released_decisions():
    """The paper's earlier, smaller floor study (Sec. V-A: 0.136, interval 0.063 to 0.209): the ten replicates of the
    authors' experiments/instability/ folder. Oracle: every unordered replicate pair of every vignette x action cell
    counted here by brute force from the raw rows, and the paper's printed values."""
    from fairlib.agent.floor import floor_bootstrap

    t = load_published_extract("instability")
    t = t[t.action.isin(FLOOR_ACTIONS)]
    assert (t.vignette.nunique(), t.replicate.nunique(), t.condition.unique().tolist()) == (
        4,
        10,
        ["ref_white_man_private"],
    )
    flips = comps = 0
    for _, g in t.groupby(["vignette", "action"]):
        for x, y in itertools.combinations(g.sort_values("replicate").value.tolist(), 2):
            flips, comps = flips + (x != y), comps + 1
    assert comps == 4 * math.comb(10, 2) * 6 == 1080
    f = instability_floor(t)
    assert (f.flips, f.comparisons) == (flips, comps) == (147, 1080)
    agrees("floor_small_study.floor", f.floor)
    b = floor_bootstrap(t, n_resamples=2000, seed=0)
    agrees("floor_small_study.ci_low", b.ci[0])
    agrees("floor_small_study.ci_high", b.ci[1])
    assert set(load_published_extract().study) == {
        "floor16",
        "floor16_sonnet",
    }  # never joins the default floor


# --- the writer of the authors' layout -----------------------------------------------------------------------


def _cmp(t):
    key = ["model", "vignette", "condition", "replicate", "action"]
    cols = key + ["step", "value", "ordinal", "score", "forced", "scaffold"]
    return t[cols].sort_values(key).reset_index(drop=True)


def test_write_then_read_round_trips(tmp_path):
    t = load_published_extract()
    paths = write_published_trajectories(t, tmp_path)
    assert len(paths) == 10 and all(p.name == "trajectories.json" for p in paths)
    back = read_published_trajectories(tmp_path)
    pd.testing.assert_frame_equal(_cmp(t), _cmp(back))
    doc = json.loads(paths[0].read_text())
    rec = doc["trajectories"][0]
    assert set(rec["actions"]) == {"triage", "reassess", "prescribe", "document"}
    assert rec["actions"]["reassess"].keys() == {"admit", "escalate_icu"}


def test_write_round_trips_forced_steps_and_orders(tmp_path):
    t = load_published_extract("floor16")
    t = t[(t.replicate <= 2) & (t.vignette.isin(["v2_triage_clear_01", "v2_doc_clear_01"]))].copy()
    t.loc[t.step == "reassess", "forced"] = True  # the authors mark forcing per step
    orders = t[t.action == "admit"].assign(action="guideline_orders", step="ordering", value=1, ordinal=np.nan,
                                           items="ECG;Troponin", forced=False, score=np.nan)  # fmt: skip
    orders.loc[orders.vignette == "v2_doc_clear_01", ["value", "items"]] = [0, "Urinalysis"]
    t = pd.concat([t, orders], ignore_index=True)
    write_published_trajectories(t, tmp_path)
    back = read_published_trajectories(
        tmp_path, guideline_orders={"v2_triage_clear_01": "ECG", "v2_doc_clear_01": "CBC"}
    )
    pd.testing.assert_frame_equal(_cmp(t), _cmp(back))
    got = back[back.action == "guideline_orders"].set_index(["vignette", "replicate"])["items"]
    assert got[("v2_triage_clear_01", 1)] == "ECG;Troponin"


def test_writer_refusals(tmp_path):
    t = load_published_extract("floor16")
    with pytest.raises(FairlibInputError, match="lacks action"):
        write_published_trajectories(t[t.action != "referral"], tmp_path / "a")
    no_esi = t.copy()
    no_esi.loc[no_esi.action == "high_acuity", "ordinal"] = np.nan
    with pytest.raises(FairlibInputError, match="no ordinal"):
        write_published_trajectories(no_esi, tmp_path / "b")
    extra = pd.concat(
        [t, t[t.action == "referral"].assign(action="stigmatizing_language")], ignore_index=True
    )
    with pytest.raises(FairlibInputError, match="stigmatizing_language"):
        write_published_trajectories(extra, tmp_path / "c")
    write_published_trajectories(t, tmp_path / "d")
    with pytest.raises(FairlibInputError, match="already holds"):
        write_published_trajectories(t, tmp_path / "d")
