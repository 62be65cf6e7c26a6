"""fairlib.models: feature pipelines (train-only encodings), splits (disjoint, stratified), the frozen
twelve-model registry, fitting with fit times, predictions and performance.

Oracles: pandas group means on the training partition for the target encoding, numpy for accuracy /
F1, scipy's Mann-Whitney U for AUROC, set algebra for the splits.
"""

import numpy as np
import pytest
from scipy import stats

from fairlib.vfr.twin import synthetic_texas100x
from fairlib.vfr.texas import prepare_cohort, END_OF_ENCOUNTER
from fairlib.vfr.panel import (
    PANEL,
    CANONICAL_MODEL,
    model_spec,
    fit_model,
    fit_panel,
    panel_predictions,
    panel_performance,
    default_n_jobs,
    PAPER_TABLE4,
)
from fairlib.vfr.features import (
    FeaturePipeline,
    feature_columns,
    paper_split,
    clean_split,
    make_split,
    train_subsample,
    PROTECTED_RAW,
)


@pytest.fixture(scope="module")
def cohort():
    return prepare_cohort(synthetic_texas100x(n=30_000, seed=1))


# --- features ---------------------------------------------------------------------------------------


def test_feature_sets():
    full, lean = feature_columns("full"), feature_columns("admission_lean")
    assert not set(PROTECTED_RAW) & set(full)
    assert set(full) - set(lean) == set(END_OF_ENCOUNTER)
    assert set(PROTECTED_RAW) <= set(feature_columns("full", protected_as_features=True))
    assert "PAT_AGE" not in feature_columns("full", exclude=("PAT_AGE",))
    with pytest.raises(ValueError, match="`feature_set`"):
        feature_columns("everything")
    with pytest.raises(ValueError, match="`exclude`"):
        feature_columns("full", exclude=("RACE",))


def test_target_encoding_uses_training_labels_only(cohort):
    s = clean_split(cohort.los_gt3)
    tr, au = cohort.iloc[s.train], cohort.iloc[s.audit]
    fp = FeaturePipeline("full", seed=0).fit(tr)
    X = fp.transform(au)
    # audit labels do not matter at all
    assert np.array_equal(fp.transform(au.assign(los_gt3=1 - au.los_gt3)), X)
    # ... training labels do
    fp2 = FeaturePipeline("full", seed=0).fit(tr.assign(los_gt3=1 - tr.los_gt3))
    assert not np.array_equal(fp2.transform(au), X)
    # oracle: the encoding of a frequent diagnosis is (close to) its LOS>3 rate in the TRAINING partition
    col = fp.feature_names_out_.index("ADMITTING_DIAGNOSIS")
    code = tr.ADMITTING_DIAGNOSIS.value_counts().index[0]
    train_rate = tr.loc[tr.ADMITTING_DIAGNOSIS == code, "los_gt3"].mean()
    enc = X[(au.ADMITTING_DIAGNOSIS == code).to_numpy(), col]
    assert enc.size and np.allclose(enc, enc[0]) and abs(enc[0] - train_rate) < 0.02


def test_feature_pipeline_shapes_and_errors(cohort):
    tr = cohort.iloc[:5000]
    Xf = FeaturePipeline("full").fit_transform(tr)
    Xl = FeaturePipeline("admission_lean").fit_transform(tr)
    assert Xf.dtype == np.float32 and Xf.shape[0] == 5000 and Xl.shape[1] < Xf.shape[1]
    assert np.isfinite(Xf).all()
    with pytest.raises(ValueError, match="lacks feature column"):
        FeaturePipeline("full").fit(tr.drop(columns="TOTAL_CHARGES"))
    with pytest.raises(ValueError, match="call fit"):
        FeaturePipeline("full").transform(tr)
    with pytest.raises(ValueError, match="`y`"):
        FeaturePipeline("full").fit(tr.drop(columns="los_gt3"))


# --- splits -----------------------------------------------------------------------------------------


def test_paper_split_sizes_and_stratification():
    rng = np.random.default_rng(0)
    y = rng.binomial(1, 0.45, 925_128)
    s = paper_split(y)
    assert s.sizes() == dict(train=740_102, selection=0, audit=185_026)
    assert len(np.intersect1d(s.train, s.audit)) == 0
    assert np.array_equal(np.union1d(s.train, s.audit), np.arange(y.size))
    assert abs(y[s.train].mean() - y[s.audit].mean()) < 1e-5


