"""fairlib.mitigation as scikit-learn estimators (issue 26 §5): sensitive features routed through `Pipeline` and
`GridSearchCV`, defaults that name no data set's columns (Adult and COMPAS here, not Texas-100X), `score` as plain
accuracy and the explicit fairness-penalised scorer `make_fair_scorer` (issue 35), the docstring examples, and
scikit-learn's own estimator checks. Oracles: sklearn's LogisticRegression fitted by hand, each fold refitted by hand,
fairlearn's selection-rate ratio, TPR difference and equalized-odds difference, sklearn's accuracy_score."""

import contextlib
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from fairlearn.metrics import (
    demographic_parity_ratio,
    equalized_odds_difference,
    true_positive_rate_difference,
)
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.estimator_checks import estimator_checks_generator

from fairlib.core import FairlibInputError
from fairlib.handbook import load_adult, load_compas
from fairlib.mitigation import (
    FairScorer,
    GreedyRefinement,
    IntersectionalReweighing,
    ThresholdShift,
    make_fair_scorer,
)
from fairlib.mitigation.reweighing import CELL_ATTRIBUTES, DI_ATTRIBUTES
from fairlib.mitigation.thresholds import (
    InfeasibleConstraintWarning,
    SmallCellWarning,
    UnstableConstraintWarning,
)

QUIET = (InfeasibleConstraintWarning, SmallCellWarning, UnstableConstraintWarning)


def lr():
    return LogisticRegression(solver="liblinear", random_state=0)


@contextlib.contextmanager
def quiet():
    "Silence fairlib's constraint warnings (these tests check numbers, not warnings)."
    with warnings.catch_warnings():
        for c in QUIET:
            warnings.simplefilter("ignore", c)
        yield


@pytest.fixture(autouse=True)
def _no_routing_leak():
    "Every test starts and ends with metadata routing off (the global default)."
    sklearn.set_config(enable_metadata_routing=False)
    yield
    sklearn.set_config(enable_metadata_routing=False)


def adult_data(n=6000, seed=0):
    d = load_adult(split="train").sample(n, random_state=seed).reset_index(drop=True)
    num = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    cat = ["workclass", "education", "marital_status", "occupation", "relationship"]
    X = d[num + cat]
    prep = ColumnTransformer(
        [
            ("num", StandardScaler(), num),
            ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat),
        ]
    )
    return X, d.high_income.to_numpy(), d[["sex", "race"]], prep


def compas_data():
    d = load_compas()
    X = pd.get_dummies(d[["age_cat", "priors_count", "c_charge_degree"]], dtype=float).to_numpy()
    return X, d.two_year_recid.to_numpy(), d[["race", "sex"]]


