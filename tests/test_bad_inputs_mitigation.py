"""Every bad input to fairlib.mitigation raises FairlibInputError naming the argument."""

import numpy as np
import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib.mitigation.reweighing import IntersectionalReweighing, intersection_codes
from fairlib.mitigation.reweighing import CELL_ATTRIBUTES, DI_ATTRIBUTES
from fairlib.mitigation.thresholds import ThresholdShift, di_by_attribute
from fairlib.mitigation.refinement import GreedyRefinement
from fairlib.mitigation.parity import (
    constraint_by_attribute,
    fairness_penalised_score,
    make_fair_scorer,
)
from fairlib.vfr.baselines import accuracy_cost, baseline_summary, vfr_movement
from fairlib.vfr.selection import fit_weighted, with_selection, fit_on_selection
from fairlib.vfr.features import make_split

TEXAS = dict(
    cell_columns=CELL_ATTRIBUTES, di_columns=DI_ATTRIBUTES
)  # the VFR paper's columns (no longer defaults)


def GR(**kw):
    "B4 started from a B3 on the Texas-100X columns (the estimators' defaults name no data set's columns)."
    return GreedyRefinement(**{"base": ThresholdShift(**TEXAS), **kw})


def RW(*args, **kw):
    "B2 on the Texas-100X cells."
    return IntersectionalReweighing(*args, **{"columns": CELL_ATTRIBUTES, **kw})


R = np.random.default_rng(0)
N = 400
G = pd.DataFrame(
    dict(
        race=R.choice(["A", "B"], N),
        age_bucket=R.choice(["o", "y"], N),
        sex=R.choice(["F", "M"], N),
        ethnicity=R.choice(["H", "N"], N),
    )
)
S = R.random(N)
Y = (R.random(N) < S).astype(int)
SPLIT = make_split(Y, "70_15_15")


def _LR():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression()


def g_with(**kw):
    g = G.copy()
    for k, v in kw.items():
        g[k] = v
    return g


def nan_race():
    g = G.copy().astype(object)
    g.loc[3, "race"] = None
    return g


def dup_cols():
    return pd.concat([G, G[["race"]]], axis=1)