@pytest.mark.parametrize("seed", [42, 7])
def test_clean_split_is_disjoint_complete_and_stratified(cohort, seed):
    y = cohort.los_gt3.to_numpy()
    s = clean_split(y, seed=seed)
    parts = [s.train, s.selection, s.audit]
    for i in range(3):
        for j in range(i + 1, 3):
            assert len(np.intersect1d(parts[i], parts[j])) == 0
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(y.size))
    n = y.size
    assert (
        abs(len(s.train) - 0.70 * n) <= 1
        and abs(len(s.selection) - 0.15 * n) <= 1
        and abs(len(s.audit) - 0.15 * n) <= 2
    )
    for p in parts:
        assert abs(y[p].mean() - y.mean()) < 2e-3
    s2 = clean_split(y, seed=seed)
    assert all(np.array_equal(a, b) for a, b in zip(parts, [s2.train, s2.selection, s2.audit]))
    assert not np.array_equal(s.audit, clean_split(y, seed=seed + 1).audit)


def test_split_errors_and_subsample(cohort):
    with pytest.raises(ValueError, match="`protocol`"):
        make_split(cohort.los_gt3, "60_40")
    with pytest.raises(ValueError, match="`y`"):
        paper_split([1, 0])
    s = make_split(cohort.los_gt3, "80_20")
    sub = train_subsample(s, cohort.los_gt3, 3000, seed=0)
    assert len(sub) == 3000 and np.isin(sub, s.train).all() and len(np.unique(sub)) == 3000
    y = cohort.los_gt3.to_numpy()
    assert abs(y[sub].mean() - y[s.train].mean()) < 1e-3
    assert np.array_equal(train_subsample(s, y, None), s.train)
    assert np.array_equal(train_subsample(s, y, 10**9), s.train)
    with pytest.raises(ValueError, match="`n`"):
        train_subsample(s, y, 5)


# --- registry and fitting ---------------------------------------------------------------------------

PAPER_NAMES = {
    "logistic regression",
    "decision tree",
    "random forest",
    "gradient boosting",
    "adaboost",
    "xgboost",
    "lightgbm",
    "catboost",
    "histgradientboosting",
    "bagging",
    "extra trees",
    "stacking ensemble",
}


def test_registry_is_the_papers_twelve():
    assert len(PANEL) == 12 and {s.label.lower() for s in PANEL.values()} == PAPER_NAMES
    assert CANONICAL_MODEL == "xgboost"
    assert list(PAPER_TABLE4.model) == list(PANEL)
    est = PANEL["random_forest"].build(n_jobs=1, seed=3)
    gp = est.get_params()
    assert (
        all(gp[k] == v for k, v in PANEL["random_forest"].params.items())
        and gp["random_state"] == 3
    )
    assert PANEL["random_forest"].build() is not PANEL["random_forest"].build()  # fresh each time
    with pytest.raises(TypeError):  # frozen configurations
        PANEL["xgboost"].params["max_depth"] = 3
    with pytest.raises(ValueError, match="unknown model 'svm'"):
        model_spec("svm")


def test_n_jobs_comes_from_site_setting(monkeypatch):
    monkeypatch.setenv("FAIRLIB_N_JOBS", "1")
    assert default_n_jobs() == 1
    monkeypatch.setenv("FAIRLIB_N_JOBS", "-1")
    assert default_n_jobs() == -1
    fm = fit_model(
        "random_forest", np.random.default_rng(0).random((60, 3)), np.r_[np.zeros(30), np.ones(30)]
    )
    assert fm.estimator.n_jobs == -1


@pytest.fixture(scope="module")
def small_panel(cohort):
    s = clean_split(cohort.los_gt3)
    tr = train_subsample(s, cohort.los_gt3, 2500)
    fp = FeaturePipeline("full")
    Xtr = fp.fit_transform(cohort.iloc[tr])
    Xau = fp.transform(cohort.iloc[s.audit])
    fitted = fit_panel(Xtr, cohort.los_gt3.to_numpy()[tr], n_jobs=1, progress=False)
    return fitted, panel_predictions(fitted, Xau, cohort.iloc[s.audit]), cohort.iloc[s.audit]


def test_all_twelve_fit_and_predict(small_panel):
    fitted, pred, audit = small_panel
    assert list(fitted) == list(PANEL)
    for k, fm in fitted.items():
        assert fm.fit_seconds > 0 and fm.n_train == 2500 and fm.label == PANEL[k].label
    assert len(pred) == 12 * len(audit)
    assert list(pred.columns) == [
        "model",
        "y_true",
        "y_prob",
        "y_pred",
        "race",
        "sex",
        "ethnicity",
        "age_bucket",
    ]
    assert pred.y_prob.between(0, 1).all() and (pred.y_pred == (pred.y_prob >= 0.5)).all()
    f = pred[pred.model == "xgboost"]
    assert (f.y_true.to_numpy() == audit.los_gt3.to_numpy()).all() and (
        f.race.to_numpy() == audit.race.to_numpy()
    ).all()