def toy(n=3000, seed=0, b=1.5):
    "Two sensitive columns; the features carry them, so an unmitigated model selects unequally (DI near 0.5)."
    r = np.random.default_rng(seed)
    A = pd.DataFrame(
        dict(sex=r.choice(["F", "M"], n), grp=r.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]))
    )
    male, a = (A.sex == "M").to_numpy(), (A.grp == "a").to_numpy()
    X = np.c_[r.normal(size=(n, 2)), male + r.normal(0, 0.3, n), a + r.normal(0, 0.3, n)]
    logit = X[:, 0] + b * male + b * a - b
    y = (r.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y, A


# --- defaults: no Texas column names -------------------------------------------------------------------------


def test_threshold_shift_default_runs_on_adult_columns():
    "Issue 26: ThresholdShift() on other data failed with \"lacks column(s) ['age_bucket', 'ethnicity']\"."
    X, y, A, prep = adult_data(3000)
    s = make_pipeline(prep, lr()).fit(X, y).predict_proba(X)[:, 1]
    with quiet():
        ts = ThresholdShift(oos_resamples=0).fit(s, y, A)
    assert ts.cell_columns_ == ("sex", "race") and ts.di_columns_ == ("sex", "race")
    assert (
        len(ts.cells_) == A.drop_duplicates().shape[0]
    )  # cells: the observed intersections of every column
    yh = ts.predict(s, A)
    if (
        ts.feasible_
    ):  # fairlearn's ratio counts every group; fairlib's leaves out groups below min_support=30
        big = {c: A[c].map(A[c].value_counts()) >= 30 for c in A}
        for c in A:
            m = big[c].to_numpy()
            assert demographic_parity_ratio(y[m], yh[m], sensitive_features=A[c][m]) >= 0.8 - 1e-12


@pytest.mark.parametrize("data", ["adult", "compas"])
def test_three_estimators_on_public_data(data):
    "Each estimator fits and predicts on Adult and COMPAS columns through `estimator=` and `sensitive_features=`."
    if data == "adult":
        X, y, A, prep = adult_data(4000)
        X = prep.fit_transform(X)
    else:
        X, y, A = compas_data()
    base_p = lr().fit(X, y).predict_proba(X)[:, 1]  # the oracle: the same regression fitted by hand
    with quiet():
        ts = ThresholdShift(estimator=lr(), oos_resamples=0).fit(X, y, sensitive_features=A)
        gr = GreedyRefinement(estimator=lr(), n_resamples=10, max_iter=10, oos_resamples=0)
        gr.fit(X, y, sensitive_features=A)
        rw = IntersectionalReweighing(estimator=lr()).fit(X, y, sensitive_features=A)
    # the post-processors threshold exactly the hand-fitted regression's scores
    t_rows = ts._row_thresholds(A, "test")[0]
    np.testing.assert_array_equal(
        ts.predict(X, sensitive_features=A), (base_p >= t_rows).astype(np.int8)
    )
    g_rows = gr._row_thresholds(A, "test")[0]
    np.testing.assert_array_equal(
        gr.predict(X, sensitive_features=A), (base_p >= g_rows).astype(np.int8)
    )
    # the reweighed estimator is the regression fitted with the learned weights
    w = IntersectionalReweighing().fit(A, y).sample_weight_
    np.testing.assert_allclose(rw.sample_weight_, w)
    np.testing.assert_allclose(
        rw.estimator_.coef_, lr().fit(X, y, sample_weight=w).coef_, rtol=1e-10
    )
    np.testing.assert_array_equal(rw.predict(X), lr().fit(X, y, sample_weight=w).predict(X))
    # Kamiran-Calders: each unclipped cell's weighted base rate equals the overall base rate
    key = A.astype(str).agg("|".join, axis=1)
    for k in key.unique():
        m = (key == k).to_numpy()
        wm = w[m]
        if m.sum() >= 30 and 0 < y[m].mean() < 1 and np.all((wm > 0.1) & (wm < 10)):
            assert np.average(y[m], weights=wm) == pytest.approx(y.mean(), rel=1e-9)
    # the constraint holds on the fitting rows when the estimator says so (fairlearn's ratio, groups >= 30)
    for est in (ts, gr):
        if est.feasible_:
            yh = est.predict(X, sensitive_features=A)
            for c in A:
                m = (A[c].map(A[c].value_counts()) >= 30).to_numpy()
                assert (
                    demographic_parity_ratio(y[m], yh[m], sensitive_features=A[c][m]) >= 0.8 - 1e-12
                )


def test_prefit_uses_the_estimator_as_it_is():
    X, y, A = toy()
    fitted = lr().fit(X, y)
    ts = ThresholdShift(estimator=fitted, prefit=True, oos_resamples=0).fit(
        X, y, sensitive_features=A
    )
    assert ts.estimator_ is fitted
    t = ts._row_thresholds(A, "test")[0]
    np.testing.assert_array_equal(
        ts.predict(X, sensitive_features=A), fitted.predict_proba(X)[:, 1] >= t
    )
    with pytest.raises(FairlibInputError) as e:
        ThresholdShift(estimator=lr(), prefit=True).fit(X, y, sensitive_features=A)
    assert e.value.argument == "estimator"


# --- Pipeline and GridSearchCV ---------------------------------------------------------------------------------


def test_pipeline_with_threshold_shift_equals_the_hand_composition():
    X, y, A, prep = adult_data(4000)
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        ts = ThresholdShift(estimator=lr(), oos_resamples=0)
        ts.set_fit_request(sensitive_features=True).set_predict_request(sensitive_features=True)
        ts.set_score_request(sensitive_features=True)
        pipe = make_pipeline(prep, ts).fit(X, y, sensitive_features=A)
        got = pipe.predict(X, sensitive_features=A)
        score = pipe.score(X, y, sensitive_features=A)
    Xt = prep.fit_transform(X)
    with quiet():
        hand = ThresholdShift(estimator=lr(), oos_resamples=0).fit(Xt, y, sensitive_features=A)
    np.testing.assert_array_equal(got, hand.predict(Xt, sensitive_features=A))
    assert score == pytest.approx(hand.score(Xt, y, sensitive_features=A))
    assert score == pytest.approx(
        accuracy_score(y, got), abs=1e-12
    )  # Pipeline.score is the plain accuracy


@pytest.mark.parametrize("which", ["reweighing", "threshold", "greedy"])
def test_each_estimator_inside_pipeline_and_gridsearch(which):
    X, y, A = toy(1800, seed=3)
    est, grid = {
        "reweighing": (IntersectionalReweighing(estimator=lr()), {"lam": [0.0, 1.0]}),
        "threshold": (ThresholdShift(estimator=lr(), oos_resamples=0), {"di_target": [0.7, 0.8]}),
        "greedy": (
            GreedyRefinement(estimator=lr(), n_resamples=5, max_iter=5, oos_resamples=0),
            {"di_target": [0.7, 0.8]},
        ),
    }[which]
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        est.set_fit_request(sensitive_features=True).set_score_request(sensitive_features=True)
        est.set_predict_request(sensitive_features=True)
        pipe = make_pipeline(StandardScaler(), est)
        name = pipe.steps[-1][0]
        gs = GridSearchCV(pipe, {f"{name}__{k}": v for k, v in grid.items()}, cv=KFold(3)).fit(
            X, y, sensitive_features=A
        )
        yh = gs.best_estimator_.predict(
            X, sensitive_features=A
        )  # the refitted pipeline, routing to its last step
    assert set(np.unique(yh)) <= {0, 1} and len(gs.cv_results_["mean_test_score"]) == 2
    assert np.isfinite(gs.cv_results_["mean_test_score"]).all()


class _Spy(ThresholdShift):
    "ThresholdShift that records which rows of X and of the sensitive features each fit and score receive."

    log: list = []

    def fit(self, X, y, groups=None, *, sensitive_features=None):
        _Spy.log.append(
            (
                "fit",
                X[:, 0].astype(int).copy(),
                sensitive_features.index.to_numpy().copy(),
                sensitive_features.sex.to_numpy().copy(),
            )
        )
        return super().fit(X, y, groups, sensitive_features=sensitive_features)

    def score(self, X, y, sample_weight=None, *, sensitive_features=None):
        _Spy.log.append(
            (
                "score",
                X[:, 0].astype(int).copy(),
                sensitive_features.index.to_numpy().copy(),
                sensitive_features.sex.to_numpy().copy(),
            )
        )
        return super().score(X, y, sensitive_features=sensitive_features)


class _FirstColumnOut(LogisticRegression):
    "A logistic regression that ignores column 0 (the row id carried for the spy)."

    def fit(self, X, y, sample_weight=None):
        return super().fit(X[:, 1:], y, sample_weight=sample_weight)

    def predict_proba(self, X):
        return super().predict_proba(X[:, 1:])


def test_gridsearch_routes_the_matching_rows_to_every_fold():
    X, y, A = toy(900, seed=5)
    ids = np.arange(len(y))
    A = A.set_index(
        pd.Index(ids + 10_000)
    )  # an index unlike positions: a mix-up cannot go unnoticed
    A["sex"] = np.where(ids % 3 == 0, "F", "M")  # a value that is a known function of the row
    Xid = np.c_[ids, X]
    _Spy.log.clear()
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        spy = _Spy(estimator=_FirstColumnOut(solver="liblinear"), oos_resamples=0)
        spy.set_fit_request(sensitive_features=True).set_score_request(sensitive_features=True)
        gs = GridSearchCV(
            spy, {"di_target": [0.7, 0.8]}, cv=KFold(3, shuffle=True, random_state=0), refit=False
        )
        gs.fit(Xid, y, sensitive_features=A)
    assert len(_Spy.log) == 2 * 3 * 2  # 2 candidates x 3 folds x (fit + score)
    for kind, rows, index, sex in _Spy.log:
        np.testing.assert_array_equal(
            index, rows + 10_000
        )  # the sensitive features of exactly X's rows
        np.testing.assert_array_equal(sex, np.where(rows % 3 == 0, "F", "M"))
    tests = [r for k, r, _, _ in _Spy.log if k == "score"]
    fits = [r for k, r, _, _ in _Spy.log if k == "fit"]
    for f, t in zip(fits, tests):
        assert not set(f) & set(t) and len(f) + len(t) == len(
            y
        )  # each fold: train and test partition the rows
    np.testing.assert_array_equal(np.sort(np.concatenate(tests)), np.sort(np.r_[ids, ids]))


def _fold_scores(make, X, y, A, cv, score):
    "Each candidate's folds scored by hand: fit a fresh estimator on the training rows, `score` on the held-out ones."
    out = []
    for tr, te in cv.split(X):
        with quiet():
            est = make().fit(X[tr], y[tr], sensitive_features=A.iloc[tr])
        out.append(score(est, X[te], y[te], A.iloc[te]))
    return float(np.mean(out))


def _hand_accuracy(est, X, y, A):
    return accuracy_score(y, est.predict(X, sensitive_features=A))


def _hand_penalised(constraint):
    "The penalised score recomputed with fairlearn's group metrics (every group counts: the scorer's min_support=0)."

    def score(est, X, y, A):
        yh = est.predict(X, sensitive_features=A)
        acc = accuracy_score(y, yh)
        if constraint == "demographic_parity":
            ok = all(demographic_parity_ratio(y, yh, sensitive_features=A[c]) >= 0.8 for c in A)
        elif constraint == "equal_opportunity":
            ok = all(
                true_positive_rate_difference(y, yh, sensitive_features=A[c]) <= 0.1 for c in A
            )
        else:
            ok = all(equalized_odds_difference(y, yh, sensitive_features=A[c]) <= 0.1 for c in A)
        return acc if ok else acc - 1

    return score


ALPHAS = [(0.0,), (0.0, 0.25, 0.5, 0.75, 1.0)]


def test_gridsearch_default_score_is_plain_accuracy():
    "Issue 35: best_score_ was silently fairness-penalised; without scoring= it is the plain accuracy of the folds."
    X, y, A = toy(3000, seed=7)
    cv = KFold(3)
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        ts = ThresholdShift(estimator=lr(), oos_resamples=0, min_support=0)
        ts.set_fit_request(sensitive_features=True).set_score_request(sensitive_features=True)
        gs = GridSearchCV(ts, {"alphas": ALPHAS}, cv=cv).fit(X, y, sensitive_features=A)
    for k, a in enumerate(ALPHAS):
        want = _fold_scores(
            lambda: ThresholdShift(estimator=lr(), alphas=a, oos_resamples=0),
            X,
            y,
            A,
            cv,
            _hand_accuracy,
        )
        assert gs.cv_results_["mean_test_score"][k] == pytest.approx(want, abs=1e-12)
    assert (gs.cv_results_["mean_test_score"] > 0).all()  # accuracies, never penalised below 0
    assert gs.best_params_["alphas"] == (
        0.0,
    )  # the unshifted thresholds are the more accurate ones


def test_fair_scorer_prefers_a_feasible_candidate_over_a_more_accurate_infeasible_one():
    X, y, A = toy(3000, seed=7)
    cv = KFold(3)
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        ts = ThresholdShift(estimator=lr(), oos_resamples=0, min_support=0).set_fit_request(
            sensitive_features=True
        )
        ts.set_predict_request(sensitive_features=True)
        gs = GridSearchCV(ts, {"alphas": ALPHAS}, cv=cv, scoring=make_fair_scorer(min_support=0))
        gs.fit(X, y, sensitive_features=A)
    s = gs.cv_results_["mean_test_score"]
    for k, a in enumerate(ALPHAS):
        make = lambda: ThresholdShift(estimator=lr(), alphas=a, oos_resamples=0)  # noqa: E731
        assert s[k] == pytest.approx(
            _fold_scores(make, X, y, A, cv, _hand_penalised("demographic_parity")), abs=1e-12
        )
    assert (
        s[0] < 0 < s[1]
    )  # unshifted thresholds miss DI >= 0.8 in every fold and are penalised below 0
    assert gs.best_params_["alphas"] == (0.0, 0.25, 0.5, 0.75, 1.0)


@pytest.mark.parametrize("constraint", ["equal_opportunity", "equalized_odds"])
def test_fair_scorer_in_a_pipeline_search_beyond_demographic_parity(constraint):
    "Pipeline + GridSearchCV + make_fair_scorer(constraint), the routing calls of the docs, checked fold by fold."
    X, y, A = toy(2400, seed=4)
    cv = KFold(3, shuffle=True, random_state=1)
    grid = {"thresholdshift__tolerance": [0.02, 0.1], "thresholdshift__min_cell": [30, 200]}
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        ts = ThresholdShift(estimator=lr(), constraint=constraint, oos_resamples=0)
        ts.set_fit_request(sensitive_features=True).set_predict_request(sensitive_features=True)
        pipe = make_pipeline(StandardScaler(), ts)
        gs = GridSearchCV(
            pipe, grid, cv=cv, scoring=make_fair_scorer(constraint, min_support=0)
        ).fit(X, y, sensitive_features=A)
    for k, params in enumerate(gs.cv_results_["params"]):

        def make():
            p = make_pipeline(
                StandardScaler(),
                ThresholdShift(estimator=lr(), constraint=constraint, oos_resamples=0),
            )
            p.set_params(**params)
            return _PipeFit(p)

        want = _fold_scores(make, X, y, A, cv, _hand_penalised(constraint))
        assert gs.cv_results_["mean_test_score"][k] == pytest.approx(want, abs=1e-12), params


class _PipeFit:
    "A pipeline fitted and used with routing off (the last step takes sensitive_features directly)."

    def __init__(self, pipe):
        self.pipe = pipe

    def fit(self, X, y, sensitive_features):
        self.pipe.fit(X, y, thresholdshift__sensitive_features=sensitive_features)
        return self

    def predict(self, X, sensitive_features):
        return self.pipe.predict(X, sensitive_features=sensitive_features)


class _SpyScorer(FairScorer):
    "A FairScorer that records the index of the sensitive features it is given."

    calls: list = []

    def __call__(self, estimator, X, y_true, sensitive_features=None, sample_weight=None):
        _SpyScorer.calls.append(
            (X[:, 0].astype(int).copy(), sensitive_features.index.to_numpy().copy())
        )
        return super().__call__(estimator, X, y_true, sensitive_features=sensitive_features)


def test_fair_scorer_receives_the_held_out_rows_of_each_fold():
    X, y, A = toy(900, seed=5)
    ids = np.arange(len(y))
    A = A.set_index(pd.Index(ids + 10_000))
    Xid = np.c_[ids, X]
    _SpyScorer.calls.clear()
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        ts = ThresholdShift(estimator=_FirstColumnOut(solver="liblinear"), oos_resamples=0)
        ts.set_fit_request(sensitive_features=True).set_predict_request(sensitive_features=True)
        cv = KFold(3, shuffle=True, random_state=0)
        GridSearchCV(ts, {"di_target": [0.7, 0.8]}, cv=cv, scoring=_SpyScorer(), refit=False).fit(
            Xid, y, sensitive_features=A
        )
    tests = [te for _, te in cv.split(Xid)]
    assert len(_SpyScorer.calls) == 2 * 3
    for k, (rows, index) in enumerate(_SpyScorer.calls):
        np.testing.assert_array_equal(
            index, rows + 10_000
        )  # the sensitive features of exactly the scored rows
        np.testing.assert_array_equal(np.sort(rows), tests[k % 3])


def test_multimetric_search_with_the_fair_scorer_and_accuracy():
    X, y, A = toy(1800, seed=8)
    cv = KFold(3)
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        ts = ThresholdShift(estimator=lr(), oos_resamples=0)
        ts.set_fit_request(sensitive_features=True).set_predict_request(sensitive_features=True)
        ts.set_score_request(sensitive_features=True)
        scoring = {"fair": make_fair_scorer(min_support=0), "accuracy": "accuracy"}
        gs = GridSearchCV(ts, {"alphas": ALPHAS}, cv=cv, scoring=scoring, refit="fair").fit(
            X, y, sensitive_features=A
        )
    for k, a in enumerate(ALPHAS):
        make = lambda: ThresholdShift(estimator=lr(), alphas=a, oos_resamples=0)  # noqa: E731
        fair = _fold_scores(make, X, y, A, cv, _hand_penalised("demographic_parity"))
        assert gs.cv_results_["mean_test_fair"][k] == pytest.approx(fair, abs=1e-12)
    assert gs.best_index_ == int(np.argmax(gs.cv_results_["mean_test_fair"]))


def test_cross_val_score_routes_the_sensitive_features_to_the_scorer():
    X, y, A = toy(1500, seed=9)
    cv = KFold(3)
    with sklearn.config_context(enable_metadata_routing=True), quiet():
        ts = ThresholdShift(estimator=lr(), oos_resamples=0, constraint="equal_opportunity")
        ts.set_fit_request(sensitive_features=True).set_predict_request(sensitive_features=True)
        got = cross_val_score(
            ts,
            X,
            y,
            cv=cv,
            scoring=make_fair_scorer("equal_opportunity", min_support=0),
            params={"sensitive_features": A},
        )
    make = lambda: ThresholdShift(estimator=lr(), oos_resamples=0, constraint="equal_opportunity")  # noqa: E731
    assert got.mean() == pytest.approx(
        _fold_scores(make, X, y, A, cv, _hand_penalised("equal_opportunity")), abs=1e-12
    )


def test_fair_scorer_scores_a_classifier_that_takes_no_groups():
    "A plain classifier is scored on its own predictions (it is not given the sensitive features)."
    X, y, A = toy(1200, seed=10)
    m = lr().fit(X, y)
    sc = make_fair_scorer(min_support=0)
    want = _hand_penalised("demographic_parity")(_NoGroups(m), X, y, A)
    assert sc(m, X, y, sensitive_features=A) == pytest.approx(want, abs=1e-12)
    parts = sc.parts(m, X, y, sensitive_features=A)
    np.testing.assert_allclose(
        list(parts["DI"].values()),
        [demographic_parity_ratio(y, m.predict(X), sensitive_features=A[c]) for c in A],
    )


class _NoGroups:
    def __init__(self, m):
        self.m = m

    def predict(self, X, sensitive_features=None):
        return self.m.predict(X)


def test_a_search_without_routing_cannot_score_fairly_and_says_so():
    "With routing off, scikit-learn cannot hand the scorer the held-out groups: the scorer refuses (never guesses)."
    X, y, A = toy(600, seed=11)
    gs = GridSearchCV(
        ThresholdShift(estimator=lr(), oos_resamples=0),
        {"di_target": [0.8]},
        scoring=make_fair_scorer(),
        error_score="raise",
    )
    with quiet(), pytest.raises(FairlibInputError) as e:
        gs.fit(X, y, sensitive_features=A)
    assert e.value.argument == "sensitive_features" and "enable metadata routing" in str(e.value)


# --- score and fairness_score ----------------------------------------------------------------------------------


@pytest.mark.parametrize("alphas", ALPHAS)
def test_score_is_accuracy_and_fairness_score_gives_the_penalised_parts(alphas):
    X, y, A = toy(3000, seed=11)
    with quiet():
        ts = ThresholdShift(estimator=lr(), alphas=alphas, oos_resamples=0, min_support=0).fit(
            X, y, sensitive_features=A
        )
    pred = ts.predict(X, sensitive_features=A)
    acc = accuracy_score(y, pred)
    assert ts.score(X, y, sensitive_features=A) == pytest.approx(acc, abs=1e-12)
    w = np.random.default_rng(0).uniform(0, 3, len(y))
    assert ts.score(X, y, sample_weight=w, sensitive_features=A) == pytest.approx(
        accuracy_score(y, pred, sample_weight=w), abs=1e-12
    )
    di = [demographic_parity_ratio(y, pred, sensitive_features=A[c]) for c in A]
    parts = ts.fairness_score(X, y, sensitive_features=A)
    np.testing.assert_allclose(list(parts["DI"].values()), di, rtol=1e-12)
    assert (
        parts["constraint_met"] == (min(di) >= 0.8) == ts.feasible_ == (alphas != (0.0,))
    )  # both branches
    assert parts["score"] == pytest.approx(acc if min(di) >= 0.8 else acc - 1, abs=1e-12)
    assert make_fair_scorer(min_support=0)(ts, X, y, sensitive_features=A) == pytest.approx(
        parts["score"], abs=1e-12
    )


def test_fairness_score_penalises_an_undefined_di():
    "No group gets a positive prediction: DI is 0/0, undefined, so the constraint is not shown to hold."
    X, y, A = toy(600, seed=2)
    with pytest.warns(
        InfeasibleConstraintWarning, match="nan"
    ):  # fairlib says the constraint is not met
        ts = ThresholdShift(oos_resamples=0, min_support=0, alphas=(0.0,)).fit(
            np.full(len(y), 0.2), y, A
        )
    parts = ts.fairness_score(np.full(len(y), 0.2), y, sensitive_features=A)
    assert all(np.isnan(v) for v in parts["DI"].values()) and not parts["constraint_met"]
    assert parts["score"] == pytest.approx(accuracy_score(y, np.zeros(len(y))) - 1)
    assert ts.score(np.full(len(y), 0.2), y, sensitive_features=A) == pytest.approx(
        accuracy_score(y, np.zeros(len(y)))
    )


@pytest.mark.parametrize(
    "obj",
    [
        "ThresholdShift",
        "GreedyRefinement",
        "IntersectionalReweighing",
        "make_fair_scorer",
        "FairScorer",
        "constraint_by_attribute",
        "fairness_penalised_score",
        "di_by_attribute",
    ],
)
def test_docstring_examples_run(obj):
    "The Examples sections (Pipeline, GridSearchCV and the routing calls among them) run as written."
    import doctest

    import fairlib.mitigation as mit

    target = getattr(mit, obj)
    globs = {"np": np, "pd": pd, **{n: getattr(mit, n) for n in mit.__all__}}
    tests = doctest.DocTestFinder(recurse=False).find(target, globs=globs)
    assert tests and sum(len(t.examples) for t in tests) > 0, f"{obj} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    try:
        with quiet():
            for t in tests:
                runner.run(t)
    finally:
        sklearn.set_config(enable_metadata_routing=False)
    assert runner.failures == 0


# --- refusals --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: ThresholdShift(estimator=lr()),
        lambda: GreedyRefinement(estimator=lr()),
        lambda: IntersectionalReweighing(estimator=lr()),
    ],
    ids=["threshold", "greedy", "reweighing"],
)
def test_fit_without_sensitive_features_is_refused(make):
    X, y, _ = toy(300)
    with pytest.raises(FairlibInputError) as e:
        make().fit(X, y)
    assert e.value.argument == "sensitive_features" and "set_fit_request" in str(e.value)