CASES = [
    # --- B2 reweighing ---
    ("rw-lam-negative", lambda: RW(lam=-1).fit(G, Y), "lam"),
    ("rw-lam-string", lambda: RW(lam="2").fit(G, Y), "lam"),
    ("rw-lam-nan", lambda: RW(lam=float("nan")).fit(G, Y), "lam"),
    ("rw-clip-zero", lambda: RW(clip=(0, 10)).fit(G, Y), "clip"),
    ("rw-clip-above-one", lambda: RW(clip=(2, 10)).fit(G, Y), "clip"),
    ("rw-clip-scalar", lambda: RW(clip=5).fit(G, Y), "clip"),
    (
        "rw-variant-unknown",
        lambda: RW(variant="aif").fit(G, Y),
        "variant",
    ),
    ("rw-groups-list", lambda: RW().fit([1, 2, 3], Y[:3]), "groups"),
    (
        "rw-groups-missing-column",
        lambda: RW().fit(G.drop(columns="sex"), Y),
        "groups",
    ),
    ("rw-groups-missing-value", lambda: RW().fit(nan_race(), Y), "groups"),
    ("rw-groups-empty", lambda: RW().fit(G.iloc[:0], Y[:0]), "groups"),
    (
        "rw-groups-duplicated-columns",
        lambda: RW().fit(dup_cols(), Y),
        "groups",
    ),
    (
        "rw-groups-dict-ragged",
        lambda: RW().fit(dict(race=["a"], age_bucket=["b", "c"], sex=["F"]), Y[:1]),
        "groups",
    ),
    ("rw-y-not-binary", lambda: RW().fit(G, Y * 2), "y"),
    ("rw-y-wrong-length", lambda: RW().fit(G, Y[:-1]), "y"),
    (
        "rw-y-misaligned-series",
        lambda: RW().fit(G, pd.Series(Y, index=np.arange(N) + 1000)),
        "y",
    ),
    ("rw-y-missing", lambda: RW().fit(G), "y"),
    ("rw-transform-before-fit", lambda: RW().transform(G, Y), "self"),
    (
        "rw-transform-unseen-cell",
        lambda: RW().fit(G, Y).transform(g_with(race=["Z"] * N), Y),
        "groups",
    ),
    ("rw-transform-y-missing", lambda: RW().fit(G, Y).transform(G), "y"),
    # --- fit_weighted ---
    ("fw-unknown-model", lambda: fit_weighted("svm", np.zeros((N, 2)), Y, np.ones(N)), "model"),
    (
        "fw-weight-length",
        lambda: fit_weighted("logistic_regression", np.zeros((N, 2)), Y, np.ones(N - 1)),
        "sample_weight",
    ),
    (
        "fw-weight-negative",
        lambda: fit_weighted("logistic_regression", np.zeros((N, 2)), Y, -np.ones(N)),
        "sample_weight",
    ),
    (
        "fw-weight-nan",
        lambda: fit_weighted("logistic_regression", np.zeros((N, 2)), Y, np.full(N, np.nan)),
        "sample_weight",
    ),
    (
        "fw-y-length",
        lambda: fit_weighted("logistic_regression", np.zeros((N, 2)), Y[:-1], np.ones(N)),
        "y",
    ),
    # --- B3 threshold shifting ---
    ("ts-alphas-empty", lambda: ThresholdShift(**TEXAS, alphas=()).fit(S, Y, G), "alphas"),
    (
        "ts-alphas-out-of-range",
        lambda: ThresholdShift(**TEXAS, alphas=(1.5,)).fit(S, Y, G),
        "alphas",
    ),
    ("ts-alphas-string", lambda: ThresholdShift(**TEXAS, alphas=("a",)).fit(S, Y, G), "alphas"),
    ("ts-min-cell-zero", lambda: ThresholdShift(**TEXAS, min_cell=0).fit(S, Y, G), "min_cell"),
    (
        "ts-di-target-above-one",
        lambda: ThresholdShift(**TEXAS, di_target=1.5).fit(S, Y, G),
        "di_target",
    ),
    ("ts-step-too-big", lambda: ThresholdShift(**TEXAS, step=0.3).fit(S, Y, G), "step"),
    ("ts-step-uneven", lambda: ThresholdShift(**TEXAS, step=0.03).fit(S, Y, G), "step"),
    (
        "ts-base-threshold-one",
        lambda: ThresholdShift(**TEXAS, base_threshold=1.0).fit(S, Y, G),
        "base_threshold",
    ),
    (
        "ts-min-support-negative",
        lambda: ThresholdShift(**TEXAS, min_support=-1).fit(S, Y, G),
        "min_support",
    ),
    (
        "ts-scores-nan",
        lambda: ThresholdShift(**TEXAS).fit(np.where(np.arange(N) == 3, np.nan, S), Y, G),
        "scores",
    ),
    ("ts-scores-above-one", lambda: ThresholdShift(**TEXAS).fit(S + 1, Y, G), "scores"),
    ("ts-scores-strings", lambda: ThresholdShift(**TEXAS).fit(np.array(["a"] * N), Y, G), "scores"),
    ("ts-scores-length", lambda: ThresholdShift(**TEXAS).fit(S[:-2], Y, G), "scores"),
    (
        "ts-groups-lacks-ethnicity",
        lambda: ThresholdShift(**TEXAS).fit(S, Y, G.drop(columns="ethnicity")),
        "groups",
    ),
    ("ts-y-not-binary", lambda: ThresholdShift(**TEXAS).fit(S, Y + 1, G), "y"),
    (
        "ts-oos-resamples-negative",
        lambda: ThresholdShift(**TEXAS, oos_resamples=-1).fit(S, Y, G),
        "oos_resamples",
    ),
    (
        "ts-oos-resamples-float",
        lambda: ThresholdShift(**TEXAS, oos_resamples=2.5).fit(S, Y, G),
        "oos_resamples",
    ),
    (
        "ts-random-state-string",
        lambda: ThresholdShift(**TEXAS, random_state="0").fit(S, Y, G),
        "random_state",
    ),
    (
        "ts-random-state-negative",
        lambda: ThresholdShift(**TEXAS, random_state=-3).fit(S, Y, G),
        "random_state",
    ),
    (
        "ts-cell-columns-string",
        lambda: ThresholdShift(cell_columns="race").fit(S, Y, G),
        "cell_columns",
    ),
    ("ts-di-columns-empty", lambda: ThresholdShift(di_columns=()).fit(S, Y, G), "di_columns"),
    (
        "rw-columns-duplicated",
        lambda: IntersectionalReweighing(columns=("race", "race")).fit(G, Y),
        "columns",
    ),
    ("dba-min-support-negative", lambda: di_by_attribute(Y, Y, G, min_support=-1), "min_support"),
    ("dba-attributes-string", lambda: di_by_attribute(Y, Y, G, attributes="race"), "attributes"),
    ("ts-predict-before-fit", lambda: ThresholdShift(**TEXAS).predict(S, G), "self"),
    (
        "ts-predict-scores-nan",
        lambda: ThresholdShift(**TEXAS).fit(S, Y, G).predict(np.full(N, np.nan), G),
        "scores",
    ),
    # --- B4 greedy refinement ---
    (
        "gr-n-resamples-one",
        lambda: GR(n_resamples=1).fit(S, Y, G),
        "n_resamples",
    ),
    (
        "gr-n-resamples-float",
        lambda: GR(n_resamples=10.5).fit(S, Y, G),
        "n_resamples",
    ),
    (
        "gr-max-iter-negative",
        lambda: GR(max_iter=-1).fit(S, Y, G),
        "max_iter",
    ),
    (
        "gr-resample-size-zero",
        lambda: GR(resample_size=0).fit(S, Y, G),
        "resample_size",
    ),
    (
        "gr-objective-calibration",
        lambda: GR(objective_metrics=["Cal"]).fit(S, Y, G),
        "objective_metrics",
    ),
    (
        "gr-objective-string",
        lambda: GR(objective_metrics="DI").fit(S, Y, G),
        "objective_metrics",
    ),
    (
        "gr-objective-unknown",
        lambda: GR(objective_metrics=["XYZ"]).fit(S, Y, G),
        "metric",
    ),
    (
        "gr-objective-empty",
        lambda: GR(objective_metrics=[]).fit(S, Y, G),
        "objective_metrics",
    ),
    ("gr-base-wrong-type", lambda: GreedyRefinement(base="b3").fit(S, Y, G), "base"),
    ("gr-seed-negative", lambda: GR(seed=-1).fit(S, Y, G), "seed"),
    ("gr-seed-string", lambda: GR(seed="42").fit(S, Y, G), "seed"),
    (
        "gr-oos-resamples-negative",
        lambda: GR(oos_resamples=-1).fit(S, Y, G),
        "oos_resamples",
    ),
    (
        "gr-random-state-float",
        lambda: GR(random_state=1.5).fit(S, Y, G),
        "random_state",
    ),
    (
        "gr-di-target-zero",
        lambda: GR(di_target=0).fit(S, Y, G),
        "di_target",
    ),
    (
        "gr-y-misaligned",
        lambda: GR().fit(S, pd.Series(Y, index=np.arange(N) * 2), G),
        "y",
    ),
    # --- issue 34: weights, pairing of pandas inputs, missing or blank group values ---
    (
        "rw-weight-negative",
        lambda: IntersectionalReweighing(estimator=_LR()).fit(
            np.c_[S], Y, sensitive_features=G, sample_weight=-np.ones(N)
        ),
        "sample_weight",
    ),
    (
        "rw-weight-nan",
        lambda: IntersectionalReweighing(estimator=_LR()).fit(
            np.c_[S], Y, sensitive_features=G, sample_weight=np.r_[np.nan, np.ones(N - 1)]
        ),
        "sample_weight",
    ),
    (
        "rw-weight-inf",
        lambda: IntersectionalReweighing(estimator=_LR()).fit(
            np.c_[S], Y, sensitive_features=G, sample_weight=np.r_[np.inf, np.ones(N - 1)]
        ),
        "sample_weight",
    ),
    (
        "rw-weight-without-estimator",
        lambda: RW().fit(G, Y, sample_weight=np.ones(N)),
        "sample_weight",
    ),
    (
        "ts-score-weight-negative",
        lambda: (
            ThresholdShift(**TEXAS, oos_resamples=0)
            .fit(S, Y, G)
            .score(S, Y, sample_weight=-np.ones(N), sensitive_features=G)
        ),
        "sample_weight",
    ),
    (
        "ts-y-shuffled-index",
        lambda: ThresholdShift(**TEXAS).fit(
            S, pd.Series(Y, index=np.random.default_rng(1).permutation(N)), G
        ),
        "y",
    ),
    (
        "ts-scores-shuffled-index",
        lambda: ThresholdShift(**TEXAS).fit(pd.Series(S, index=G.index[::-1]), Y, G),
        "X",
    ),
    (
        "ts-group-blank",
        lambda: ThresholdShift(**TEXAS).fit(S, Y, g_with(race=["A"] * (N - 1) + [" "])),
        "groups",
    ),
    (
        "ts-group-missing-keyword",
        lambda: ThresholdShift(**TEXAS).fit(S, Y, sensitive_features=nan_race()),
        "sensitive_features",
    ),
    ("rw-group-blank", lambda: RW().fit(g_with(sex=[""] + ["F"] * (N - 1)), Y), "groups"),
    # --- issue 35: constraints ---
    (
        "ts-constraint-unknown",
        lambda: ThresholdShift(**TEXAS, constraint="tpr").fit(S, Y, G),
        "constraint",
    ),
    (
        "ts-tolerance-negative",
        lambda: ThresholdShift(**TEXAS, constraint="equal_opportunity", tolerance=-0.01).fit(
            S, Y, G
        ),
        "tolerance",
    ),
    ("gr-constraint-unknown", lambda: GR(constraint="eo").fit(S, Y, G), "constraint"),
    ("scorer-constraint-unknown", lambda: make_fair_scorer("equal_odds"), "constraint"),
    (
        "scorer-no-groups",
        lambda: make_fair_scorer()(ThresholdShift(**TEXAS, oos_resamples=0).fit(S, Y, G), S, Y),
        "sensitive_features",
    ),
    (
        "cba-attributes-string",
        lambda: constraint_by_attribute(Y, Y, G, attributes="race"),
        "attributes",
    ),
    (
        "fps-tolerance-above-one",
        lambda: fairness_penalised_score(Y, Y, sensitive_features=G, tolerance=2),
        "tolerance",
    ),
    # --- splits and fitting on the selection partition ---
    ("ws-split-wrong-type", lambda: with_selection((1, 2), Y), "split"),
    ("ws-fraction-zero", lambda: with_selection(make_split(Y, "80_20"), Y, fraction=0), "fraction"),
    (
        "ws-fraction-one",
        lambda: with_selection(make_split(Y, "80_20"), Y, fraction=1.0),
        "fraction",
    ),
    ("ws-y-too-short", lambda: with_selection(make_split(Y, "80_20"), Y[:10]), "y"),
    (
        "fs-no-selection",
        lambda: fit_on_selection(ThresholdShift(**TEXAS), S, Y, G, make_split(Y, "80_20")),
        "split",
    ),
    (
        "fs-partition-unknown",
        lambda: fit_on_selection(ThresholdShift(**TEXAS), S, Y, G, SPLIT, partition="test"),
        "partition",
    ),
    ("fs-estimator-no-predict", lambda: fit_on_selection(object(), S, Y, G, SPLIT), "estimator"),
    (
        "fs-scores-short",
        lambda: fit_on_selection(ThresholdShift(**TEXAS), S[:100], Y, G, SPLIT),
        "scores",
    ),
    (
        "fs-groups-not-frame",
        lambda: fit_on_selection(ThresholdShift(**TEXAS), S, Y, G.to_numpy(), SPLIT),
        "groups",
    ),
    (
        "fs-split-beyond-rows",
        lambda: fit_on_selection(ThresholdShift(**TEXAS), S[:200], Y[:200], G.iloc[:200], SPLIT),
        "split",
    ),
    ("ic-missing-column", lambda: intersection_codes(G, ("race", "income")), "groups"),
    # --- reading the baselines ---
    ("ac-reference-above-one", lambda: accuracy_cost(1.5, 0.8), "accuracy_reference"),
    ("ac-accuracy-string", lambda: accuracy_cost(0.9, "x"), "accuracy"),
    ("ac-accuracy-nan", lambda: accuracy_cost(0.9, [0.8, float("nan")]), "accuracy"),
    ("ac-accuracy-empty", lambda: accuracy_cost(0.9, []), "accuracy"),
    ("bs-predictions-not-frame", lambda: baseline_summary([1], pd.DataFrame()), "predictions"),
    (
        "bs-predictions-missing-columns",
        lambda: baseline_summary(pd.DataFrame(dict(model=["B1"])), pd.DataFrame()),
        "predictions",
    ),
    (
        "bs-reference-unknown",
        lambda: baseline_summary(
            pd.DataFrame(dict(model=["B1"], y_true=[1], y_pred=[1], y_prob=[0.9])),
            pd.DataFrame(
                dict(
                    model=["B1"],
                    metric=["DI"],
                    attribute=["race"],
                    value=[1.0],
                    vfr=[0.0],
                    n_pass=[1],
                )
            ),
            reference="B0",
        ),
        "reference",
    ),
    (
        "bs-grid-missing-model",
        lambda: baseline_summary(
            pd.DataFrame(dict(model=["B1", "B2"], y_true=[1, 0], y_pred=[1, 0], y_prob=[0.9, 0.1])),
            pd.DataFrame(
                dict(
                    model=["B1"],
                    metric=["DI"],
                    attribute=["race"],
                    value=[1.0],
                    vfr=[0.0],
                    n_pass=[1],
                )
            ),
        ),
        "grid",
    ),
    ("vm-grid-wrong", lambda: vfr_movement(pd.DataFrame(dict(a=[1]))), "grid"),
    (
        "vm-before-unknown",
        lambda: vfr_movement(
            pd.DataFrame(dict(model=["B4"], metric=["DI"], attribute=["race"], vfr=[0.1]))
        ),
        "before",
    ),
    (
        "vm-cell-unknown",
        lambda: vfr_movement(
            pd.DataFrame(
                dict(
                    model=["B3", "B4"],
                    metric=["DI", "DI"],
                    attribute=["race", "race"],
                    vfr=[0.1, 0.2],
                )
            ),
            cells=[("PP", "sex")],
        ),
        "cells",
    ),
]


@pytest.mark.parametrize("call,argument", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(FairlibInputError) as e:
        call()
    assert argument in str(e.value)
    assert e.value.argument == argument or argument in e.value.argument


def test_undefined_vfr_movement_is_reported_not_zero():
    grid = pd.DataFrame(
        dict(model=["B3", "B4"], metric=["DI", "DI"], attribute=["race", "race"], vfr=[np.nan, 0.2])
    )
    mv = vfr_movement(grid, cells=[("DI", "race")]).to_frame()
    assert np.isnan(mv.change.iat[0]) and mv.direction.iat[0] == "undefined"
