"""Property-based tests (hypothesis) of the invariants a verdict rests on (issue 24):
a verdict always agrees with its value and rule; VFR is undefined (never 0) when the metric is undefined; N* is the
smallest qualifying size, the first included; a reliability tier never improves when an input gets worse; mFARM
sub-metrics lie in [0, 1], equal 1 when the columns are equal and are never 1 on a matrix with NaN."""

import math
import operator
import re

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fairlib as fl
from fairlib.core import FairlibInputError

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}


def rule_holds(rule: str, x: float) -> bool:
    "Evaluate a rule string such as 'x >= 0.8' or '|x| <= 0.1' independently of fairlib."
    m = re.fullmatch(r"\s*(\|x\||x)\s*(>=|<=|>|<)\s*([-+0-9.eE]+)\s*", rule)
    assert m, f"unparsed rule {rule!r}"
    lhs = abs(x) if m.group(1) == "|x|" else x
    return OPS[m.group(2)](lhs, float(m.group(3)))


@st.composite
def audit_data(draw):
    n = draw(st.integers(60, 240))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    k = draw(st.integers(2, 4))
    groups = rng.choice([f"g{i}" for i in range(k)], n)
    y = rng.integers(0, 2, n)
    p_sel = draw(st.floats(0.05, 0.95))
    yp = (rng.random(n) < p_sel).astype(int)
    return y, yp, groups


@SETTINGS
@given(audit_data(), st.integers(1, 40))
def test_verdict_agrees_with_value_and_rule(data, min_support):
    y, yp, g = data
    m = fl.audit(y, yp, sensitive_features=g, min_support=min_support).metrics
    for _, r in m.iterrows():
        if r.value is None or not math.isfinite(r.value):
            assert r.verdict not in ("Pass", "Fail"), (
                f"{r.metric}: undefined value but verdict {r.verdict}"
            )
            continue
        assert r.verdict == ("Pass" if rule_holds(r.rule, r.value) else "Fail"), (
            r.metric,
            r.value,
            r.rule,
            r.verdict,
        )


@settings(max_examples=12, deadline=None)
@given(st.integers(80, 200), st.integers(0, 10_000))
def test_vfr_is_undefined_never_zero_when_the_metric_is_undefined(n, seed):
    rng = np.random.default_rng(seed)
    g = np.repeat(["a", "b"], n // 2)
    y = rng.integers(0, 2, g.size)
    y[g == "b"] = 0  # no positives in b: the true-positive rate of b, hence EOpp, is undefined
    yp = rng.integers(0, 2, g.size)
    r = fl.verdict_flip_rate(
        y, yp, sensitive_features=g, metric="EOpp", n_resamples=20, seed=seed, min_support=1
    )
    assert math.isnan(r.vfr), f"EOpp undefined but VFR = {r.vfr}"


def first_qualifying(values, sizes, cv_cutoff):
    "N* computed independently: the smallest size below the full partition with sample CV (ddof=1) < cv_cutoff."
    for s, v in zip(sizes[:-1], values[:-1]):
        cv = np.std(v, ddof=1) / abs(np.mean(v))
        if cv < cv_cutoff:
            return float(s)
    return math.nan


@SETTINGS
@given(
    st.integers(2, 5),
    st.integers(3, 12),
    st.floats(0.01, 0.4),
    st.integers(0, 10_000),
    st.lists(st.floats(0.0, 0.5), min_size=5, max_size=5),
)
def test_n_star_is_the_smallest_qualifying_size_including_the_first(S, R, cutoff, seed, spreads):
    from fairlib.vfr.axis2 import summarise_audit_sizes

    rng = np.random.default_rng(seed)
    sizes = np.cumsum(rng.integers(10, 100, S))
    values = 0.9 + rng.normal(0, 1, (S, R)) * np.asarray(spreads[:S])[:, None]
    r = summarise_audit_sizes(values, sizes, "DI", value=0.9, cv_cutoff=cutoff)
    expect = first_qualifying(values, sizes, cutoff)
    if math.isnan(expect):
        assert math.isnan(r.n_star) and not r.reached
    else:
        assert r.n_star == expect and r.reached


def tier_rank(t):
    from fairlib.vfr.tiers import RELIABILITY_TIERS

    return RELIABILITY_TIERS.index(t)


@SETTINGS
@given(
    st.floats(0, 0.5),  # a verdict flip rate is the minority share of resamples: at most 1/2
    st.integers(1, 200_000),
    st.floats(-1, 1),
    st.sampled_from(["vfr", "n_star", "kappa"]),
    st.floats(0, 1),
)
def test_a_tier_never_improves_when_an_input_gets_worse(vfr, n_star, kappa, which, step):
    from fairlib.vfr.tiers import reliability_tier

    worse = dict(vfr=vfr, n_star=n_star, kappa=kappa)
    if which == "vfr":
        worse["vfr"] = min(0.5, vfr + step)
    elif which == "n_star":
        worse["n_star"] = n_star + int(step * 100_000) + 1
    else:
        worse["kappa"] = max(-1.0, kappa - step)
    a = reliability_tier([vfr], [float(n_star)], [kappa]).tier.iloc[0]
    b = reliability_tier([worse["vfr"]], [float(worse["n_star"])], [worse["kappa"]]).tier.iloc[0]
    assume(a != "Undefined" and b != "Undefined")
    assert tier_rank(b) >= tier_rank(a), f"{which} got worse {a} -> {b}"


SUBMETRICS = (
    "mean_difference",
    "variance_heterogeneity",
    "absolute_deviation",
    "ks_distribution",
    "correlation_difference",
)


@settings(max_examples=8, deadline=None)
@given(st.integers(20, 60), st.integers(0, 10_000), st.sampled_from(SUBMETRICS))
def test_mfarm_submetrics_in_unit_interval_one_when_columns_equal(n, seed, name):
    from fairlib.mfarm import submetrics as S

    rng = np.random.default_rng(seed)
    names = [f"v{i}" for i in range(13)]
    X = np.clip(
        rng.uniform(0.1, 0.9, (n, 13)) + rng.normal(0, 0.2, (n, 1)) * np.arange(13) / 13, 0, 1
    )
    r = getattr(S, name)(X, names)
    assert 0 <= r.score <= 1
    same = np.repeat(rng.uniform(0.1, 0.9, (n, 1)), 13, axis=1)
    assert getattr(S, name)(same, names).score == 1.0


@settings(max_examples=8, deadline=None)
@given(st.integers(20, 40), st.integers(0, 10_000), st.sampled_from(SUBMETRICS))
def test_mfarm_submetric_never_fair_on_nan(n, seed, name):
    from fairlib.mfarm import submetrics as S

    rng = np.random.default_rng(seed)
    X = rng.uniform(0.1, 0.9, (n, 13))
    X[rng.integers(0, n), rng.integers(0, 13)] = np.nan
    try:
        r = getattr(S, name)(X, [f"v{i}" for i in range(13)])
    except FairlibInputError as e:
        assert e.argument == "X"
        return
    assert math.isnan(r.score) and r.reason, f"{name} on NaN: score {r.score}, reason {r.reason!r}"