def test_sensitive_features_given_twice_is_refused():
    X, y, A = toy(300)
    with pytest.raises(FairlibInputError) as e:
        ThresholdShift().fit(X[:, 0].clip(0, 1), y, A, sensitive_features=A)
    assert e.value.argument == "sensitive_features"


def test_routing_passes_nothing_unrequested():
    "With routing on and no request set, scikit-learn refuses: nothing is silently dropped."
    X, y, A = toy(300)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(Exception, match="sensitive_features"):
            make_pipeline(StandardScaler(), ThresholdShift(estimator=lr())).fit(
                X, y, sensitive_features=A
            )


# --- the API of 0.1 -------------------------------------------------------------------------------------------


def test_old_positional_api_is_unchanged():
    r = np.random.default_rng(0)
    n = 2000
    g = pd.DataFrame(
        dict(
            race=r.choice(["A", "B"], n),
            age_bucket=r.choice(["o", "y"], n),
            sex=r.choice(["F", "M"], n),
            ethnicity=r.choice(["H", "N"], n),
        )
    )
    s = np.clip(r.beta(2, 2, n) + 0.2 * (g.race == "A").to_numpy() - 0.1, 0.001, 0.999)
    y = (r.random(n) < s).astype(int)
    kw = dict(cell_columns=CELL_ATTRIBUTES, di_columns=DI_ATTRIBUTES, oos_resamples=0)
    a = ThresholdShift(**kw).fit(s, y, g)
    b = ThresholdShift(**kw).fit(s, y, sensitive_features=g)
    np.testing.assert_array_equal(a.thresholds_, b.thresholds_)
    np.testing.assert_array_equal(a.predict(s, g), b.predict(s, sensitive_features=g))
    assert a.estimator_ is None and len(a.cells_) == 8  # race x age_bucket x sex, as in 0.1
    w = IntersectionalReweighing(columns=CELL_ATTRIBUTES).fit(g, y).sample_weight_
    np.testing.assert_allclose(
        IntersectionalReweighing(columns=CELL_ATTRIBUTES).fit_transform(g, y), w
    )


