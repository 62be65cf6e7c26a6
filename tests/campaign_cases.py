"""The bad- and edge-input campaign of issue 24: 160+ calls on the public API, each with its contract.

A case is `(id, call, contract)`. `call` is a zero-argument function. The contract is one of
- `Err("arg", ...)`: a clear refusal: a ValueError/TypeError/KeyError whose message names one of the arguments;
- `Undef(extract)`: the quantity is undefined: `extract(result)` is NaN (or None) -- a clear refusal is also accepted;
- `Val(check)`: a legitimate result: `check(result)` is true.

`classify(case)` sorts an outcome into clear / legitimate / obscure / silent, the four counts of the closing note:
clear = the refusal or undefined value the contract asks for; legitimate = the correct value; obscure = an exception
that does not name the argument (or any exception where a value is due); silent = a value where a refusal or NaN is
due, or a wrong value. tools/campaign.py prints the counts for any checkout (run it on an older commit for "before").
Cases are written against names that exist in both 0.1 and 0.2 (or through their 0.1 aliases).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd


class Err:
    def __init__(self, *args):
        self.args = args


@dataclass
class Undef:
    extract: object = None


@dataclass
class Val:
    check: object


def _isnan(v):
    if v is None:
        return True
    try:
        return bool(np.all(np.isnan(np.asarray(v, dtype=float))))
    except (TypeError, ValueError):
        return False


def value_of(r):
    if isinstance(r, float):  # MetricValue is a float
        return float(r)
    for a in ("value", "score", "vfr", "kappa", "rho", "floor", "p_value", "skew", "alpha"):
        v = getattr(r, a, None)
        if v is not None and not callable(v):
            return v
    return r


def classify(call, contract):
    "Return (kind, detail): kind in clear, legitimate, obscure, silent."
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call()
    except Exception as e:  # noqa: BLE001 -- classifying every outcome is the point
        msg = f"{type(e).__name__}: {e}"
        if isinstance(contract, Err):
            named = isinstance(e, (ValueError, TypeError, KeyError, LookupError, OSError)) and any(
                f"`{a}`" in str(e)
                or f"`{a}[" in str(e)
                or f"'{a}'" in str(e)
                or f" {a} " in f" {e} "
                or f"{a}=" in str(e)
                for a in contract.args
            )
            return ("clear" if named else "obscure"), msg
        if isinstance(contract, Undef):
            return (
                "clear" if isinstance(e, ValueError) and "argument `" in str(e) else "obscure"
            ), msg
        return "obscure", msg
    if isinstance(contract, Err):
        return "silent", f"returned {str(value_of(r))[:60]}"
    if isinstance(contract, Undef):
        v = contract.extract(r) if contract.extract else value_of(r)
        return ("legitimate" if _isnan(v) else "silent"), f"returned {str(v)[:60]}"
    ok = False
    try:
        ok = bool(contract.check(r))
    except Exception as e:  # noqa: BLE001
        return "silent", f"check raised {type(e).__name__}: {e}"
    return ("legitimate" if ok else "silent"), f"returned {str(value_of(r))[:60]}"


# ---------------------------------------------------------------------------------------------------------------
# shared inputs
RNG = np.random.default_rng(0)
N = 400
Y = RNG.integers(0, 2, N)
YP = RNG.integers(0, 2, N)
SF = RNG.choice(["a", "b"], N)
PROB = RNG.random(N)
NAN_PRED = YP.astype(float)
NAN_PRED[3] = np.nan


def _audit_json(mutate):
    import fairlib as fl

    d = json.loads(fl.audit(Y, YP, sensitive_features=SF).to_json())
    mutate(d)
    return json.dumps(d)


def _flip_verdict(d):
    row = d["metrics"]["__frame__"]["data"][0]
    row[4] = "Fail" if row[4] == "Pass" else "Pass"


def _value_abc(d):
    d["metrics"]["__frame__"]["data"][0][1] = "abc"


def _n_negative(d):
    d["n"] = -5


def _included_no(d):
    d["groups"]["__frame__"]["data"][0][-1] = "no"


def _mat(nan=False, boolean=False, k=13, n=60, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.2, 0.8, (n, k))
    if nan:
        X[2, 3] = np.nan
    if boolean:
        return X > 0.5
    return X


NAMES = [f"v{i}" for i in range(13)]


def _P(nan=False, boolean=False):
    from fairlib.mfarm.instrument import PROMPT_VARIANTS

    cols = list(PROMPT_VARIANTS)
    X = _mat(nan=nan, boolean=boolean, k=len(cols))
    return pd.DataFrame(X, columns=cols)


def _axes(dup3=False, missing2=False):
    a1 = pd.DataFrame(
        dict(
            model=["m", "m"],
            metric=["DI", "SPD"],
            attribute=["race", "race"],
            vfr=[0.0, 0.02],
            dominant_verdict=["Pass", "Pass"],
        )
    )
    a2 = pd.DataFrame(
        dict(
            model=["m", "m"],
            metric=["DI", "SPD"],
            attribute=["race", "race"],
            n_star=[1000.0, 2000.0],
        )
    )
    if missing2:
        a2 = a2.iloc[:1].assign(attribute=["Race"])
    a3 = pd.DataFrame(dict(model=["m", "m"], metric=["DI", "SPD"], kappa=[0.8, 0.9]))
    if dup3:
        a3 = pd.concat([a3, a3.iloc[:1]])
    return a1, a2, a3


def _traj():
    from fairlib.agent.simulate import simulate_trajectories

    s = simulate_trajectories(n_vignettes=4, n_replicates=3, seed=0)
    return getattr(s, "trajectories", s)


def cases():
    import fairlib as fl
    from fairlib import core, stats
    from fairlib import metrics as M
    from fairlib.reliability import verdict_flip_rate
    from fairlib.vfr import axis2, axis3, tiers, axis1
    from fairlib.mfarm import submetrics as S, score as SC
    from fairlib.agent import metrics as AM, floor as AF, bands as AB
    from fairlib.mitigation import ThresholdShift, IntersectionalReweighing
    from fairlib import suppression as SUP, counts as CT

    kw = dict(sensitive_features=SF)
    dpd = M.demographic_parity_difference
    out = [
        # --- group metrics and the audit
        (
            "dpd-min_support-0",
            lambda: dpd(Y, YP, **kw, min_support=0),
            Val(lambda r: float(r) == float(dpd(Y, YP, **kw, min_support=1))),
        ),  # 0 keeps every group
        ("dpd-min_support-neg", lambda: dpd(Y, YP, **kw, min_support=-5), Err("min_support")),
        ("dpd-min_support-frac", lambda: dpd(Y, YP, **kw, min_support=2.5), Err("min_support")),
        ("dpd-min_support-bool", lambda: dpd(Y, YP, **kw, min_support=True), Err("min_support")),
        ("dpd-y_pred-nan", lambda: dpd(Y, NAN_PRED, **kw), Err("y_pred")),
        ("dpd-y_pred-2", lambda: dpd(Y, np.r_[YP[:-1], 2], **kw), Err("y_pred")),
        (
            "dpd-length",
            lambda: dpd(Y[:-1], YP, **kw),
            Err("y_true", "y_pred", "sensitive_features"),
        ),
        ("dpd-sf-none", lambda: dpd(Y, YP, sensitive_features=None), Err("sensitive_features")),
        (
            "dpd-weight-neg",
            lambda: dpd(Y, YP, **kw, sample_weight=-np.ones(N)),
            Err("sample_weight"),
        ),
        (
            "dpd-weight-nan",
            lambda: dpd(Y, YP, **kw, sample_weight=np.r_[np.ones(N - 1), np.nan]),
            Err("sample_weight"),
        ),
        (
            "dpd-weight-len",
            lambda: dpd(Y, YP, **kw, sample_weight=np.ones(N - 1)),
            Err("sample_weight"),
        ),
        (
            "dpd-empty",
            lambda: dpd([], [], sensitive_features=[]),
            Err("y_true", "y_pred", "sensitive_features"),
        ),
        ("dpd-one-group", lambda: dpd(Y, YP, sensitive_features=np.repeat("a", N)), Undef()),
        ("dpd-small-groups", lambda: dpd(Y[:40], YP[:40], sensitive_features=SF[:40]), Undef()),
        (
            "dpd-ok",
            lambda: dpd(Y, YP, **kw),
            Val(lambda r: abs(float(r) - abs(YP[SF == "a"].mean() - YP[SF == "b"].mean())) < 1e-12),
        ),
        ("di-ok", lambda: M.disparate_impact_ratio(Y, YP, **kw), Val(lambda r: 0 < float(r) <= 1)),
        (
            "eod-y_true-str",
            lambda: M.equalized_odds_difference(np.where(Y == 1, "yes", "no"), YP, **kw),
            Err("y_true", "pos_label"),
        ),
        ("ff-threshold-5", lambda: fl.four_fifths_rule(Y, YP, **kw, threshold=5), Err("threshold")),
        (
            "ff-threshold-neg",
            lambda: fl.four_fifths_rule(Y, YP, **kw, threshold=-0.1),
            Err("threshold"),
        ),
        (
            "ff-threshold-nan",
            lambda: fl.four_fifths_rule(Y, YP, **kw, threshold=float("nan")),
            Err("threshold"),
        ),
        (
            "ff-one-group",
            lambda: fl.four_fifths_rule(Y, YP, sensitive_features=np.repeat("a", N)),
            Undef(lambda r: r.passed),
        ),
        ("cal-prob-gt1", lambda: M.calibration_gap(Y, PROB + 1, **kw), Err("y_prob")),
        ("cal-prob-bool", lambda: M.calibration_gap(Y, PROB > 0.5, **kw), Err("y_prob")),
        ("cal-n_bins-0", lambda: M.calibration_gap(Y, PROB, **kw, n_bins=0), Err("n_bins")),
        (
            "cal-method",
            lambda: M.calibration_gap(Y, PROB, **kw, calibration="nope"),
            Err("calibration"),
        ),
        ("audit-metric", lambda: fl.audit(Y, YP, **kw, metrics=["nope"]), Err("metrics")),
        (
            "audit-prob-nan",
            lambda: fl.audit(Y, YP, **kw, y_prob=np.r_[PROB[:-1], np.nan]),
            Err("y_prob"),
        ),
        (
            "audit-min_support-neg",
            lambda: fl.audit(Y, YP, **kw, min_support=-1),
            Err("min_support"),
        ),
        (
            "audit-thresholds-bad",
            lambda: fl.audit(Y, YP, **kw, thresholds={"DI": "x"}),
            Err("thresholds"),
        ),
        (
            "audit-thresholds-unknown",
            lambda: fl.audit(Y, YP, **kw, thresholds={"NOPE": 0.1}),
            Err("thresholds"),
        ),
        (
            "table-n_bins-0",
            lambda: fl.group_table(Y, YP, **kw, y_prob=PROB, n_bins=0),
            Err("n_bins"),
        ),
        (
            "vfr-n_resamples-0",
            lambda: verdict_flip_rate(Y, YP, **kw, metric="DI", n_resamples=0),
            Err("n_resamples"),
        ),
        (
            "vfr-size-0",
            lambda: verdict_flip_rate(Y, YP, **kw, metric="DI", resample_size=0),
            Err("resample_size"),
        ),
        ("vfr-metric", lambda: verdict_flip_rate(Y, YP, **kw, metric="nope"), Err("metric")),
        ("vfr-seed-neg", lambda: verdict_flip_rate(Y, YP, **kw, metric="DI", seed=-1), Err("seed")),
        (
            "vfr-one-group",
            lambda: verdict_flip_rate(Y, YP, sensitive_features=np.repeat("a", N), metric="DI"),
            Undef(),
        ),
        (
            "vfr-ok",
            lambda: verdict_flip_rate(Y, YP, **kw, metric="SPD", n_resamples=50),
            Val(lambda r: 0 <= r.vfr <= 1),
        ),
        ("metric-unknown", lambda: CT.audit_metric("nope"), Err("name", "metric")),
        (
            "count_table-bins-0",
            lambda: CT.count_table(Y, YP, SF, y_prob=PROB, n_bins=0),
            Err("n_bins"),
        ),
        ("metricvalue-str", lambda: M.MetricValue("abc", metric="DI"), Err("value")),
        (
            "from_json-flipped",
            lambda: fl.AuditResult.from_json(_audit_json(_flip_verdict)),
            Err("verdict", "metrics"),
        ),
        (
            "from_json-abc",
            lambda: fl.AuditResult.from_json(_audit_json(_value_abc)),
            Err("value", "metrics"),
        ),
        ("from_json-n-neg", lambda: fl.AuditResult.from_json(_audit_json(_n_negative)), Err("n")),
        (
            "from_json-included-no",
            lambda: fl.AuditResult.from_json(_audit_json(_included_no)),
            Err("included", "groups"),
        ),
        (
            "from_json-ok",
            lambda: fl.AuditResult.from_json(_audit_json(lambda d: None)),
            Val(lambda r: r.n == N),
        ),
        # --- statistics
        ("fdr-alpha-5", lambda: stats.fdr_adjust([0.01, 0.2], alpha=5), Err("alpha")),
        ("fdr-alpha-0", lambda: stats.fdr_adjust([0.01, 0.2], alpha=0), Err("alpha")),
        ("fdr-alpha-neg", lambda: stats.fdr_adjust([0.01, 0.2], alpha=-1), Err("alpha")),
        ("fdr-p-gt1", lambda: stats.fdr_adjust([0.01, 1.5]), Err("p_values")),
        (  # an undefined test stays NaN and leaves the family (documented), never counted as a rejection
            "fdr-p-nan",
            lambda: stats.fdr_adjust([0.01, np.nan]),
            Val(
                lambda r: (
                    r.in_family.tolist() == [True, False]
                    and r.family_size.iloc[0] == 1
                    and not r.reject.iloc[1]
                )
            ),
        ),
        ("fdr-method", lambda: stats.fdr_adjust([0.01, 0.2], method="xx"), Err("method")),
        (
            "fdr-ok",
            lambda: stats.fdr_adjust([0.01, 0.04], method="bh"),
            Val(lambda r: np.allclose(r["p_adjusted"], _bh([0.01, 0.04]))),
        ),
        ("spearman-nan", lambda: stats.spearman_exact([1, 2, np.nan, 4], [1, 2, 3, 4]), Err("x")),
        ("spearman-inf", lambda: stats.spearman_exact([1, 2, 3, 4], [1, 2, np.inf, 4]), Err("y")),
        ("spearman-length", lambda: stats.spearman_exact([1, 2, 3], [1, 2, 3, 4]), Err("x", "y")),
        (
            "spearman-constant",
            lambda: stats.spearman_exact([1, 1, 1, 1], [1, 2, 3, 4]),
            Undef(lambda r: r.rho),
        ),
        (
            "spearman-ok",
            lambda: stats.spearman_exact([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]),
            Val(lambda r: abs(r.rho - 0.8) < 1e-12),
        ),
        ("mcnemar-neg", lambda: stats.mcnemar_exact(-1, 3), Err("b")),
        ("mcnemar-frac", lambda: stats.mcnemar_exact(2.5, 3), Err("b")),
        ("mcnemar-zero", lambda: stats.mcnemar_exact(0, 0), Undef(lambda r: r.p_value)),
        (
            "mcnemar-ok",
            lambda: stats.mcnemar_exact(30, 10),
            Val(
                lambda r: (
                    abs(r.p_value - __import__("scipy").stats.binomtest(10, 40).pvalue) < 1e-12
                )
            ),
        ),
        (
            "wcb-inf",
            lambda: stats.wild_cluster_bootstrap(
                np.r_[np.ones(9), np.inf], np.arange(10), signed=True
            ),
            Err("y"),
        ),
        (
            "wcb-nan",
            lambda: stats.wild_cluster_bootstrap(
                np.r_[np.ones(9), np.nan], np.arange(10), signed=True
            ),
            Err("y"),
        ),
        (
            "wcb-cl-1",
            lambda: stats.wild_cluster_bootstrap(
                np.ones(10), np.arange(10), signed=True, confidence_level=1
            ),
            Err("confidence_level"),
        ),
        (
            "wcb-weights",
            lambda: stats.wild_cluster_bootstrap(
                np.ones(10), np.arange(10), signed=True, weights="nope"
            ),
            Err("weights"),
        ),
        (
            "wcb-n_resamples-0",
            lambda: stats.wild_cluster_bootstrap(
                np.ones(10), np.arange(10), signed=True, n_resamples=0
            ),
            Err("n_resamples"),
        ),
        (
            "wcb-length",
            lambda: stats.wild_cluster_bootstrap(np.ones(10), np.arange(9), signed=True),
            Err("clusters", "y"),
        ),
        ("weight_matrix-0", lambda: stats.weight_matrix(0), Err("n_clusters")),
        (
            "cluster_bootstrap-0",
            lambda: stats.cluster_bootstrap(np.ones((5, 2)), n_resamples=0),
            Err("n_resamples"),
        ),
        (
            "cluster_bootstrap-cl",
            lambda: stats.cluster_bootstrap(np.ones((5, 2)), confidence_level=2),
            Err("confidence_level"),
        ),
        (
            "perm-nan",
            lambda: stats.paired_permutation_test(np.r_[np.ones(5), np.nan], signed=True),
            Err("differences"),
        ),
        (
            "perm-inf",
            lambda: stats.paired_permutation_test(np.r_[np.ones(5), np.inf], signed=True),
            Err("differences"),
        ),
        # --- core utilities
        (
            "hash-concat",
            lambda: core.content_hash(b"a", b"bc") != core.content_hash(b"abbc"),
            Val(bool),
        ),
        ("hash-type", lambda: core.content_hash(1) != core.content_hash("1"), Val(bool)),
        (
            "cell_seed-type",
            lambda: (
                core.cell_seed(0, 1).entropy != core.cell_seed(0, "1").entropy
                or core.cell_seed(0, 1).spawn_key != core.cell_seed(0, "1").spawn_key
                or list(core.cell_seed(0, 1).generate_state(4))
                != list(core.cell_seed(0, "1").generate_state(4))
            ),
            Val(bool),
        ),
        ("rng-neg", lambda: core.check_rng(-1), Err("seed")),
        ("rng-bool", lambda: core.check_rng(True), Err("seed")),
        ("rng-str", lambda: core.check_rng("1"), Err("seed")),
        ("largest_remainder-neg", lambda: core.largest_remainder([-1, 2], 3), Err("sizes")),
        ("largest_remainder-total", lambda: core.largest_remainder([1, 2], -3), Err("total")),
        (
            "largest_remainder-ok",
            lambda: core.largest_remainder([1, 1, 1], 10),
            Val(lambda r: sorted(r.tolist()) == [3, 3, 4]),
        ),
        (
            "percentile-cl",
            lambda: core.percentile_interval([1, 2, 3], confidence_level=1.5),
            Err("confidence_level"),
        ),
        ("majority-empty", lambda: core.majority_vote([]), Undef()),
        ("majority-tie", lambda: core.majority_vote([0, 1]), Undef()),
        ("mask_count-5", lambda: core.mask_count(5), Val(lambda r: "5" not in str(r))),
        (
            "suppress-threshold-0",
            lambda: SUP.suppress_small_cells(pd.DataFrame({"n": [5, 20]}), threshold=0),
            Err("threshold"),
        ),
        (
            "mask_text-threshold",
            lambda: SUP.mask_text_counts("n = 5", threshold=-1),
            Err("threshold"),
        ),
        ("suppress-frame", lambda: SUP.suppress_small_cells([1, 2]), Err("df")),
        # --- VFR
        (
            "kappa-negative-count",
            lambda: axis3.fleiss_kappa(np.array([[2, -1], [1, 0]])),
            Err("table"),
        ),
        (
            "kappa-unequal-raters",
            lambda: axis3.fleiss_kappa(np.array([[2, 1], [2, 0], [1, 1]])),
            Val(lambda r: -1 <= r.kappa <= 1),
        ),  # a fold without a verdict rates an item fewer times: allowed
        (
            "kappa-one-category",
            lambda: axis3.fleiss_kappa(np.array([[3, 0], [3, 0], [3, 0]])),
            Undef(lambda r: r.kappa),
        ),
        (
            "kappa-ok",
            lambda: axis3.fleiss_kappa(np.array([[3, 0], [0, 3], [2, 1], [1, 2]])),
            Val(
                lambda r: (
                    abs(r.kappa - _fleiss_statsmodels([[3, 0], [0, 3], [2, 1], [1, 2]])) < 1e-12
                )
            ),
        ),
        ("landis-1.5", lambda: axis3.landis_koch(1.5), Err("kappa")),
        ("landis-str", lambda: axis3.landis_koch("high"), Err("kappa")),
        ("folds-1", lambda: axis3.hospital_folds(np.arange(100) % 30, n_folds=1), Err("n_folds")),
        (
            "folds-too-many",
            lambda: axis3.hospital_folds(np.arange(100) % 3, n_folds=20),
            Err("n_folds", "hospital"),
        ),
        ("tier-kappa-1.5", lambda: tiers.reliability_tier([0.05], [100.0], [1.5]), Err("kappa")),
        ("tier-nstar-neg", lambda: tiers.reliability_tier([0.05], [-3.0], [0.8]), Err("n_star")),
        ("tier-nstar-frac", lambda: tiers.reliability_tier([0.05], [2.5], [0.8]), Err("n_star")),
        (
            "tier-degenerate-str",
            lambda: tiers.reliability_tier([0.05], [100.0], [0.8], kappa_degenerate=["no"]),
            Err("kappa_degenerate"),
        ),
        (
            "tier-degenerate-len",
            lambda: tiers.reliability_tier(
                [0.05, 0.05], [100.0, 100.0], [0.8, 0.8], kappa_degenerate=[False]
            ),
            Err("kappa_degenerate"),
        ),
        ("tier-vfr-1.5", lambda: tiers.reliability_tier([1.5], [100.0], [0.8]), Err("vfr")),
        (
            "tier-tau-2",
            lambda: tiers.reliability_tier([0.05], [100.0], [0.8], tau_vfr=2),
            Err("tau_vfr"),
        ),
        (
            "tier-ok",
            lambda: tiers.reliability_tier([0.0], [100.0], [0.9]),
            Val(lambda r: r["tier"].iloc[0] == "Practical-Stability"),
        ),
        ("table-dup-axis3", lambda: tiers.reliability_table(*_axes(dup3=True)), Err("axis3")),
        (
            "table-missing-axis2",
            lambda: tiers.reliability_table(*_axes(missing2=True)),
            Val(lambda r: len(r) == 2 and (r["tier"] != "Caution-Required").all()),
        ),
        (
            "sizes-empty",
            lambda: axis2.summarise_audit_sizes(np.ones((0, 5)), [], "DI", value=0.9),
            Err("sizes", "values"),
        ),
        (
            "sizes-cv-neg",
            lambda: axis2.summarise_audit_sizes(
                np.ones((2, 5)), [10, 20], "DI", value=0.9, cv_cutoff=-1
            ),
            Err("cv_cutoff"),
        ),
        (
            "sizes-shape",
            lambda: axis2.summarise_audit_sizes(np.ones((3, 5)), [10, 20], "DI", value=0.9),
            Err("values", "sizes"),
        ),
        (
            "sizes-first-qualifies",
            lambda: axis2.summarise_audit_sizes(
                np.full((3, 30), 0.9) + np.linspace(0, 1e-4, 30)[None, :],
                [100, 200, 400],
                "DI",
                value=0.9,
            ),
            Val(lambda r: r.n_star == 100),
        ),
        (
            "sizes-unsorted",
            lambda: axis2.summarise_audit_sizes(np.ones((2, 5)), [20, 10], "DI", value=0.9),
            Err("sizes"),
        ),
        (
            "sens-sizes-empty",
            lambda: axis2.audit_size_sensitivity(Y, YP, **kw, metric="DI", sizes=[]),
            Err("sizes"),
        ),
        (
            "sens-sizes-0",
            lambda: axis2.audit_size_sensitivity(Y, YP, **kw, metric="DI", sizes=[0, 100]),
            Err("sizes"),
        ),
        ("axis1-tau", lambda: axis1.axis1_summary(_grid(), tau_vfr=-1), Err("tau_vfr")),
        (
            "axis1-tau-nan",
            lambda: axis1.axis1_summary(_grid(), tau_vfr=float("nan")),
            Err("tau_vfr"),
        ),
        # --- mFARM
        (
            "md-nan",
            lambda: S.mean_difference(_mat(nan=True), NAMES),
            Err("X") if False else Undef(lambda r: r.score),
        ),
        (
            "vh-nan",
            lambda: S.variance_heterogeneity(_mat(nan=True), NAMES),
            Undef(lambda r: r.score),
        ),
        ("ad-nan", lambda: S.absolute_deviation(_mat(nan=True), NAMES), Undef(lambda r: r.score)),
        (
            "cd-nan",
            lambda: S.correlation_difference(_mat(nan=True), NAMES),
            Undef(lambda r: r.score),
        ),
        ("ks-nan", lambda: S.ks_distribution(_mat(nan=True), NAMES), Undef(lambda r: r.score)),
        ("md-bool", lambda: S.mean_difference(_mat(boolean=True), NAMES), Err("X")),
        ("md-names-len", lambda: S.mean_difference(_mat(), NAMES[:-1]), Err("names", "X")),
        ("md-alpha-0", lambda: S.mean_difference(_mat(), NAMES, alpha=0), Err("alpha")),
        ("md-alpha-1.5", lambda: S.mean_difference(_mat(), NAMES, alpha=1.5), Err("alpha")),
        (
            "md-wilcoxon",
            lambda: S.mean_difference(_mat(), NAMES, wilcoxon_method="nope"),
            Err("wilcoxon_method"),
        ),
        (
            "vh-test",
            lambda: S.variance_heterogeneity(_mat(), NAMES, variance_test="nope"),
            Err("variance_test"),
        ),
        ("ks-method", lambda: S.ks_distribution(_mat(), NAMES, ks_method="nope"), Err("ks_method")),
        ("md-1d", lambda: S.mean_difference(np.ones(14), NAMES), Err("X")),
        (
            "md-equal-cols",
            lambda: S.mean_difference(np.repeat(_mat(k=1), 13, axis=1), NAMES),
            Val(lambda r: r.score == 1.0),
        ),
        ("gm-empty", lambda: SC.geometric_mean_score([]), Undef()),
        ("gm-1.5", lambda: SC.geometric_mean_score([0.5, 1.5]), Err("scores")),
        ("gm-neg", lambda: SC.geometric_mean_score([-0.1, 0.5]), Err("scores")),
        ("gm-nan", lambda: SC.geometric_mean_score([0.5, np.nan]), Undef()),
        (
            "gm-ok",
            lambda: SC.geometric_mean_score([0.25, 1.0]),
            Val(lambda r: abs(r - 0.5) < 1e-12),
        ),
        ("fab-acc-1.5", lambda: SC.fab_score(1.5, 0.5), Err("accuracy")),
        ("fab-mfarm-neg", lambda: SC.fab_score(0.5, -1), Err("mfarm")),
        ("fab-nan", lambda: SC.fab_score(0.5, np.nan), Undef()),
        ("mfarm-nan", lambda: SC.mfarm(_P(nan=True)), Undef(lambda r: r.score)),
        ("mfarm-bool", lambda: SC.mfarm(_P(boolean=True)), Err("P")),
        ("mfarm-base", lambda: SC.mfarm(_P(), base="NOPE"), Err("base")),
        ("mfarm-alpha", lambda: SC.mfarm(_P(), alpha=5), Err("alpha")),
        (
            "acc-threshold-5",
            lambda: SC.mfarm_accuracy(_P(), (RNG.random(60) > 0.5).astype(int), threshold=5),
            Err("threshold"),
        ),
        (
            "acc-threshold-neg",
            lambda: SC.mfarm_accuracy(_P(), (RNG.random(60) > 0.5).astype(int), threshold=-1),
            Err("threshold"),
        ),
        (
            "parity-threshold-5",
            lambda: SC.parity_scores(_P(), (RNG.random(60) > 0.5).astype(int), threshold=5),
            Err("threshold"),
        ),
        ("parity-y-2", lambda: SC.parity_scores(_P(), np.r_[np.zeros(59), 2]), Err("y_true")),
        ("skew-length", lambda: SC.accuracy_skew([0, 1, 1], [0, 1]), Err("y_true", "y_pred")),
        ("skew-one-class", lambda: SC.accuracy_skew([1, 1, 1], [1, 0, 1]), Undef(lambda r: r.skew)),
        ("prompt-age-frac", lambda: _render_age(40.7), Err("case", "age")),
        ("prompt-age-int", lambda: _render_age(40), Val(lambda r: "40" in r and "40." not in r)),
        # --- FairMedAgent
        (
            "cfr-length",
            lambda: AM.counterfactual_flip_rate([0, 1, 1], [0, 1]),
            Err("phi_ref", "phi_cmp"),
        ),
        ("cfr-empty", lambda: AM.counterfactual_flip_rate([], []), Undef()),
        ("cfr-nan", lambda: AM.counterfactual_flip_rate([0, np.nan, 1], [0, 1, 1]), Err("phi_ref")),
        (
            "masd-nan",
            lambda: AM.mean_absolute_score_difference([0.1, np.nan], [0.2, 0.3]),
            Err("g_ref"),
        ),
        ("sd-length", lambda: AM.signed_disparity([0, 1], [0, 1, 1]), Err("phi_ref", "phi_cmp")),
        (
            "gate-cap-2",
            lambda: AM.anti_gaming_gate(
                capability=2.0,
                entropy=1.0,
                n_straddling=10,
                min_capability=0.5,
                min_entropy=0.5,
                min_straddling=5,
            ),
            Err("capability"),
        ),
        (
            "gate-cap-neg",
            lambda: AM.anti_gaming_gate(
                capability=-0.1,
                entropy=1.0,
                n_straddling=10,
                min_capability=0.5,
                min_entropy=0.5,
                min_straddling=5,
            ),
            Err("capability"),
        ),
        (
            "gate-entropy-neg",
            lambda: AM.anti_gaming_gate(
                capability=0.9,
                entropy=-1.0,
                n_straddling=10,
                min_capability=0.5,
                min_entropy=0.5,
                min_straddling=5,
            ),
            Err("entropy"),
        ),
        (
            "gate-straddling-neg",
            lambda: AM.anti_gaming_gate(
                capability=0.9,
                entropy=1.0,
                n_straddling=-1,
                min_capability=0.5,
                min_entropy=0.5,
                min_straddling=5,
            ),
            Err("n_straddling"),
        ),
        (
            "gate-mincap",
            lambda: AM.anti_gaming_gate(
                capability=0.9,
                entropy=1.0,
                n_straddling=10,
                min_capability=1.5,
                min_entropy=0.5,
                min_straddling=5,
            ),
            Err("min_capability"),
        ),
        (
            "gate-nan",
            lambda: AM.anti_gaming_gate(
                capability=np.nan,
                entropy=1.0,
                n_straddling=10,
                min_capability=0.5,
                min_entropy=0.5,
                min_straddling=5,
            ),
            Val(lambda r: not r.qualified and "capab" in " ".join(r.reasons)),
        ),  # unmeasured: withheld, with its reason
        ("modal-empty", lambda: AM.modal_vote([]), Undef()),
        ("entropy-empty", lambda: AM.action_entropy([]), Undef()),
        (
            "jaccard-length",
            lambda: AM.jaccard_disparity([{1}], [{1}, {2}]),
            Err("sets_ref", "sets_cmp"),
        ),
        ("null-rates-k>n", lambda: AF.null_cell_rates([5], [3]), Err("k")),
        (
            "null-rates-method",
            lambda: AF.null_cell_rates([1], [3], cell_rates="nope"),
            Err("cell_rates"),
        ),
        ("mv-depth-0", lambda: AF.majority_vote_floor(_traj(), 0), Err("depth")),
        ("boot-n-0", lambda: AF.floor_bootstrap(_traj(), n_resamples=0), Err("n_resamples")),
        (
            "boot-cl",
            lambda: AF.floor_bootstrap(_traj(), confidence_level=1.2),
            Err("confidence_level"),
        ),
        ("floor-empty", lambda: AF.instability_floor(_traj().iloc[:0]), Err("trajectories")),
        ("floor-not-frame", lambda: AF.instability_floor([1, 2]), Err("trajectories")),
        ("band-lo>hi", lambda: AB.band_range("v1", "follow_up_interval", 5, 1), Err("lo", "hi")),
        (
            "combine-rule",
            lambda: AB.combine_bands(
                [AB.band_range("v1", "follow_up_interval", 1, 3)], rule="nope"
            ),
            Err("rule"),
        ),
        (
            "alpha-level",
            lambda: AB.band_agreement(
                [
                    AB.band_range("v1", "follow_up_interval", 1, 3, rater="r1"),
                    AB.band_range("v1", "follow_up_interval", 1, 2, rater="r2"),
                ],
                level="nope",
            ),
            Err("level"),
        ),
        # --- mitigation
        ("ts-di-1.5", lambda: _fit(ThresholdShift(di_target=1.5)), Err("di_target")),
        ("ts-min_cell-0", lambda: _fit(ThresholdShift(min_cell=0)), Err("min_cell")),
        ("ts-step-0", lambda: _fit(ThresholdShift(step=0)), Err("step")),
        ("ts-base-2", lambda: _fit(ThresholdShift(base_threshold=2)), Err("base_threshold")),
        ("rw-lam-neg", lambda: _fit_rw(IntersectionalReweighing(lam=-1)), Err("lam")),
        ("rw-clip", lambda: _fit_rw(IntersectionalReweighing(clip=(10, 0.1))), Err("clip")),
        ("rw-variant", lambda: _fit_rw(IntersectionalReweighing(variant="nope")), Err("variant")),
        # --- published values
        (
            "published-unknown",
            lambda: fl.published.published_value("vfr", "no.such.key"),
            Err("key", "location", "name", "id"),
        ),
    ]
    return out


def _bh(p):
    from statsmodels.stats.multitest import multipletests

    return multipletests(p, method="fdr_bh")[1]


def _grid():
    return pd.DataFrame(
        dict(vfr=[0.05, 0.2], n_pass=[95, 80], n_defined=[100, 100], verdict=["Pass", "Pass"])
    )


def _fleiss_statsmodels(table):
    from statsmodels.stats.inter_rater import fleiss_kappa

    return fleiss_kappa(np.asarray(table))


def _render_age(age):
    from fairlib.mfarm import instrument as I

    case = {"age": age, "chief_complaint": "chest pain"}
    return I.render_paper_prompt("ed_triage", "BASE", case, ("chief_complaint",))


def _adult_like(n=600, seed=3):
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B", "C"], n)
    sex = rng.choice(["F", "M"], n)
    eth = rng.choice(["H", "N"], n)
    age = rng.choice(["<45", "45+"], n)
    X = pd.DataFrame({"race": race, "sex": sex, "ethnicity": eth, "age_bucket": age})
    y = rng.integers(0, 2, n)
    p = np.clip(rng.random(n) * 0.6 + 0.2 * (race == "A"), 0, 1)
    return X, y, p


def _fit(est):
    X, y, p = _adult_like()
    try:
        return est.fit(p, y, groups=X)
    except TypeError:
        return est.fit(X.assign(score=p), y)


def _fit_rw(est):
    X, y, p = _adult_like()
    return est.fit(X, y)


def run_all():
    out = []
    for cid, call, contract in cases():
        kind, detail = classify(call, contract)
        out.append((cid, kind, detail))
    return out
