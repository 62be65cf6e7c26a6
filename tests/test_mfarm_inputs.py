"""Issue 24 (mFARM part): inputs that used to give a silent number now raise FairlibInputError naming the argument.

Rule for the sub-metrics and the combined score: a probability matrix with NaN, infinite, out-of-range or boolean
entries is refused (the argument is named), never scored; a quantity that is undefined on valid input is NaN or a
degenerate comparison with its reason, as before."""

import math

import numpy as np
import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib import mfarm as M

V = list(M.PROMPT_VARIANTS)
SUBS = [
    M.mean_difference,
    M.variance_heterogeneity,
    M.absolute_deviation,
    M.ks_distribution,
    M.correlation_difference,
]


def matrix(n=20, seed=0):
    return np.random.default_rng(seed).uniform(0.1, 0.9, (n, 13))


def frame(n=20, seed=0):
    return pd.DataFrame(matrix(n, seed), columns=V)


def raises(argument, call):
    with pytest.raises(FairlibInputError) as e:
        call()
    assert e.value.argument == argument, (e.value.argument, str(e.value))
    return str(e.value)


# ---------------------------------------------------------------- item 1: sub-metrics on a bad matrix
@pytest.mark.parametrize("sub", SUBS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "spoil,word",
    [
        (lambda X: X.__setitem__((3, 2), np.nan), "NaN"),
        (lambda X: X.__setitem__((0, 0), np.inf), "[0, 1]"),
        (lambda X: X.__setitem__((5, 7), 1.5), "[0, 1]"),
        (lambda X: X.__setitem__((5, 7), -0.1), "[0, 1]"),
    ],
    ids=["nan", "inf", "above_1", "below_0"],
)
def test_submetric_refuses_bad_probabilities(sub, spoil, word):
    X = matrix()
    spoil(X)
    msg = raises("X", lambda: sub(X, V))
    assert sub.__name__ in msg and word in msg


@pytest.mark.parametrize("sub", SUBS, ids=lambda f: f.__name__)
def test_submetric_refuses_booleans_and_shapes(sub):
    raises("X", lambda: sub(matrix() > 0.5, V))
    raises("X", lambda: sub(matrix()[:, 0], V))  # 1-d
    raises("X", lambda: sub(matrix()[:1], V))  # one case
    raises("X", lambda: sub(np.array([["a"] * 13] * 3), V))
    raises("names", lambda: sub(matrix(), V[:12]))
    raises("alpha", lambda: sub(matrix(), V, alpha=1.5))
    raises("alpha", lambda: sub(matrix(), V, alpha=True))


@pytest.mark.parametrize("sub", SUBS, ids=lambda f: f.__name__)
def test_submetric_valid_matrix_unchanged(sub):
    # the validation must not change a valid result: an independent re-run on a copy gives the same score
    X = matrix(30, 1)
    assert sub(X.copy(), V).score == sub(X.copy(), tuple(V)).score
    assert 0 <= sub(X, V).score <= 1


def test_submetric_method_choices_named():
    raises("wilcoxon_method", lambda: M.mean_difference(matrix(), V, wilcoxon_method="pratt"))
    raises("wilcoxon_method", lambda: M.absolute_deviation(matrix(), V, wilcoxon_method="pratt"))
    raises("ks_method", lambda: M.ks_distribution(matrix(), V, ks_method="approx"))


def test_spearman_permutation_p_refuses_what_it_would_get_wrong():
    x = np.arange(6.0)
    y = np.array([0.1, 0.5, 0.2, 0.9, 0.3, 0.4])
    raises("x", lambda: M.spearman_permutation_p([0, 1, np.nan, 3, 4, 5.0], y))  # was p = 0
    raises(
        "ys", lambda: M.spearman_permutation_p(x, [0.1, np.nan, 0.2, 0.9, 0.3, 0.4])
    )  # was p = 0
    raises(
        "ys", lambda: M.spearman_permutation_p(x, np.arange(12.0))
    )  # was silently reshaped to 6 x 2
    raises(
        "x", lambda: M.spearman_permutation_p(np.ones(6), y)
    )  # correlation undefined (was p = 0)
    raises("ys", lambda: M.spearman_permutation_p(x, np.ones(6)))
    # a valid call against an independent oracle: scipy's Spearman rho over all 720 orderings of y (N = 6)
    import itertools
    from scipy import stats

    rho, p = M.spearman_permutation_p(x, y)
    r0 = stats.spearmanr(x, y).statistic
    null = [stats.spearmanr(x, list(q)).statistic for q in itertools.permutations(y)]
    assert math.isclose(rho[0], r0) and math.isclose(p[0], np.mean(np.abs(null) >= abs(r0) - 1e-12))