def test_vfr_baselines_pass_the_texas_columns():
    "The VFR code keeps fairlib 0.1's columns: B2's cells and B3/B4's cells and DI attributes are Texas-100X's."
    from fairlib.vfr.baselines import _texas_columns, run_baselines
    from fairlib.vfr.cohort import load_cohort
    from fairlib.vfr.features import make_split
    from fairlib.vfr.selection import with_selection

    ts = _texas_columns(ThresholdShift())
    assert ts.cell_columns == CELL_ATTRIBUTES and ts.di_columns == DI_ATTRIBUTES
    assert _texas_columns(ThresholdShift(cell_columns=("race",))).cell_columns == (
        "race",
    )  # an explicit choice stays
    cohort, _ = load_cohort("synthetic", n=6000, seed=1)
    y = cohort.los_gt3.to_numpy()
    sp = with_selection(make_split(y, "80_20", seed=42), y)
    with quiet():
        run = run_baselines(
            cohort,
            sp,
            train_n=1200,
            baselines=("B2", "B3", "B4"),
            greedy=GreedyRefinement(n_resamples=5, max_iter=3, oos_resamples=0),
            threshold_shift=ThresholdShift(oos_resamples=0),
            n_jobs=1,
        )
    assert run.estimators["B2"].columns_ == CELL_ATTRIBUTES
    for b in ("B3", "B4"):
        assert run.estimators[b].cell_columns_ == CELL_ATTRIBUTES
    assert (
        run.estimators["B3"].di_columns_ == DI_ATTRIBUTES
        and run.estimators["B4"].base_.di_columns_ == DI_ATTRIBUTES
    )


