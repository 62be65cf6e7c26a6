"""Boundary campaign, the mitigators (issues 34 and 35): weights, the pairing of pandas inputs, group columns, the
three constraints, prefit and wrapped estimators, predict on unseen groups, pipelines and model searches.

Each case is `(id, call, contract)` with the contracts of `tests/campaign_cases.py`: `Err(...)` a clear refusal naming
the argument, `Undef(extract)` an undefined value reported as NaN, `Val(check)` a legitimate answer. Every `Val` is
judged by an independent computation on the raw rows, never by fairlib's own output: group rates recounted with
pandas (`boundary_harness.oracle_groups` / `oracle_metrics`) from the scores and the thresholds the estimator exposes
in `cell_thresholds_`, Kamiran-Calders weights counted with pandas, scikit-learn's `LogisticRegression` and
`accuracy_score` fitted and computed by hand, and each fold of a search refitted by hand. Everything from fairlib
is imported inside the calls, so the same cases tally on an older checkout.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boundary_harness import oracle_groups, oracle_metrics, same  # noqa: E402
from campaign_cases import Err, Undef, Val  # noqa: E402

# ---------------------------------------------------------------------------------------------------------------------
# data: scores that separate the labels and differ by group, two group columns, features for a wrapped classifier

_R = np.random.default_rng(7)
N = 1200
G = pd.DataFrame(
    dict(sex=_R.choice(["F", "M"], N), race=_R.choice(["a", "b", "c"], N, p=[0.5, 0.3, 0.2]))
)
_MALE, _A = (G.sex == "M").to_numpy(), (G.race == "a").to_numpy()
X = np.c_[_R.normal(size=(N, 2)), _MALE + _R.normal(0, 0.3, N), _A + _R.normal(0, 0.3, N)]
Y = (_R.random(N) < 1 / (1 + np.exp(-(X[:, 0] + 1.2 * _MALE + 1.2 * _A - 1.2)))).astype(int)
S = np.clip(1 / (1 + np.exp(-(1.5 * X[:, 0] + 1.2 * _MALE + 1.2 * _A - 1.2))), 0.001, 0.999)
IDX = pd.Index(np.arange(N) * 3 + 100)  # an index unlike positions
SHUF = pd.Index(_R.permutation(IDX))  # the same labels in another order
W = _R.uniform(0.5, 2.0, N)


def _m():
    "fairlib.mitigation, imported at call time."
    import fairlib.mitigation as m

    return m


def _lr():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(solver="liblinear", random_state=0)


def _quiet(f):
    "Run f() with fairlib's warnings silenced (the contract judges values, not warnings)."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f()


def TS(**kw):
    from fairlib.mitigation import ThresholdShift

    return ThresholdShift(**{"oos_resamples": 0, **kw})


def GR(**kw):
    from fairlib.mitigation import GreedyRefinement

    return GreedyRefinement(**{"n_resamples": 5, "max_iter": 5, "oos_resamples": 0, **kw})


def RW(**kw):
    from fairlib.mitigation import IntersectionalReweighing

    return IntersectionalReweighing(**kw)


def g_with(col, values, base=G):
    g = base.copy().astype(object)
    g[col] = values
    return g


def one_missing(col, v, k=5):
    vals = G[col].astype(object).to_numpy().copy()
    vals[k] = v
    return g_with(col, vals)


# ---------------------------------------------------------------------------------------------------------------------
# independent oracles


def row_thresholds(est, groups) -> np.ndarray:
    """Each row's threshold read from the public `cell_thresholds_` table with a pandas merge on the cell columns; a
    row whose cell is not in the table gets `default_threshold_`."""
    cols = list(est.cell_columns_)
    tab = est.cell_thresholds_[[*cols, "threshold"]]
    m = (
        groups[cols]
        .astype(object)
        .reset_index(drop=True)
        .merge(tab.astype({c: object for c in cols}), how="left")
    )
    return m.threshold.fillna(est.default_threshold_).to_numpy()


def recount(est, scores, y, groups, min_support=30) -> dict:
    "{column: oracle_metrics} of the predictions score >= row threshold, recounted with pandas."
    yh = (np.asarray(scores) >= row_thresholds(est, groups)).astype(int)
    df = groups.reset_index(drop=True).assign(y=np.asarray(y), yh=yh)
    return {c: oracle_metrics(oracle_groups(df, "y", "yh", c), min_support) for c in groups.columns}


def holds(metric, bound, scores=S, y=Y, groups=G, min_support=30):
    "A check: the fitted estimator's thresholds meet `metric` <= bound (>= for DI) on every column, recounted."

    def check(est):
        got = recount(est, scores, y, groups, min_support)
        ok = [
            v[metric] >= bound - 1e-12 if metric == "DI" else v[metric] <= bound + 1e-12
            for v in got.values()
        ]
        return est.feasible_ and all(ok)

    return check


def kc_weights(groups, y) -> np.ndarray:
    "Kamiran-Calders weights P(g)P(y)/P(g,y), counted with pandas (clipped to [0.1, 10], lam = 1)."
    key = groups.astype(str).agg("|".join, axis=1).to_numpy()
    df = pd.DataFrame(dict(g=key, y=np.asarray(y)))
    n = len(df)
    pg = df.g.map(df.g.value_counts() / n)
    py = df.y.map(df.y.value_counts() / n)
    pgy = df.groupby(["g", "y"]).y.transform("size") / n
    return np.clip((pg * py / pgy).to_numpy(), 0.1, 10)


def same_thresholds_as_arrays(make, scores=S, y=Y, groups=G):
    "A check: the fit on these (aligned pandas) inputs gives the thresholds of the fit on plain positional arrays."

    def check(est):
        ref = _quiet(
            lambda: make().fit(np.asarray(scores), np.asarray(y), groups.reset_index(drop=True))
        )
        return np.array_equal(est.thresholds_, ref.thresholds_)

    return check


def fold_mean(make, score, cv_splits, Xm=X, y=Y, groups=G):
    "Each fold refitted by hand and scored by `score(est, X_te, y_te, g_te)`; the mean over folds."
    out = []
    for tr, te in cv_splits:
        est = _quiet(lambda: make().fit(Xm[tr], y[tr], sensitive_features=groups.iloc[tr]))
        out.append(score(est, Xm[te], y[te], groups.iloc[te]))
    return float(np.mean(out))


def penalised_dp(est, Xt, yt, gt):
    "accuracy, minus 1 unless DI >= 0.8 on both columns (every group counts), recounted with pandas."
    yh = np.asarray(est.predict(Xt, sensitive_features=gt)).astype(int)
    df = gt.reset_index(drop=True).assign(y=yt, yh=yh)
    ok = all(oracle_metrics(oracle_groups(df, "y", "yh", c), 0)["DI"] >= 0.8 for c in gt.columns)
    acc = float((yh == yt).mean())
    return acc if ok else acc - 1


def accuracy(est, Xt, yt, gt):
    return float((np.asarray(est.predict(Xt, sensitive_features=gt)) == yt).mean())


def _kfold():
    from sklearn.model_selection import KFold

    return KFold(3, shuffle=True, random_state=0)


# ---------------------------------------------------------------------------------------------------------------------
# calls that need a few lines


def rw_fit_weighted(w):
    return RW(estimator=_lr()).fit(X, Y, sensitive_features=G, sample_weight=w)


def rw_weighted_equals_hand(est):
    "The classifier is the regression fitted by hand with the pandas-counted KC weights times the user's weights."
    hand = _lr().fit(X, Y, sample_weight=kc_weights(G, Y) * W)
    return np.allclose(est.estimator_.coef_, hand.coef_, rtol=1e-8) and np.allclose(
        est.sample_weight_, kc_weights(G, Y)
    )


def ts_fitted(**kw):
    return _quiet(lambda: TS(**kw).fit(S, Y, G))


def ts_estimator_fitted(**kw):
    return _quiet(lambda: TS(estimator=_lr(), **kw).fit(X, Y, sensitive_features=G))


def weighted_score_check(v):
    est = ts_fitted()
    yh = (S >= row_thresholds(est, G)).astype(int)
    return same(v, np.average(yh == Y, weights=W))


def unseen_predict():
    est = ts_fitted()
    g = G.iloc[:40].assign(race="zz")  # a race never seen in fit
    return est, g, _quiet(lambda: est.predict(S[:40], g))


def unseen_check(r):
    est, g, yh = r
    return np.array_equal(yh, (S[:40] >= est.default_threshold_).astype(int))


def gr_unseen():
    est = _quiet(lambda: GR().fit(S, Y, G))
    g = G.iloc[:30].assign(sex="X")
    return est, g, _quiet(lambda: est.predict(S[:30], g))


def small_cell_predict():
    "A cell of 8 members in fit is left at the base threshold; predict gives it the base threshold."
    g = G.copy()
    g.loc[:7, "race"] = "rare"
    est = _quiet(lambda: TS().fit(S, Y, g))
    return est, g, _quiet(lambda: est.predict(S, g))


def small_cell_check(r):
    est, g, yh = r
    rare = (g.race == "rare").to_numpy()
    return np.array_equal(yh[rare], (S[rare] >= 0.5).astype(int)) and np.array_equal(
        yh, (S >= row_thresholds(est, g)).astype(int)
    )


def prefit_predict():
    m = _lr().fit(X, Y)
    est = _quiet(lambda: TS(estimator=m, prefit=True).fit(X, Y, sensitive_features=G))
    return est, m


def prefit_check(r):
    est, m = r
    want = (m.predict_proba(X)[:, 1] >= row_thresholds(est, G)).astype(int)
    return est.estimator_ is m and np.array_equal(est.predict(X, sensitive_features=G), want)


def estimator_check(est):
    "The thresholds apply to the regression fitted by hand on the same rows."
    p = _lr().fit(X, Y).predict_proba(X)[:, 1]
    return np.array_equal(
        est.predict(X, sensitive_features=G), (p >= row_thresholds(est, G)).astype(int)
    )


def pipeline_routing_off():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipe = make_pipeline(StandardScaler(), TS(estimator=_lr()))
    _quiet(lambda: pipe.fit(X, Y, thresholdshift__sensitive_features=G))
    return pipe


def pipeline_check(pipe):
    from sklearn.preprocessing import StandardScaler

    Xt = StandardScaler().fit_transform(X)
    p = _lr().fit(Xt, Y).predict_proba(Xt)[:, 1]
    want = (p >= row_thresholds(pipe[-1], G)).astype(int)
    return np.array_equal(pipe.predict(X, sensitive_features=G), want)


def search(scoring=None, constraint="demographic_parity"):
    import sklearn
    from sklearn.model_selection import GridSearchCV

    with sklearn.config_context(enable_metadata_routing=True):
        ts = TS(estimator=_lr(), constraint=constraint, min_support=0)
        ts.set_fit_request(sensitive_features=True).set_predict_request(sensitive_features=True)
        ts.set_score_request(sensitive_features=True)
        gs = GridSearchCV(ts, {"alphas": [(0.0,), (0.0, 0.5, 1.0)]}, cv=_kfold(), scoring=scoring)
        return _quiet(lambda: gs.fit(X, Y, sensitive_features=G))


def search_checks(score):
    def check(gs):
        splits = list(_kfold().split(X))
        for k, a in enumerate([(0.0,), (0.0, 0.5, 1.0)]):
            want = fold_mean(lambda: TS(estimator=_lr(), alphas=a, min_support=0), score, splits)
            if not same(gs.cv_results_["mean_test_score"][k], want, 1e-12):
                return False
        return True

    return check


def fair_search():
    from fairlib.mitigation import make_fair_scorer

    return search(make_fair_scorer(min_support=0))


def cv_score():
    import sklearn
    from sklearn.model_selection import cross_val_score

    from fairlib.mitigation import make_fair_scorer

    with sklearn.config_context(enable_metadata_routing=True):
        ts = TS(estimator=_lr(), min_support=0)
        ts.set_fit_request(sensitive_features=True).set_predict_request(sensitive_features=True)
        return _quiet(
            lambda: cross_val_score(
                ts,
                X,
                Y,
                cv=_kfold(),
                scoring=make_fair_scorer(min_support=0),
                params={"sensitive_features": G},
            )
        )


def cv_check(v):
    splits = list(_kfold().split(X))
    return same(
        np.mean(v),
        fold_mean(lambda: TS(estimator=_lr(), min_support=0), penalised_dp, splits),
        1e-12,
    )


def scorer_pipeline_unrequested_predict():
    "Routing on, the mitigator's predict not requested: the scorer cannot pass the groups, and the refusal says so."
    import sklearn
    from sklearn.pipeline import make_pipeline

    from fairlib.mitigation import make_fair_scorer

    with sklearn.config_context(enable_metadata_routing=True):
        ts = TS(estimator=_lr()).set_fit_request(sensitive_features=True)
        pipe = _quiet(lambda: make_pipeline(ts).fit(X, Y, sensitive_features=G))
        return make_fair_scorer()(pipe, X, Y, sensitive_features=G)


def scorer_value(constraint, **kw):
    from fairlib.mitigation import make_fair_scorer

    est = ts_fitted(constraint=constraint)
    return make_fair_scorer(constraint, min_support=0, **kw)(est, S, Y, sensitive_features=G)


def scorer_check(constraint, metric, bound):
    def check(v):
        est = ts_fitted(constraint=constraint)
        yh = (S >= row_thresholds(est, G)).astype(int)
        df = G.assign(y=Y, yh=yh)
        vals = [oracle_metrics(oracle_groups(df, "y", "yh", c), 0)[metric] for c in G]
        ok = all(x >= bound for x in vals) if metric == "DI" else all(x <= bound for x in vals)
        acc = float((yh == Y).mean())
        return same(v, acc if ok else acc - 1, 1e-12)

    return check


def cba(constraint, y_pred, groups=G, **kw):
    from fairlib.mitigation import constraint_by_attribute

    return constraint_by_attribute(Y, y_pred, groups, constraint=constraint, **kw)


YP = (S >= 0.5).astype(int)


def cba_check(metric, min_support=30):
    def check(v):
        df = G.assign(y=Y, yh=YP)
        return all(
            same(v[c], oracle_metrics(oracle_groups(df, "y", "yh", c), min_support)[metric])
            for c in G
        )

    return check


def no_positive_group():
    "A group with no positive label: its TPR is undefined, so the TPR gap of that column is undefined."
    y = Y.copy()
    y[(G.race == "c").to_numpy()] = 0
    from fairlib.mitigation import constraint_by_attribute

    return constraint_by_attribute(y, YP, G, constraint="equal_opportunity")


def eo_undefined_fit():
    y = Y.copy()
    y[(G.race == "c").to_numpy()] = 0
    est = ts_fitted_on(S, y, G, constraint="equal_opportunity")
    return est


def ts_fitted_on(s, y, g, **kw):
    return _quiet(lambda: TS(**kw).fit(s, y, g))


def oos_consistency(est):
    "constraint_oos_: the in-sample value equals the recount; shares lie in [0, 1]; the flip rate follows the draws."
    tab = est.constraint_oos_
    rc = recount(est, S, Y, G)
    metric = est.constraint_metric_
    in_ok = all(same(tab.loc[c, "in_sample"], rc[c][metric]) for c in G.columns)
    shares = tab.oos_met_share.between(0, 1).all()
    d = est.constraint_oos_draws_
    vfr = float(np.mean(d.met.to_numpy() != bool(tab.loc["all", "met_in_sample"])))
    return in_ok and shares and same(est.constraint_vfr_, vfr)


def dict_of_series(shift=False):
    g = {c: pd.Series(G[c].to_numpy(), index=SHUF if (shift and c == "race") else IDX) for c in G}
    return TS().fit(pd.Series(S, index=IDX), pd.Series(Y, index=IDX), g)


# ---------------------------------------------------------------------------------------------------------------------

CASES = [
    # --- sample weights ------------------------------------------------------------------------------------------
    ("rw-weight-negative", lambda: rw_fit_weighted(np.r_[-1.0, W[1:]]), Err("sample_weight")),
    ("rw-weight-nan", lambda: rw_fit_weighted(np.r_[np.nan, W[1:]]), Err("sample_weight")),
    ("rw-weight-inf", lambda: rw_fit_weighted(np.r_[np.inf, W[1:]]), Err("sample_weight")),
    ("rw-weight-minus-inf", lambda: rw_fit_weighted(np.r_[-np.inf, W[1:]]), Err("sample_weight")),
    ("rw-weight-all-zero", lambda: rw_fit_weighted(np.zeros(N)), Err("sample_weight")),
    ("rw-weight-bool", lambda: rw_fit_weighted(np.ones(N, bool)), Err("sample_weight")),
    ("rw-weight-text", lambda: rw_fit_weighted(np.array(["1"] * N)), Err("sample_weight")),
    ("rw-weight-short", lambda: rw_fit_weighted(W[:-1]), Err("sample_weight")),
    ("rw-weight-2d", lambda: rw_fit_weighted(np.c_[W, W]), Err("sample_weight")),
    ("rw-weight-complex", lambda: rw_fit_weighted(W + 1j), Err("sample_weight")),
    ("rw-weight-without-estimator", lambda: RW().fit(G, Y, sample_weight=W), Err("sample_weight")),
    (
        "rw-weight-series-other-index",
        lambda: RW(estimator=_lr()).fit(
            X, Y, sensitive_features=G, sample_weight=pd.Series(W, index=IDX)
        ),
        Err("sample_weight"),
    ),
    ("rw-weight-valid", lambda: rw_fit_weighted(W), Val(rw_weighted_equals_hand)),
    (
        "ts-score-weight-negative",
        lambda: ts_fitted().score(S, Y, sample_weight=-W, sensitive_features=G),
        Err("sample_weight"),
    ),
    (
        "ts-score-weight-nan",
        lambda: ts_fitted().score(S, Y, sample_weight=np.r_[np.nan, W[1:]], sensitive_features=G),
        Err("sample_weight"),
    ),
    (
        "ts-score-weight-valid",
        lambda: ts_fitted().score(S, Y, sample_weight=W, sensitive_features=G),
        Val(weighted_score_check),
    ),
    (
        "ts-fairness-score-weight",
        lambda: ts_fitted().fairness_score(S, Y, sensitive_features=G, sample_weight=W),
        Err("sample_weight"),
    ),
    (
        "scorer-weight",
        lambda: _m().make_fair_scorer()(ts_fitted(), S, Y, sensitive_features=G, sample_weight=W),
        Err("sample_weight"),
    ),
    # --- pairing of pandas inputs ----------------------------------------------------------------------------------
    (
        "ts-y-series-shuffled-index",
        lambda: TS().fit(S, pd.Series(Y, index=SHUF), G.set_index(IDX)),
        Err("y"),
    ),
    ("ts-y-series-other-labels", lambda: TS().fit(S, pd.Series(Y, index=IDX), G), Err("y")),
    (
        "ts-scores-series-shuffled",
        lambda: TS().fit(pd.Series(S, index=SHUF), Y, G.set_index(IDX)),
        Err("X", "scores"),
    ),
    (
        "ts-features-frame-shuffled",
        lambda: TS(estimator=_lr()).fit(
            pd.DataFrame(X, index=SHUF), Y, sensitive_features=G.set_index(IDX)
        ),
        Err("X"),
    ),
    (
        "ts-predict-groups-shuffled",
        lambda: ts_estimator_fitted().predict(
            pd.DataFrame(X, index=IDX), sensitive_features=G.set_index(SHUF)
        ),
        Err("X", "sensitive_features"),
    ),
    (
        "ts-aligned-custom-index",
        lambda: _quiet(
            lambda: TS().fit(pd.Series(S, index=IDX), pd.Series(Y, index=IDX), G.set_index(IDX))
        ),
        Val(same_thresholds_as_arrays(TS)),
    ),
    (
        "ts-arrays-with-shuffled-groups",  # arrays carry no labels: they pair by position with the groups' rows
        lambda: _quiet(lambda: TS().fit(S, Y, G.set_index(SHUF))),
        Val(same_thresholds_as_arrays(TS)),
    ),
    ("ts-dict-of-series-shuffled", lambda: dict_of_series(shift=True), Err("groups")),
    (
        "ts-dict-of-series-aligned",
        lambda: _quiet(lambda: dict_of_series()),
        Val(same_thresholds_as_arrays(TS)),
    ),
    (
        "gr-y-series-shuffled",
        lambda: GR().fit(S, pd.Series(Y, index=SHUF), G.set_index(IDX)),
        Err("y"),
    ),
    (
        "rw-y-series-shuffled",
        lambda: RW().fit(G.set_index(IDX), pd.Series(Y, index=SHUF)),
        Err("y"),
    ),
    (
        "rw-features-frame-shuffled",
        lambda: RW(estimator=_lr()).fit(
            pd.DataFrame(X, index=SHUF), Y, sensitive_features=G.set_index(IDX)
        ),
        Err("X"),
    ),
    (
        "rw-transform-y-shuffled",
        lambda: RW().fit(G, Y).transform(G.set_index(IDX), pd.Series(Y, index=SHUF)),
        Err("y"),
    ),
    (
        "dba-y-shuffled",
        lambda: _m().di_by_attribute(pd.Series(Y, index=SHUF), YP, G.set_index(IDX)),
        Err("y_true"),
    ),
    (
        "cba-y-pred-shuffled",
        lambda: cba("equal_opportunity", pd.Series(YP, index=SHUF), G.set_index(IDX)),
        Err("y_pred"),
    ),
    (
        "ts-score-y-shuffled",
        lambda: ts_fitted().score(S, pd.Series(Y, index=SHUF), sensitive_features=G.set_index(IDX)),
        Err("y"),
    ),
    (
        "ts-fairness-score-y-shuffled",
        lambda: ts_fitted().fairness_score(
            S, pd.Series(Y, index=SHUF), sensitive_features=G.set_index(IDX)
        ),
        Err("y"),
    ),
    (
        "scorer-features-shuffled",
        lambda: _m().make_fair_scorer()(
            ts_estimator_fitted(),
            pd.DataFrame(X, index=SHUF),
            Y,
            sensitive_features=G.set_index(IDX),
        ),
        Err("X"),
    ),
    # --- group columns ---------------------------------------------------------------------------------------------
    ("ts-group-nan", lambda: TS().fit(S, Y, one_missing("race", np.nan)), Err("groups")),
    ("ts-group-none", lambda: TS().fit(S, Y, one_missing("sex", None)), Err("groups")),
    ("ts-group-pd-na", lambda: TS().fit(S, Y, one_missing("sex", pd.NA)), Err("groups")),
    ("ts-group-blank", lambda: TS().fit(S, Y, one_missing("race", "")), Err("groups")),
    ("ts-group-whitespace", lambda: TS().fit(S, Y, one_missing("race", "  ")), Err("groups")),
    (
        "ts-group-categorical-absent-level",  # a value outside the categories is read as missing by pandas
        lambda: TS().fit(S, Y, G.assign(race=pd.Categorical(G.race, categories=["a", "b"]))),
        Err("groups"),
    ),
    (
        "ts-group-missing-in-di-column-only",
        lambda: TS(cell_columns=("sex",)).fit(S, Y, one_missing("race", None)),
        Err("groups"),
    ),
    (
        "ts-cell-column-absent",
        lambda: TS(cell_columns=("sex", "age"), di_columns=("sex",)).fit(S, Y, G),
        Err("groups"),
    ),
    (
        "rw-group-nan-keyword",
        lambda: RW(estimator=_lr()).fit(X, Y, sensitive_features=one_missing("race", np.nan)),
        Err("sensitive_features"),
    ),
    ("rw-group-blank", lambda: RW().fit(one_missing("sex", ""), Y), Err("groups")),
    ("gr-group-none", lambda: GR().fit(S, Y, one_missing("race", None)), Err("groups")),
    (
        "ts-predict-group-nan",
        lambda: ts_fitted().predict(S, one_missing("race", np.nan)),
        Err("groups"),
    ),
    (
        "rw-transform-group-blank",
        lambda: RW().fit(G, Y).transform(one_missing("sex", " "), Y),
        Err("groups"),
    ),
    (
        "ts-groups-dict-ragged",
        lambda: TS().fit(S, Y, {"sex": G.sex.to_numpy(), "race": G.race.to_numpy()[:-1]}),
        Err("groups"),
    ),
    ("ts-groups-empty-dict", lambda: TS().fit(S, Y, {}), Err("groups")),
    (
        "ts-groups-duplicated-columns",
        lambda: TS().fit(S, Y, pd.concat([G, G[["sex"]]], axis=1)),
        Err("groups"),
    ),
    (
        "cba-group-nan",
        lambda: cba("demographic_parity", YP, one_missing("sex", np.nan)),
        Err("sensitive_features"),
    ),
    (
        "ts-codes-with-leading-zeros",  # "007" and "7" are two groups
        lambda: _quiet(
            lambda: TS().fit(S, Y, pd.DataFrame({"site": np.where(np.arange(N) % 2, "007", "7")}))
        ),
        Val(lambda est: sorted(est.cells_.get_level_values(0)) == ["007", "7"]),
    ),
    (
        "ts-groups-named-series",
        lambda: _quiet(lambda: TS().fit(S, Y, G.race)),
        Val(
            lambda est: (
                est.cell_columns_ == ("race",)
                and sorted(est.cells_.get_level_values(0)) == ["a", "b", "c"]
            )
        ),
    ),
    # --- constraints -----------------------------------------------------------------------------------------------
    ("ts-constraint-unknown", lambda: TS(constraint="parity").fit(S, Y, G), Err("constraint")),
    (
        "ts-constraint-fairlearn-name",
        lambda: TS(constraint="true_positive_rate_parity").fit(S, Y, G),
        Err("constraint"),
    ),
    ("ts-constraint-none", lambda: TS(constraint=None).fit(S, Y, G), Err("constraint")),
    (
        "ts-tolerance-negative",
        lambda: TS(constraint="equal_opportunity", tolerance=-0.1).fit(S, Y, G),
        Err("tolerance"),
    ),
    (
        "ts-tolerance-above-one",
        lambda: TS(constraint="equalized_odds", tolerance=1.5).fit(S, Y, G),
        Err("tolerance"),
    ),
    (
        "ts-tolerance-nan",
        lambda: TS(constraint="equal_opportunity", tolerance=float("nan")).fit(S, Y, G),
        Err("tolerance"),
    ),
    (
        "ts-tolerance-text",
        lambda: TS(constraint="equal_opportunity", tolerance="0.1").fit(S, Y, G),
        Err("tolerance"),
    ),
    ("gr-constraint-unknown", lambda: GR(constraint="odds").fit(S, Y, G), Err("constraint")),
    ("gr-tolerance-negative", lambda: GR(tolerance=-1).fit(S, Y, G), Err("tolerance")),
    ("scorer-constraint-unknown", lambda: _m().make_fair_scorer("eo"), Err("constraint")),
    (
        "scorer-tolerance-negative",
        lambda: _m().make_fair_scorer("equal_opportunity", tolerance=-0.5),
        Err("tolerance"),
    ),
    ("cba-constraint-unknown", lambda: cba("equal_odds", YP), Err("constraint")),
    ("ts-dp-holds", lambda: ts_fitted(), Val(holds("DI", 0.8))),
    ("ts-eo-holds", lambda: ts_fitted(constraint="equal_opportunity"), Val(holds("EOpp", 0.1))),
    (
        "ts-eo-tight-tolerance",
        lambda: ts_fitted(constraint="equal_opportunity", tolerance=0.03),
        Val(holds("EOpp", 0.03)),
    ),
    ("ts-eodds-holds", lambda: ts_fitted(constraint="equalized_odds"), Val(holds("EOD", 0.1))),
    (
        "ts-eo-with-estimator",
        lambda: ts_estimator_fitted(constraint="equal_opportunity"),
        Val(
            lambda est: (
                estimator_check(est)
                and holds("EOpp", 0.1, scores=_lr().fit(X, Y).predict_proba(X)[:, 1])(est)
            )
        ),
    ),
    (
        "ts-eo-infeasible-is-reported",  # a 0.25 grid cannot bring TPRs within 0.001: feasible_ is False, and it is
        lambda: ts_fitted(constraint="equal_opportunity", tolerance=0.001, step=0.25),
        Val(
            lambda est: (
                not est.feasible_ and max(v["EOpp"] for v in recount(est, S, Y, G).values()) > 0.001
            )
        ),
    ),
    (
        "gr-eo-holds",
        lambda: _quiet(lambda: GR(constraint="equal_opportunity").fit(S, Y, G)),
        Val(holds("EOpp", 0.1)),
    ),
    (
        "gr-eodds-holds",
        lambda: _quiet(lambda: GR(constraint="equalized_odds").fit(S, Y, G)),
        Val(holds("EOD", 0.1)),
    ),
    ("gr-dp-holds", lambda: _quiet(lambda: GR().fit(S, Y, G)), Val(holds("DI", 0.8))),
    (
        "ts-eo-oos-consistent",
        lambda: ts_fitted(constraint="equal_opportunity", oos_resamples=8),
        Val(oos_consistency),
    ),
    (
        "ts-eodds-oos-consistent",
        lambda: ts_fitted(constraint="equalized_odds", oos_resamples=8),
        Val(oos_consistency),
    ),
    ("ts-dp-oos-consistent", lambda: ts_fitted(oos_resamples=8), Val(oos_consistency)),
    (
        "ts-eo-oos-skipped",
        lambda: ts_fitted(constraint="equal_opportunity"),
        Undef(lambda est: est.constraint_vfr_),
    ),
    ("cba-eo-value", lambda: cba("equal_opportunity", YP), Val(cba_check("EOpp"))),
    ("cba-eodds-value", lambda: cba("equalized_odds", YP), Val(cba_check("EOD"))),
    ("cba-dp-value", lambda: cba("demographic_parity", YP), Val(cba_check("DI"))),
    (
        "cba-eo-one-group-left",
        lambda: cba("equal_opportunity", YP, min_support=500),
        Undef(lambda v: v["race"]),
    ),
    ("cba-eo-group-without-positives", lambda: no_positive_group(), Undef(lambda v: v["race"])),
    (
        "ts-eo-undefined-gap-is-infeasible",
        lambda: eo_undefined_fit(),
        Val(
            lambda est: (
                not est.feasible_
                and np.isnan(est.search_.filter(like="EOpp_race").to_numpy()).all()
            )
        ),
    ),
    (
        "scorer-eo-value",
        lambda: scorer_value("equal_opportunity"),
        Val(scorer_check("equal_opportunity", "EOpp", 0.1)),
    ),
    (
        "scorer-eodds-value",
        lambda: scorer_value("equalized_odds"),
        Val(scorer_check("equalized_odds", "EOD", 0.1)),
    ),
    (
        "scorer-dp-value",
        lambda: scorer_value("demographic_parity"),
        Val(scorer_check("demographic_parity", "DI", 0.8)),
    ),
    (
        "scorer-tolerance-override",
        lambda: scorer_value("equal_opportunity", tolerance=0.0),
        Val(scorer_check("equal_opportunity", "EOpp", 0.0)),
    ),
    # --- prefit and wrapped estimators -----------------------------------------------------------------------------
    (
        "ts-prefit-unfitted",
        lambda: TS(estimator=_lr(), prefit=True).fit(X, Y, sensitive_features=G),
        Err("estimator"),
    ),
    (
        "ts-estimator-without-proba",
        lambda: TS(estimator=object()).fit(X, Y, sensitive_features=G),
        Err("estimator"),
    ),
    ("ts-prefit-fitted", lambda: prefit_predict(), Val(prefit_check)),
    ("ts-estimator-fitted-here", lambda: ts_estimator_fitted(), Val(estimator_check)),
    (
        "ts-y-three-classes",
        lambda: TS(estimator=_lr()).fit(X, np.r_[Y[:-1], 2], sensitive_features=G),
        Err("y"),
    ),
    (
        "ts-y-nan-with-estimator",
        lambda: TS(estimator=_lr()).fit(X, np.r_[np.nan, Y[1:]], sensitive_features=G),
        Err("y"),
    ),
    ("gr-y-text", lambda: GR().fit(S, np.where(Y == 1, "yes", "no"), G), Err("y")),
    ("rw-predict-without-estimator", lambda: RW().fit(G, Y).predict(X), Err("estimator")),
    ("ts-predict-before-fit", lambda: TS().predict(S, G), Err("self")),
    ("ts-fit-without-groups", lambda: TS(estimator=_lr()).fit(X, Y), Err("sensitive_features")),
    ("ts-groups-twice", lambda: TS().fit(S, Y, G, sensitive_features=G), Err("sensitive_features")),
    # --- predict on unseen and small groups ------------------------------------------------------------------------
    ("ts-predict-unseen-cell", lambda: unseen_predict(), Val(unseen_check)),
    (
        "gr-predict-unseen-cell",
        lambda: gr_unseen(),
        Val(lambda r: np.array_equal(r[2], (S[:30] >= r[0].default_threshold_).astype(int))),
    ),
    ("ts-predict-small-cell", lambda: small_cell_predict(), Val(small_cell_check)),
    (
        "rw-transform-unseen-cell",
        lambda: RW().fit(G, Y).transform(G.assign(race="zz"), Y),
        Err("groups"),
    ),
    ("ts-predict-lacks-cell-column", lambda: ts_fitted().predict(S, G[["sex"]]), Err("groups")),
    ("ts-predict-scores-above-one", lambda: ts_fitted().predict(S + 1, G), Err("scores")),
    # --- pipelines and searches ------------------------------------------------------------------------------------
    ("pipeline-routing-off", lambda: pipeline_routing_off(), Val(pipeline_check)),
    ("gridsearch-default-is-accuracy", lambda: search(), Val(search_checks(accuracy))),
    ("gridsearch-fair-scorer", lambda: fair_search(), Val(search_checks(penalised_dp))),
    ("cross-val-fair-scorer", lambda: cv_score(), Val(cv_check)),
    (
        "scorer-predict-not-requested",
        lambda: scorer_pipeline_unrequested_predict(),
        Err("sensitive_features"),
    ),
    (
        "scorer-without-groups",
        lambda: _m().make_fair_scorer()(ts_fitted(), S, Y),
        Err("sensitive_features"),
    ),
]
