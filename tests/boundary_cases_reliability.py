"""Boundary campaign, reliability settings: too few resamples, resamples larger than the cohort, resamples too small
for the audited groups, and the stability rule itself.

"Stable" must never follow from too little evidence. Every stability a case accepts is recomputed here from the
flips with statsmodels' Clopper-Pearson bound (`boundary_harness.stability_oracle`); a resample size is judged
against an allocation of the strata computed here (largest remainder, written out below).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boundary_harness import Err, Undef, Val, cp_upper, stability_oracle  # noqa: E402

RNG = np.random.default_rng(7)
N = 400
Y = RNG.integers(0, 2, N)
G = RNG.choice(["a", "b"], N)
YP = RNG.binomial(1, np.where(G == "a", 0.7, 0.3))  # a clear selection-rate gap
KW = dict(sensitive_features=G)


def _fl():
    import fairlib as fl

    return fl


def audit(**kw):
    return lambda: _fl().audit(Y, YP, **KW, **kw)


def vfr(metric="SPD", y=Y, yp=YP, g=G, **kw):
    return lambda: _fl().verdict_flip_rate(y, yp, sensitive_features=g, metric=metric, **kw)


def stability_col(r):
    return (
        r.metrics["vfr_stability"]
        if "vfr_stability" in r.metrics
        else pd.Series([None] * len(r.metrics))
    )


def audit_stabilities_follow(r):
    "Every vfr_stability of the audit is what its flips give (statsmodels' bound); no Stable from a NaN flip rate."
    K = r.vfr_settings["n_resamples"]
    for row, stab in zip(r.metrics.itertuples(), stability_col(r)):
        nu = 0 if pd.isna(row.vfr_n_undefined) else int(row.vfr_n_undefined)
        want = stability_oracle(row.vfr, K - nu, not pd.isna(row.value) and nu <= 0.05 * K)
        if stab != want:
            return False
    return True


def cell_stability_follows(r):
    "A VFRResult's `stability` is what its flips give; never 'Stable' when not auditable."
    want = stability_oracle(r.vfr, r.n_resamples - r.n_undefined, r.auditable)
    return getattr(r, "stability", None) == want


def largest_remainder(sizes, total):
    "Hamilton's method, written out here: floors of the proportional shares, then +1 by the largest remainders."
    sizes = np.asarray(sizes, float)
    share = sizes / sizes.sum() * total
    out = np.floor(share).astype(int)
    for i in np.argsort(-(share - out), kind="stable")[: total - out.sum()]:
        out[i] += 1
    return out


def starved(y, g, size) -> bool:
    "Some (group, label) stratum with records gets none of `size` draws."
    strata = pd.crosstab(g, y).to_numpy().ravel()
    alloc = largest_remainder(strata, size)
    return bool(((strata > 0) & (alloc == 0)).any())


def all_vfr_undefined(r):
    return bool(r.metrics.vfr.isna().all()) and set(stability_col(r)) == {"Undefined"}


def warned_oversize(call):
    "A call that records the warnings of `call`: (result, warning categories)."

    def wrapped():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = call()
        return r, {c.category.__name__ for c in caught}

    return wrapped


def _small_strata_cohort():
    "Group c: 40 records with 2 positives, so at N = 100 its positive stratum gets a share of 0.2 -> 0 records."
    g = np.r_[np.repeat(["a", "b"], 180), np.repeat("c", 40)]
    y = np.r_[RNG.integers(0, 2, 360), np.r_[np.ones(2, int), np.zeros(38, int)]]
    yp = RNG.integers(0, 2, 400)
    return y, yp, g


YS, YPS, GS = _small_strata_cohort()


def _no_positives_group():
    "Group b has no positive: its TPR, and so EOpp, is undefined on the cohort."
    y = np.where(G == "b", 0, Y)
    return y


CASES = [
    # ---- fl.audit(vfr=True): too few resamples are refused ---------------------------------------------------------
    *[
        (f"audit-K-{k}", audit(vfr=True, n_resamples=k), Err("n_resamples"))
        for k in (1, 2, 5, 10, 20, 28)
    ],
    ("audit-K-29", audit(vfr=True, n_resamples=29), Val(audit_stabilities_follow)),
    ("audit-K-200", audit(vfr=True, n_resamples=200), Val(audit_stabilities_follow)),
    (
        "audit-K-1-without-vfr",
        audit(n_resamples=1),
        Val(lambda r: r.vfr_settings is None and "vfr" not in r.metrics),
    ),
    ("audit-K-0", audit(vfr=True, n_resamples=0), Err("n_resamples")),
    ("audit-K-float", audit(vfr=True, n_resamples=29.5), Err("n_resamples")),
    ("audit-K-bool", audit(vfr=True, n_resamples=True), Err("n_resamples")),
    # ---- resample sizes --------------------------------------------------------------------------------------------
    ("audit-N-above-n", audit(vfr=True, n_resamples=40, resample_size=N + 1), Err("resample_size")),
    ("audit-N-10n", audit(vfr=True, n_resamples=40, resample_size=10 * N), Err("resample_size")),
    (
        "audit-N-above-n-allowed",
        warned_oversize(audit(vfr=True, n_resamples=40, resample_size=2 * N, allow_oversize=True)),
        Val(
            lambda out: (
                "ResampleSizeWarning" in out[1] and out[0].vfr_settings["resample_size"] == 2 * N
            )
        ),
    ),
    (
        "audit-N-equals-n",
        audit(vfr=True, n_resamples=40, resample_size=N),
        Val(audit_stabilities_follow),
    ),
    *[
        (
            f"audit-N-{s}-starved",
            audit(vfr=True, n_resamples=40, resample_size=s),
            Val(all_vfr_undefined),
        )
        for s in (1, 2, 3)
    ],
    (
        "audit-N-4-every-stratum-one",  # 4 strata, 4 draws: each gets one record, the flip rate is measured
        audit(vfr=True, n_resamples=40, resample_size=4),
        Val(
            lambda r: (
                not starved(Y, G, 4) and audit_stabilities_follow(r) and r.metrics.vfr.notna().any()
            )
        ),
    ),
    (
        "audit-N-100-small-stratum-starved",
        lambda: _fl().audit(
            YS, YPS, sensitive_features=GS, vfr=True, n_resamples=40, resample_size=100
        ),
        Val(
            lambda r: (
                starved(YS, GS, 100)
                and all_vfr_undefined(r)
                and "too small" in " ".join(r.metrics.vfr_reason)
            )
        ),
    ),
    ("audit-N-0", audit(vfr=True, n_resamples=40, resample_size=0), Err("resample_size")),
    ("audit-N-negative", audit(vfr=True, n_resamples=40, resample_size=-5), Err("resample_size")),
    ("audit-N-float", audit(vfr=True, n_resamples=40, resample_size=2.5), Err("resample_size")),
    ("audit-N-string", audit(vfr=True, n_resamples=40, resample_size="100"), Err("resample_size")),
    (
        "audit-oversize-string",
        audit(vfr=True, n_resamples=40, allow_oversize="yes"),
        Err("allow_oversize"),
    ),
    # ---- cells that cannot be stable -------------------------------------------------------------------------------
    (
        "audit-one-group",
        lambda: _fl().audit(Y, YP, sensitive_features=np.repeat("a", N), vfr=True, n_resamples=40),
        Val(all_vfr_undefined),
    ),
    (
        "audit-point-undefined",
        lambda: _fl().audit(_no_positives_group(), YP, **KW, vfr=True, n_resamples=40),
        Val(lambda r: r.metrics.set_index("metric").loc["EOpp", "vfr_stability"] == "Undefined"),
    ),
    (
        "audit-not-auditable-small-group",  # group c's 2 positives are often all missing from a resample
        lambda: _fl().audit(
            YS, YPS, sensitive_features=GS, vfr=True, n_resamples=100, min_support=30
        ),
        Val(audit_stabilities_follow),
    ),
    # ---- verdict_flip_rate: its numbers, and `stability` beside the paper's `stable` -------------------------------
    (
        "cell-K-1",
        vfr(n_resamples=1),
        Val(lambda r: r.stability == "Undetermined" and cell_stability_follows(r)),
    ),
    (
        "cell-K-5",
        vfr(n_resamples=5),
        Val(lambda r: r.stability != "Stable" and cell_stability_follows(r)),
    ),
    (
        "cell-K-28",
        vfr(n_resamples=28),
        Val(lambda r: r.stability != "Stable" and cell_stability_follows(r)),
    ),
    ("cell-K-29", vfr(n_resamples=29), Val(cell_stability_follows)),
    (
        "cell-K-500",
        vfr(n_resamples=500),
        Val(lambda r: r.vfr == 0 and cell_stability_follows(r) and r.stability == "Stable"),
    ),
    (
        "cell-paper-rule-kept",  # the VFR paper's point rule stays for its tables: VFR <= 0.10
        vfr(n_resamples=5),
        Val(lambda r: r.stable == (r.auditable and r.vfr <= 0.10)),
    ),
    ("cell-N-above-n", vfr(n_resamples=40, resample_size=N + 1), Err("resample_size")),
    (
        "cell-N-above-n-allowed",
        warned_oversize(vfr(n_resamples=40, resample_size=N + 1, allow_oversize=True)),
        Val(lambda out: "ResampleSizeWarning" in out[1] and out[0].resample_size == N + 1),
    ),
    ("cell-N-1", vfr(n_resamples=40, resample_size=1), Undef(lambda r: r.vfr)),
    (
        "cell-N-1-stability",
        vfr(n_resamples=40, resample_size=1),
        Val(lambda r: r.stability == "Undefined"),
    ),
    (
        "cell-N-2-index",
        vfr(n_resamples=40, resample_size=2, method="index"),
        Undef(lambda r: r.vfr),
    ),
    (
        "cell-N-3-cal",
        vfr(metric="Cal", n_resamples=40, resample_size=3, y_prob=np.linspace(0, 1, N)),
        Undef(lambda r: r.vfr),
    ),
    (
        "cell-N-starved-small-group",
        vfr(y=YS, yp=YPS, g=GS, n_resamples=40, resample_size=100),
        Undef(lambda r: r.vfr),
    ),
    (
        "cell-N-not-starved",
        vfr(n_resamples=40, resample_size=100),
        Val(lambda r: not starved(Y, G, 100) and cell_stability_follows(r)),
    ),
    ("cell-K-0", vfr(n_resamples=0), Err("n_resamples")),
    (
        "cell-one-group",
        vfr(g=np.repeat("a", N), n_resamples=40),
        Val(lambda r: r.stability == "Undefined"),
    ),
    # ---- the rule itself -------------------------------------------------------------------------------------------
    *[
        (
            f"rule-{k}-of-{n}",
            (lambda k=k, n=n: _fl().reliability.verdict_stability(k, n)),
            Val(lambda r, k=k, n=n: r[0] == stability_oracle(k / n, n)),
        )
        for k, n in (
            (0, 29),
            (0, 28),
            (0, 1),
            (3, 100),
            (9, 200),
            (11, 100),
            (45, 500),
            (60, 500),
            (1, 60),
        )
    ],
    (
        "rule-no-defined",
        lambda: _fl().reliability.verdict_stability(0, 0),
        Val(lambda r: r[0] == "Undefined"),
    ),
    ("rule-flips-above-half", lambda: _fl().reliability.verdict_stability(6, 10), Err("n_flips")),
    ("rule-flips-negative", lambda: _fl().reliability.verdict_stability(-1, 10), Err("n_flips")),
    ("rule-defined-float", lambda: _fl().reliability.verdict_stability(0, 29.5), Err("n_defined")),
    ("rule-tau-0", lambda: _fl().reliability.verdict_stability(0, 29, tau=0), Err("tau")),
    ("rule-tau-0.6", lambda: _fl().reliability.verdict_stability(0, 29, tau=0.6), Err("tau")),
    (
        "rule-tau-nan",
        lambda: _fl().reliability.verdict_stability(0, 29, tau=float("nan")),
        Err("tau"),
    ),
    (
        "rule-level-1",
        lambda: _fl().reliability.verdict_stability(0, 29, confidence_level=1),
        Err("confidence_level"),
    ),
    (
        "rule-level-0",
        lambda: _fl().reliability.verdict_stability(0, 29, confidence_level=0),
        Err("confidence_level"),
    ),
    *[
        (
            f"min-K-tau-{tau}-level-{lvl}",
            (lambda tau=tau, lvl=lvl: _fl().reliability.min_resamples_for_stability(tau, lvl)),
            # the fewest K with (1 - tau)^K <= 1 - level, counted here, and checked against the bound at K and K - 1
            Val(
                lambda r, tau=tau, lvl=lvl: (
                    r == next(k for k in range(1, 10**5) if (1 - tau) ** k <= 1 - lvl + 1e-15)
                    and cp_upper(0, r, lvl) <= tau + 1e-12
                    and cp_upper(0, r - 1, lvl) > tau
                )
            ),
        )
        for tau, lvl in ((0.10, 0.95), (0.05, 0.95), (0.10, 0.99), (0.20, 0.90))
    ],
    ("min-K-tau-0.5", lambda: _fl().reliability.min_resamples_for_stability(0.5), Err("tau")),
    (
        "min-K-level-1.5",
        lambda: _fl().reliability.min_resamples_for_stability(0.1, 1.5),
        Err("confidence_level"),
    ),
]