# --- scikit-learn's estimator checks ---------------------------------------------------------------------------

_NO_GROUPS = (
    "calls fit() without sensitive_features; a fairness mitigator refuses to fit without each row's groups "
    "(FairlibInputError naming sensitive_features) rather than read the data as one group"
)
# Checks that fit (or fit_transform) without sensitive features, per estimator; every other check applies and passes.
_FITTING_CHECKS = [
    "check_fit_score_takes_y",
    "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self",
    "check_readonly_memmap_input",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_estimators_dtypes",
    "check_complex_data",
    "check_dtype_object",
    "check_estimators_empty_data_messages",
    "check_pipeline_consistency",
    "check_estimators_nan_inf",
    "check_estimator_sparse_tag",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_classifier_data_not_an_array",
    "check_classifiers_one_label",
    "check_classifiers_classes",
    "check_classifiers_train",
    "check_classifiers_regression_target",
    "check_supervised_y_2d",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_fit2d_1sample",
    "check_fit2d_1feature",
    "check_dict_unchanged",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
    "check_fit2d_predict1d",
    "check_requires_y_none",
]
_TRANSFORMER_CHECKS = [  # IntersectionalReweighing also has transform() (the weights of the API of 0.1)
    "check_transformer_general",
    "check_transformer_preserve_dtypes",
    "check_transformer_data_not_an_array",
    "check_all_zero_sample_weights_error",
    "check_fit_non_negative",
    "check_classifiers_one_label_sample_weights",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    "check_sample_weights_not_an_array",
    "check_sample_weights_list",
    "check_sample_weights_shape",
    "check_sample_weights_not_overwritten",
    "check_sample_weights_pandas_series",
    "check_sample_weight_equivalence",
    "check_set_output_transform",
    "check_global_output_transform_pandas",
    "check_global_set_output_transform_polars",
    "check_set_output_transform_pandas",
    "check_set_output_transform_polars",
]


