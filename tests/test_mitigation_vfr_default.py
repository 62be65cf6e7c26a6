"""The VFR paper's baselines keep their outputs under the default constraint (issue 35: the threshold mitigators
gained `constraint=`; `fairlib/vfr/baselines.py` calls them with the default, demographic parity).

`baseline_outputs()` runs B2-B4 through `fairlib.vfr.baselines.run_baselines` on a small synthetic Texas-100X twin,
and B3 / B4 directly on a toy cohort with the out-of-sample check on, and returns every output the VFR code reads
(audit predictions, thresholds, alphas, the search table, the refinement trace, the out-of-bag constraint table).
The fixture `tests/fixtures/mitigation_vfr_default.json` was written by this same function run against the code
*before* the constraints were added (commit f2fcd27, unpacked with `git archive f2fcd27 fairlib` and put first on
PYTHONPATH): `python tests/test_mitigation_vfr_default.py --write`. Floats are compared after rounding to 12
significant digits (BLAS noise in the last bits is not a change; any real change is).
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "mitigation_vfr_default.json"


def _canon(v):
    "JSON-able canonical form: floats to 12 significant digits, arrays and frames as nested lists."
    if isinstance(v, pd.DataFrame):
        return {
            "columns": [str(c) for c in v.columns],
            "data": [_canon(list(r)) for r in v.itertuples(index=False)],
        }
    if isinstance(v, pd.Series):
        return {"index": [str(i) for i in v.index], "data": _canon(list(v))}
    if isinstance(v, np.ndarray):
        return _canon(v.tolist())
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _canon(x) for k, x in v.items()}
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return "nan" if np.isnan(f) else float(f"{f:.12g}")
    return str(v)


def _toy(n=3000, seed=0, shift=0.25):
    r = np.random.default_rng(seed)
    g = pd.DataFrame(
        dict(
            race=r.choice(["A", "B", "C"], n, p=[0.6, 0.3, 0.1]),
            age_bucket=r.choice(["old", "young"], n),
            sex=r.choice(["F", "M"], n),
            ethnicity=r.choice(["H", "N"], n, p=[0.3, 0.7]),
        )
    )
    s = np.clip(
        r.beta(2, 2, n)
        + shift * (g.race == "A").to_numpy()
        - shift / 2
        + 0.1 * (g.age_bucket == "old").to_numpy(),
        0.001,
        0.999,
    )
    y = (r.random(n) < s).astype(int)
    return s, y, g


def baseline_outputs() -> dict:
    "Every output of B2-B4 that the VFR code reads, on a small synthetic cohort and a toy cohort."
    from fairlib.mitigation.refinement import GreedyRefinement
    from fairlib.mitigation.reweighing import CELL_ATTRIBUTES, DI_ATTRIBUTES
    from fairlib.mitigation.thresholds import ThresholdShift
    from fairlib.vfr.baselines import run_baselines
    from fairlib.vfr.cohort import load_cohort
    from fairlib.vfr.features import make_split
    from fairlib.vfr.selection import with_selection

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cohort, _ = load_cohort("synthetic", n=4000, seed=3)
        y = cohort.los_gt3.to_numpy()
        sp = with_selection(make_split(y, "80_20", seed=42), y)
        run = run_baselines(
            cohort,
            sp,
            model="logistic_regression",
            train_n=1500,
            baselines=("B1", "B2", "B3", "B4"),
            greedy=GreedyRefinement(n_resamples=8, max_iter=15, oos_resamples=3),
            threshold_shift=ThresholdShift(oos_resamples=3),
            n_jobs=1,
        )
        pred = run.predictions
        for m in ("B1", "B2", "B3", "B4"):
            yh = pred.loc[pred.model == m, "y_pred"].to_numpy().astype(np.uint8)
            out[f"run_{m}_y_pred_sha256"] = hashlib.sha256(np.packbits(yh).tobytes()).hexdigest()
            out[f"run_{m}_y_pred_sum"] = int(yh.sum())
        out["run_B2_weights"] = _canon(run.estimators["B2"].cell_table_)
        for m in ("B3", "B4"):
            e = run.estimators[m]
            out[f"run_{m}_thresholds"] = _canon(e.thresholds_)
            out[f"run_{m}_feasible"] = bool(e.feasible_)
            out[f"run_{m}_constraint_oos"] = _canon(e.constraint_oos_.reset_index())
            out[f"run_{m}_constraint_vfr"] = _canon(e.constraint_vfr_)
        out["run_B3_alphas"] = _canon(run.estimators["B3"].alphas_)
        out["run_B3_search"] = _canon(run.estimators["B3"].search_)
        out["run_B4_trace"] = _canon(run.estimators["B4"].result_.trace)

        s, yy, g = _toy()
        kw = dict(cell_columns=CELL_ATTRIBUTES, di_columns=DI_ATTRIBUTES)
        ts = ThresholdShift(**kw, oos_resamples=6, random_state=1).fit(s, yy, g)
        out["toy_B3_thresholds"] = _canon(ts.thresholds_)
        out["toy_B3_alphas"] = _canon(ts.alphas_)
        out["toy_B3_search"] = _canon(ts.search_)
        out["toy_B3_cell_targets"] = _canon(ts.cell_targets_)
        out["toy_B3_targets"] = _canon(ts.targets_)
        out["toy_B3_constraint_oos"] = _canon(ts.constraint_oos_.reset_index())
        out["toy_B3_constraint_oos_draws"] = _canon(ts.constraint_oos_draws_)
        out["toy_B3_constraint_vfr"] = _canon(ts.constraint_vfr_)
        out["toy_B3_predict"] = _canon(ts.predict(s, g))
        gr = GreedyRefinement(
            ThresholdShift(**kw), n_resamples=12, max_iter=25, oos_resamples=4, random_state=2
        )
        gr.fit(s, yy, g)
        out["toy_B4_thresholds"] = _canon(gr.thresholds_)
        out["toy_B4_trace"] = _canon(gr.result_.trace)
        out["toy_B4_result"] = _canon(
            [
                gr.result_.n_moves,
                gr.result_.converged,
                gr.result_.feasible,
                gr.result_.objective,
                gr.result_.min_di,
            ]
        )
        out["toy_B4_constraint_oos"] = _canon(gr.constraint_oos_.reset_index())
        out["toy_B4_constraint_vfr"] = _canon(gr.constraint_vfr_)
        # an infeasible target: the repair phase and the infeasible branch of B3's search
        ts_hard = ThresholdShift(**kw, di_target=0.99, oos_resamples=0).fit(s, yy, g)
        out["toy_B3_infeasible_thresholds"] = _canon(ts_hard.thresholds_)
        out["toy_B3_infeasible_feasible"] = bool(ts_hard.feasible_)
        gr_hard = GreedyRefinement(
            ThresholdShift(**kw), di_target=0.97, n_resamples=6, max_iter=30, oos_resamples=0
        )
        gr_hard.fit(s, yy, g)
        out["toy_B4_repair_trace"] = _canon(gr_hard.result_.trace)
    return out


@pytest.mark.slow
def test_vfr_baselines_unchanged_under_the_default_constraint():
    want = json.loads(FIXTURE.read_text())
    got = _canon(baseline_outputs())
    assert sorted(got) == sorted(want["outputs"])
    for k in want["outputs"]:
        assert got[k] == want["outputs"][k], (
            f"{k} differs from the output of fairlib before constraint= existed"
        )


def test_the_fixture_records_the_code_it_came_from():
    meta = json.loads(FIXTURE.read_text())
    assert meta["written_by"].startswith("tests/test_mitigation_vfr_default.py --write")
    assert meta["commit"] == "f2fcd27"


if __name__ == "__main__":
    if "--write" not in sys.argv:
        raise SystemExit(
            "usage: python tests/test_mitigation_vfr_default.py --write  (with the old code on PYTHONPATH)"
        )
    import fairlib

    if Path(fairlib.__file__).resolve().parent == FIXTURE.parent.parent / "fairlib":
        raise SystemExit(
            "--write must run against the old code (put its unpacked package first on PYTHONPATH)"
        )
    FIXTURE.write_text(
        json.dumps(
            dict(
                written_by="tests/test_mitigation_vfr_default.py --write",
                commit="f2fcd27",
                outputs=_canon(baseline_outputs()),
            ),
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    print(f"wrote {FIXTURE}")
