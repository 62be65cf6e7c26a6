"""Boundary campaign, the size planner: degenerate settings are refused, and sizes at which a resample cannot
represent the cohort (an audited stratum gets no record) never count as stable.

Starved sizes are found here with an allocation written out in `boundary_cases_reliability.largest_remainder`; an
undefined plan row must be NaN with its reason.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boundary_cases_reliability import GS, YPS, YS, starved  # noqa: E402
from boundary_harness import Err, Undef, Val  # noqa: E402

RNG = np.random.default_rng(11)
N = 400
Y = RNG.integers(0, 2, N)
G = RNG.choice(["a", "b"], N)
YP = RNG.binomial(1, np.where(G == "a", 0.6, 0.4))


def plan(y=Y, yp=YP, g=G, **kw):
    def call():
        import fairlib as fl

        return fl.audit_size_plan(y, yp, sensitive_features=g, **({"metrics": ["SPD"]} | kw))

    return call


def row(r, metric="SPD"):
    p = r.plan
    return p[p.metric == metric].iloc[0]


def starved_sizes_unused(y, g):
    "At every size tried where a stratum is starved, no flip rate is defined, and the plan never lands on it."

    def check(r):
        c = r.curve[r.curve.metric == "SPD"]
        bad = [int(s) for s in c["size"] if starved(y, g, int(s))]
        if not bad:
            return False  # the case is meant to try starved sizes
        flip_undef = c.set_index("size").loc[bad, "n_undefined_flip"]
        need = row(r).n_for_vfr
        return bool((flip_undef == r.n_resamples).all()) and not (
            math.isfinite(need) and int(round(need)) in bad
        )

    return check


def _at_threshold():
    "Two groups of 400 with selection rates 0.625 and 0.375: SPD = 0.25 exactly (binary fractions), the threshold."
    g = np.repeat(["a", "b"], 400)
    yp = np.r_[np.ones(250, int), np.zeros(150, int), np.ones(150, int), np.zeros(250, int)]
    return np.zeros(800, int), yp, g


YT, YPT, GT = _at_threshold()

CASES = [
    *[(f"K-{k}", plan(n_resamples=k), Err("n_resamples")) for k in (2, 10, 28)],
    ("K-29", plan(n_resamples=29), Val(lambda r: r.n_resamples == 29 and len(r.plan) == 1)),
    (
        "K-50-target-0.05",
        plan(n_resamples=50, target_vfr=0.05),
        Err("n_resamples"),
    ),  # needs 59 at 0.05
    ("K-59-target-0.05", plan(n_resamples=59, target_vfr=0.05), Val(lambda r: r.n_resamples == 59)),
    ("K-1", plan(n_resamples=1), Err("n_resamples")),
    ("target-0", plan(target_vfr=0), Err("target_vfr")),
    ("target-0.5", plan(target_vfr=0.5), Err("target_vfr")),
    ("target-nan", plan(target_vfr=float("nan")), Err("target_vfr")),
    ("cv-cutoff-0", plan(cv_cutoff=0), Err("cv_cutoff")),
    ("cv-cutoff-negative", plan(cv_cutoff=-1), Err("cv_cutoff")),
    ("level-1", plan(level=1), Err("level")),
    ("sizes-zero", plan(sizes=[0, 100]), Err("sizes")),
    ("sizes-empty", plan(sizes=[]), Err("sizes")),
    ("sizes-text", plan(sizes=["a"]), Err("sizes")),
    ("sizes-fraction", plan(sizes=[2.5]), Err("sizes")),
    (
        "sizes-starved-are-undefined",
        plan(y=YS, yp=YPS, g=GS, sizes=[20, 50, 100, 200, 300], n_resamples=40),
        Val(starved_sizes_unused(YS, GS)),
    ),
    (
        "sizes-tiny-default-grid",
        plan(y=YS, yp=YPS, g=GS, n_resamples=40),
        Val(
            lambda r: (
                not any(starved(YS, GS, int(s)) for s in r.curve["size"])
                or starved_sizes_unused(YS, GS)(r)
            )
        ),
    ),
    ("one-group", plan(g=np.repeat("a", N), n_resamples=40), Undef(lambda r: row(r).n_required)),
    (
        "one-group-reason",
        plan(g=np.repeat("a", N), n_resamples=40),
        Val(lambda r: bool(row(r).reason)),
    ),
    (
        "at-threshold",
        plan(y=YT, yp=YPT, g=GT, n_resamples=40, thresholds={"SPD": 0.25}),
        Undef(lambda r: row(r).n_required),
    ),
    (
        "at-threshold-reason",
        plan(y=YT, yp=YPT, g=GT, n_resamples=40, thresholds={"SPD": 0.25}),
        Val(lambda r: 0.625 - 0.375 == 0.25 and "threshold" in row(r).reason),
    ),
    (
        "audit-size-plan-K-10",
        lambda: __import__("fairlib").audit(
            Y, YP, sensitive_features=G, size_plan=True, n_resamples=10
        ),
        Err("n_resamples"),
    ),
    (
        "audit-size-plan-weighted",
        lambda: __import__("fairlib").audit(
            Y, YP, sensitive_features=G, size_plan=True, sample_weight=np.ones(N)
        ),
        Err("sample_weight"),
    ),
    (
        "reachable-follows",
        plan(n_resamples=40),
        Val(
            lambda r: (
                bool(row(r).reachable)
                == (math.isfinite(row(r).n_required) and row(r).n_required <= N)
            )
        ),
    ),
]