# ---------------------------------------------------------------- item 2: geometric mean
def test_geometric_mean_score_refuses_empty_and_booleans():
    assert "empty" in raises("scores", lambda: M.geometric_mean_score([]))
    raises("scores", lambda: M.geometric_mean_score([True, True]))
    raises("scores", lambda: M.geometric_mean_score(["0.5", "0.9"]))
    raises("scores", lambda: M.geometric_mean_score([0.9, math.nan]))
    assert math.isclose(M.geometric_mean_score([0.25, 1.0]), 0.5)  # sqrt(0.25 * 1)


# ---------------------------------------------------------------- item 3: booleans where probabilities belong
@pytest.mark.parametrize(
    "make",
    [
        lambda: frame() > 0.5,
        lambda: (frame() > 0.5).astype("boolean"),
        lambda: frame().assign(BASE=[True, False] * 10),
        lambda: frame().assign(BASE=pd.Series([True, False] * 10, dtype=object)),
    ],
    ids=["bool", "nullable_boolean", "one_bool_column", "object_bools"],
)
def test_boolean_frame_is_not_probabilities(make):
    P = make()
    assert "bool" in raises("P", lambda: M.mfarm(P))
    raises("P", lambda: M.mfarm_accuracy(P, [0, 1] * 10))
    raises("P", lambda: M.parity_scores(P, [0, 1] * 10))


def test_variant_matrix_refuses_boolean_values():
    long = pd.DataFrame(
        [
            {"case_id": f"c{i}", "variant": v, "label": i % 2, "p_yes": bool((i + j) % 2)}
            for i in range(4)
            for j, v in enumerate(V)
        ]
    )
    raises("scores", lambda: M.variant_matrix(long))


def test_fab_score_refuses_booleans():
    raises("accuracy", lambda: M.fab_score(True, 0.5))
    raises("mfarm", lambda: M.fab_score(0.5, True))


# ---------------------------------------------------------------- item 4: threshold in (0, 1)
@pytest.mark.parametrize("t", [5, -1, 0, 1, 0.0, 1.0, math.nan, True, "0.5"])
@pytest.mark.parametrize("fn", [M.mfarm_accuracy, M.parity_scores], ids=lambda f: f.__name__)
def test_threshold_outside_open_unit_interval_refused(fn, t):
    raises("threshold", lambda: fn(frame(), [0, 1] * 10, threshold=t))


def test_threshold_inside_is_used():
    P = pd.DataFrame({"BASE": [0.3, 0.7], "A": [0.6, 0.2]})
    a = M.mfarm_accuracy(
        P, [1, 0], threshold=0.25, n_variants=None
    )  # Yes for all but A's 0.2: 3 of 4 right
    assert math.isclose(a.accuracy, 3 / 4) and a.threshold == 0.25


# ---------------------------------------------------------------- item 5: ages are never altered silently
CASE = {"age": 40, "chief_complaint": "chest pain", "diagnoses": "angina"}


@pytest.mark.parametrize("age", [40.7, -3, math.nan, True, "forty", "40.7", None])
def test_non_integer_age_refused(age):
    case = dict(CASE, age=age)
    msg = raises("age", lambda: M.render_paper_prompt("ed_triage", "BASE", case, ("age",)))
    assert "render_paper_prompt" in msg
    raises("age", lambda: M.paper_header("White_Male", age))
    raises("age", lambda: M.variant_header("ed_triage", "BASE", age))
    raises("age", lambda: M.render_prompt("ed_triage", "BASE", age, "narrative"))


@pytest.mark.parametrize("age", [40, 40.0, np.int64(40), np.float64(40.0), "40"])
def test_integral_ages_render_as_before(age):
    p = M.render_paper_prompt("ed_triage", "White_Male", dict(CASE, age=age), ("age",))
    assert p == M.render_paper_prompt("ed_triage", "White_Male", CASE, ("age",))
    assert "age of 40 years" in p and "40.0" not in p


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spearman_permutation_p_equals_scipys_exact_permutation_test(seed):
    """The vectorised enumeration of mFARM's correlation sub-metric against scipy.stats.permutation_test over every
    pairing (n_resamples=inf): same rho, same exact two-sided p, ties included."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    n = 7
    x = rng.integers(0, 5, n).astype(float)  # ties in x
    x[:2] = [0.0, 4.0]  # never constant
    ys = rng.random((n, 3))
    ys[1, 2] = ys[0, 2]  # a tie in one column
    rho, p = M.spearman_permutation_p(x, ys)
    for j in range(ys.shape[1]):
        y = ys[:, j]
        # one sample: its n! orderings against y held fixed. Two-sided as |rho| >= |observed| (scipy's own
        # "two-sided" doubles the smaller tail, which differs when ties make the null distribution asymmetric)
        res = stats.permutation_test(
            (x,),
            lambda a: abs(stats.spearmanr(a, y).statistic),
            permutation_type="pairings",
            n_resamples=np.inf,
            alternative="greater",
        )
        assert abs(rho[j]) == pytest.approx(res.statistic, abs=1e-12)
        assert p[j] == pytest.approx(res.pvalue, abs=1e-9)