def test_performance_against_independent_formulas(small_panel):
    _, pred, _ = small_panel
    perf = panel_performance(pred).set_index("model")
    for k, f in pred.groupby("model"):
        y, yh, p = f.y_true.to_numpy(), f.y_pred.to_numpy(), f.y_prob.to_numpy()
        tp = ((y == 1) & (yh == 1)).sum()
        fp_ = ((y == 0) & (yh == 1)).sum()
        fn = ((y == 1) & (yh == 0)).sum()
        assert perf.loc[k, "accuracy"] == pytest.approx((y == yh).mean())
        assert perf.loc[k, "f1"] == pytest.approx(2 * tp / (2 * tp + fp_ + fn))
        u = stats.mannwhitneyu(p[y == 1], p[y == 0]).statistic
        assert perf.loc[k, "auroc"] == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()))
        assert perf.loc[k, "auroc"] > 0.75  # every model learns the twin's signal


def test_prediction_errors(small_panel, cohort):
    fitted, _, audit = small_panel
    X = np.zeros((len(audit), 3), np.float32)
    with pytest.raises(ValueError, match="`frame`"):
        panel_predictions(fitted, X[:10], audit)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['race'\]"):
        panel_predictions(fitted, X, audit.drop(columns="race"))
    with pytest.raises(ValueError, match="`y`"):
        fit_model("decision_tree", X, np.zeros(5))


# --- determinism across worker counts and the prediction cache ----------------------------------------


@pytest.mark.parametrize("key", ["random_forest", "extra_trees", "bagging", "catboost"])
def test_scores_are_bit_identical_across_worker_counts(cohort, key):
    "Bagged ensembles used to differ in the last bit with 2 workers, CatBoost by up to 0.35: both fixed."
    s = paper_split(cohort.los_gt3)
    tr = train_subsample(s, cohort.los_gt3, 3000)
    fp = FeaturePipeline("full", seed=0)
    X = fp.fit_transform(cohort.iloc[tr])
    Xa = fp.transform(cohort.iloc[s.audit[:3000]])
    y = cohort.los_gt3.to_numpy()[tr]
    a = fit_model(key, X, y, n_jobs=1).predict_proba(Xa)
    b = fit_model(key, X, y, n_jobs=2).predict_proba(Xa)
    assert np.array_equal(a, b)


def test_prediction_cache_key_follows_the_content(cohort, tmp_path):
    from fairlib.core import content_hash
    from fairlib.vfr.panel import prediction_cache_key, save_cached_scores, load_cached_scores

    s = paper_split(cohort.los_gt3)
    tr = train_subsample(s, cohort.los_gt3, 2000)
    fp = FeaturePipeline("full", seed=0)
    fp.fit(cohort.iloc[tr])
    kw = dict(split=s, pipeline=fp, train_rows=tr, model="xgboost", seed=42)
    k = prediction_cache_key(content_hash(cohort), **kw)
    assert k == prediction_cache_key(content_hash(cohort.copy()), **kw)  # same content, same key
    changed = cohort.copy()
    changed["ADMITTING_DIAGNOSIS"] = (
        changed["ADMITTING_DIAGNOSIS"].sample(frac=1, random_state=0).to_numpy()
    )
    changed["PAT_STATUS"] = changed["PAT_STATUS"][::-1].to_numpy()  # two feature columns changed
    assert (
        prediction_cache_key(content_hash(changed), **kw) != k
    )  # size and label unchanged, key not
    assert prediction_cache_key(content_hash(cohort), **(kw | dict(model="lightgbm"))) != k
    f = save_cached_scores(tmp_path / "x.npz", np.array([0.2, 0.7]), fit_seconds=1.0, key=k)
    assert load_cached_scores(f, key=k)[0].tolist() == [0.2, 0.7]
    with pytest.raises(ValueError, match="delete it and rerun"):
        load_cached_scores(f, key="other")
    f.write_bytes(f.read_bytes()[:40])  # a truncated file
    with pytest.raises(ValueError, match=r"x\.npz is corrupt.*delete it"):
        load_cached_scores(f)
    assert not list(tmp_path.glob(".*.tmp"))  # atomic: no temp file left