def _expected_failed(est):
    names = list(_FITTING_CHECKS)
    if isinstance(est, IntersectionalReweighing):
        names += _TRANSFORMER_CHECKS
    if isinstance(est, GreedyRefinement):  # it has n_iter_, so this check fits it
        names.append("check_non_transformer_estimators_n_iter")
    return {n: _NO_GROUPS for n in names}


_ESTIMATORS = [
    IntersectionalReweighing(estimator=LogisticRegression()),
    ThresholdShift(estimator=LogisticRegression(), oos_resamples=0),
    GreedyRefinement(estimator=LogisticRegression(), n_resamples=5, max_iter=5, oos_resamples=0),
]
# check_array_api_input is not generated as a case: the mitigators compute with numpy, so scikit-learn's Array-API
# check does not apply (it would only report itself skipped)
_NOT_APPLICABLE = {"check_array_api_input"}


def _check_name(check) -> str:
    return getattr(check, "func", check).__name__


def _estimator_check_cases():
    for est in _ESTIMATORS:
        for e, check in estimator_checks_generator(est, legacy=True, mark=None):
            name = _check_name(check)
            if name not in _NOT_APPLICABLE:
                yield pytest.param(e, check, id=f"{type(est).__name__}-{name}")


def _names_sensitive_features(exc: BaseException) -> bool:
    "The refusal itself, or an assertion of scikit-learn's check that wraps it."
    while exc is not None:
        if isinstance(exc, FairlibInputError) and exc.argument == "sensitive_features":
            return True
        exc = exc.__cause__ or exc.__context__
    return False


@pytest.mark.parametrize("estimator,check", list(_estimator_check_cases()))
def test_sklearn_estimator_checks(estimator, check):
    """Every check of sklearn.utils.estimator_checks: the ones that can fit the estimator pass; the ones that call
    fit() without sensitive features (listed in _expected_failed with the reason) must fail by the mitigator's
    refusal naming `sensitive_features`, and nothing else."""
    name = _check_name(check)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name not in _expected_failed(estimator):
            check(estimator)
            return
        with pytest.raises(Exception) as info:
            check(estimator)
    assert _names_sensitive_features(info.value), (
        f"{name} failed for another reason: {info.value!r}"
    )
