"""Benchmark: the out-of-bag refits of B3 (ThresholdShift) and B4 (GreedyRefinement), side by side in one run.

    python benchmarks/bench_oob_refits.py [--oos 20] [--repeats 1] [--jobs 2]

Set-up of the VFR 06 notebook on the synthetic Texas-100X twin: B1 (xgboost, a stratified 30,000-record training
subsample of the 80/20 split, seed 42) scores the selection partition; B3 and B4 are fitted there on the race x age x
sex cells with DI held on the four attributes, B4 with K=30, N=10,000, 200 moves, as in the notebook.

Per estimator, four timings of `fit` (best of `--repeats`):

1. **no check**: `oos_resamples=0`, the fit alone (what the check adds to);
2. **labels, 1 worker (reference)**: the fit alone plus the `--oos` refits done as fairlib did them before, each on the
   text group labels, one after another (the loop is written out here);
3. **codes, 1 worker**: fairlib's fit with the check (`n_jobs=1`): the refits read integer group codes;
4. **codes, `--jobs` workers**: the same with `n_jobs=--jobs` (joblib processes).

Reported: each time, the check's share (time minus "no check"), the speed-ups of 3 and 4 over the reference, and
the bound of 4: the check cannot run faster than its 1-worker time divided by the workers (the cores), so the
bound is "no check" + (3 - 1) / jobs. The script exits 1 unless the out-of-bag draws of 2, 3 and 4 are identical
(the worker count and the codes must not change a number).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone

from fairlib.mitigation import GreedyRefinement, ThresholdShift
from fairlib.mitigation.cells import _DIState
from fairlib.mitigation.thresholds import _values_on_rows
from fairlib.mitigation.reweighing import CELL_ATTRIBUTES, DI_ATTRIBUTES
from fairlib.vfr.baselines import run_baselines
from fairlib.vfr.cohort import load_cohort
from fairlib.vfr.features import make_split
from fairlib.vfr.selection import with_selection


def quiet(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f()


def best(f, repeats):
    out, times = None, []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return out, min(times)


def labels_reference(est, s, y, g, B):
    """The refits as fairlib did them before: on the text labels, one after another; the draws
    as fairlib's (one rng from random_state, one draw per refit, in order)."""
    rng, n = np.random.default_rng(est.random_state), len(s)
    proto = clone(est).set_params(oos_resamples=0)
    di = _DIState(g, list(DI_ATTRIBUTES), 30)  # the groups of the fitting rows, as fairlib's check
    rows = []
    for b in range(B):
        idx = rng.integers(0, n, n)
        oob = np.flatnonzero(np.bincount(idx, minlength=n) == 0)
        f = quiet(lambda: clone(proto).fit(s[idx], y[idx], g.iloc[idx]))
        yh = f.predict(s[oob], g.iloc[oob])
        rows.append(_values_on_rows(di, oob, y, yh.astype(np.int64), "DI"))
    return np.array(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--oos", type=int, default=20, help="out-of-bag refits (the estimators' default: 20)"
    )
    ap.add_argument("--repeats", type=int, default=1, help="timings: best of this many")
    ap.add_argument("--jobs", type=int, default=2, help="workers of the parallel run")
    a = ap.parse_args(argv)
    cohort, _ = load_cohort("auto", n=None, seed=0)
    y = cohort.los_gt3.to_numpy()
    sp = with_selection(make_split(y, "80_20", seed=42), y, fraction=0.1875, seed=42)
    run = quiet(
        lambda: run_baselines(
            cohort, sp, model="xgboost", train_n=30000, baselines=("B1",), seed=42, n_jobs=1
        )
    )
    cols = list(dict.fromkeys([*DI_ATTRIBUTES, *CELL_ATTRIBUTES]))
    s, ys = run.scores[sp.selection], y[sp.selection]
    g = cohort[cols].iloc[sp.selection].reset_index(drop=True)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; selection rows {len(s):,}"
    )
    b3 = ThresholdShift(cell_columns=CELL_ATTRIBUTES, di_columns=DI_ATTRIBUTES)
    b4 = GreedyRefinement(
        b3, n_resamples=30, resample_size=min(10000, len(s)), seed=0, max_iter=200
    )
    rows, ok = [], True
    for name, est in (("B3 ThresholdShift", b3), ("B4 GreedyRefinement", b4)):
        fit = lambda **kw: quiet(lambda: clone(est).set_params(**kw).fit(s, ys, g))
        _, t0 = best(lambda: fit(oos_resamples=0), a.repeats)
        ref, t_ref = best(lambda: labels_reference(est, s, ys, g, a.oos), a.repeats)
        one, t1 = best(lambda: fit(oos_resamples=a.oos, n_jobs=1), a.repeats)
        many, tj = best(lambda: fit(oos_resamples=a.oos, n_jobs=a.jobs), a.repeats)
        d1 = one.constraint_oos_draws_[list(DI_ATTRIBUTES)].to_numpy()
        dj = many.constraint_oos_draws_[list(DI_ATTRIBUTES)].to_numpy()
        same = np.array_equal(d1, dj, equal_nan=True) and np.allclose(
            ref, d1, rtol=0, atol=1e-12, equal_nan=True
        )
        ok &= same
        t_ref += t0
        bound = t0 + (t1 - t0) / a.jobs
        rows.append(
            dict(
                estimator=name,
                no_check_s=t0,
                labels_1_worker_s=t_ref,
                codes_1_worker_s=t1,
                **{f"codes_{a.jobs}_workers_s": tj},
                bound_s=bound,
                speedup_codes=t_ref / t1,
                **{f"speedup_{a.jobs}_workers": t_ref / tj},
                share_of_bound=bound / tj,
                identical_draws=same,
            )
        )
    print(pd.DataFrame(rows).round(2).to_markdown(index=False))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
