"""Benchmark: fairlib's ThresholdShift vs fairlearn's ThresholdOptimizer under equal opportunity and equalised odds,
on UCI Adult and COMPAS, same model, same split, same run.

    python benchmarks/bench_mitigation.py [--repeats 3] [--draws 10] [--boot 200] [--out table.md]

For each data set one logistic regression is fitted on the training rows; both post-processors threshold that same
fitted model (`prefit=True`), so the times are those of the post-processing alone. fairlib holds the constraint as
"TPR gap <= tolerance" (or "max(TPR gap, FPR gap) <= tolerance", tolerance 0.1 = the audit's bound, the default) on the
groups with at least 30 training records, with deterministic per-group thresholds, and checks it out of bag at fit
(`oos_resamples=20`, the default); fairlearn's ThresholdOptimizer equalises the rates exactly on the training rows with
randomised predictions (`constraints="true_positive_rate_parity"` / `"equalized_odds"`).

Held-out constraint violation is computed with fairlearn's MetricFrame (an oracle neither method controls) on the test
rows: the TPR gap (equal opportunity) or max(TPR gap, FPR gap) (equalised odds), max - min over the groups, read three
ways: over the groups with >= 30 test records (fl.audit's rule), over every group, and over the groups with >= 30
positive and >= 30 negative test records (where both rates rest on 30 records). ThresholdOptimizer's predictions are
random: its row gives the draw with random_state=0 and the mean over `--draws` draws. The last column is the paired
bootstrap 95% interval (test rows resampled `--boot` times) of fairlib's violation minus ThresholdOptimizer's
(random_state=0), over the groups with >= 30 records: an interval that contains 0 means the two are not told apart
by this test set.

Splits: Adult's own train / test split (fairlib.handbook.load_adult, as nbs/papers/classification_bias/
02_mitigation_adult uses it), groups sex x race as one column; COMPAS (fairlib.handbook.load_compas) split 70/30 with
train_test_split(random_state=0, stratify=label), groups race.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from datetime import date

import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame, false_positive_rate, true_positive_rate
from fairlearn.postprocessing import ThresholdOptimizer
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import fairlib as fl
from fairlib.handbook import load_adult, load_compas
from fairlib.mitigation import ThresholdShift, UnstableConstraintWarning

FAIRLEARN = {"equal_opportunity": "true_positive_rate_parity", "equalized_odds": "equalized_odds"}


def adult():
    d = load_adult()
    num = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    cat = [
        "workclass",
        "education",
        "marital_status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "native_country",
    ]
    prep = ColumnTransformer(
        [
            ("num", StandardScaler(), num),
            ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat),
        ]
    )
    tr, te = (
        d[d.split == "train"].reset_index(drop=True),
        d[d.split == "test"].reset_index(drop=True),
    )
    g = lambda f: (f.sex + " / " + f.race).rename("sex_race").to_frame()  # noqa: E731
    Xtr = prep.fit_transform(tr)
    return (
        "UCI Adult",
        Xtr,
        prep.transform(te),
        tr.high_income.to_numpy(),
        te.high_income.to_numpy(),
        g(tr),
        g(te),
    )


def compas():
    d = load_compas()
    X = pd.get_dummies(
        d[["age_cat", "priors_count", "c_charge_degree", "sex"]], dtype=float
    ).to_numpy()
    y = d.two_year_recid.to_numpy()
    idx_tr, idx_te = train_test_split(np.arange(len(d)), test_size=0.3, random_state=0, stratify=y)
    g = d[["race"]].reset_index(drop=True)
    gtr, gte = g.iloc[idx_tr].reset_index(drop=True), g.iloc[idx_te].reset_index(drop=True)
    return "COMPAS", X[idx_tr], X[idx_te], y[idx_tr], y[idx_te], gtr, gte


def gap(y, yh, g, constraint, rule):
    "Held-out violation from fairlearn's MetricFrame: TPR gap, or max(TPR gap, FPR gap), over the groups of `rule`."
    col = g.iloc[:, 0].to_numpy()
    mf = MetricFrame(
        metrics={"tpr": true_positive_rate, "fpr": false_positive_rate},
        y_true=y,
        y_pred=yh,
        sensitive_features=col,
    )
    bg = mf.by_group
    n = pd.Series(col).value_counts()
    pos = pd.Series(col[y == 1]).value_counts().reindex(n.index, fill_value=0)
    keep = {
        "n>=30": n[n >= 30].index,
        "all": n.index,
        "pos,neg>=30": n[(pos >= 30) & (n - pos >= 30)].index,
    }[rule]
    b = bg.loc[list(keep)]
    tpr = b.tpr.max() - b.tpr.min()
    return tpr if constraint == "equal_opportunity" else max(tpr, b.fpr.max() - b.fpr.min())


def timed(f, repeats):
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def boot_diff(y, a, b, g, constraint, B, seed=0):
    "Paired bootstrap 95% interval of gap(a) - gap(b) over the groups with >= 30 records, test rows resampled."
    r = np.random.default_rng(seed)
    out = []
    for _ in range(B):
        i = r.integers(0, len(y), len(y))
        gi = g.iloc[i].reset_index(drop=True)
        out.append(
            gap(y[i], a[i], gi, constraint, "n>=30") - gap(y[i], b[i], gi, constraint, "n>=30")
        )
    return np.percentile(out, [2.5, 97.5])


def run(data, constraint, a):
    name, Xtr, Xte, ytr, yte, gtr, gte = data
    lr = LogisticRegression(solver="liblinear", random_state=0).fit(Xtr, ytr)
    rows = []

    def fl_fit(oos):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            est = ThresholdShift(
                estimator=lr, prefit=True, constraint=constraint, oos_resamples=oos, random_state=0
            )
            est.fit(Xtr, ytr, sensitive_features=gtr)
        return est, any(issubclass(x.category, UnstableConstraintWarning) for x in w)

    t_fl, (ts, warned) = timed(lambda: fl_fit(20), a.repeats)
    t_fl0, _ = timed(lambda: fl_fit(0), a.repeats)
    yh_fl = ts.predict(Xte, sensitive_features=gte)
    to = ThresholdOptimizer(
        estimator=lr, constraints=FAIRLEARN[constraint], predict_method="predict_proba", prefit=True
    )
    t_to, to = timed(lambda: to.fit(Xtr, ytr, sensitive_features=gtr.iloc[:, 0]), a.repeats)
    yh_to = np.asarray(to.predict(Xte, sensitive_features=gte.iloc[:, 0], random_state=0))
    draws = [
        np.asarray(to.predict(Xte, sensitive_features=gte.iloc[:, 0], random_state=k))
        for k in range(a.draws)
    ]
    # fl.audit's own value on the held-out rows (min_support 30), a cross-check of the MetricFrame numbers
    metric = "EOpp" if constraint == "equal_opportunity" else "EOD"
    aud = lambda yh: (
        fl.audit(yte, yh, sensitive_features=gte, metrics=[metric]).to_frame().set_index("metric")
    )  # noqa: E731
    for method, yh, t, extra in (
        (
            "fairlib ThresholdShift",
            yh_fl,
            t_fl,
            dict(fit_s_no_oos=t_fl0, oos_warned=warned, oos_vfr=ts.constraint_vfr_),
        ),
        ("fairlearn ThresholdOptimizer", yh_to, t_to, {}),
    ):
        v = aud(yh).loc[metric, "value"]
        assert abs(v - gap(yte, yh, gte, constraint, "n>=30")) < 1e-12, (
            "fl.audit and MetricFrame disagree"
        )
        train_yh = (
            ts.predict(Xtr, sensitive_features=gtr)
            if method.startswith("fairlib")
            else to.predict(Xtr, sensitive_features=gtr.iloc[:, 0], random_state=0)
        )
        rows.append(
            dict(
                data=name,
                constraint=constraint,
                method=method,
                train_gap=gap(ytr, np.asarray(train_yh), gtr, constraint, "n>=30"),
                test_gap=v,
                test_gap_all=gap(yte, yh, gte, constraint, "all"),
                test_gap_supported=gap(yte, yh, gte, constraint, "pos,neg>=30"),
                meets_0_1=bool(v <= 0.1),
                accuracy=float((yh == yte).mean()),
                fit_s=t,
                **extra,
            )
        )
    rows[1]["test_gap_mean_of_draws"] = float(
        np.mean([gap(yte, d, gte, constraint, "n>=30") for d in draws])
    )
    lo, hi = boot_diff(yte, yh_fl, yh_to, gte, constraint, a.boot)
    rows[0]["diff_vs_fairlearn_95"] = f"[{lo:+.3f}, {hi:+.3f}]"
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="fit timings: best of this many")
    ap.add_argument(
        "--draws", type=int, default=10, help="ThresholdOptimizer prediction draws averaged"
    )
    ap.add_argument("--boot", type=int, default=200, help="bootstrap resamples of the test rows")
    ap.add_argument("--out", default=None, help="also write the table as Markdown here")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = []
    for data in (adult(), compas()):
        for constraint in ("equal_opportunity", "equalized_odds"):
            rows += run(data, constraint, a)
    tab = pd.DataFrame(rows)
    cols = [
        "data", "constraint", "method", "train_gap", "test_gap", "test_gap_mean_of_draws", "test_gap_all",
        "test_gap_supported", "meets_0_1", "accuracy", "fit_s", "fit_s_no_oos", "oos_warned", "oos_vfr",
        "diff_vs_fairlearn_95",
    ]  # fmt: skip
    tab = tab[cols]
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(tab.round(4).to_string(index=False))
    print()
    for (d, c), t in tab.groupby(["data", "constraint"], sort=False):
        f, o = t.iloc[0], t.iloc[1]
        print(
            f"{d}, {c}: held-out violation (groups >= 30) fairlib {f.test_gap:.3f} vs fairlearn {o.test_gap:.3f}"
            f" (mean of draws {o.test_gap_mean_of_draws:.3f}); fairlib - fairlearn 95% {f.diff_vs_fairlearn_95};"
            f" accuracy {f.accuracy:.4f} vs {o.accuracy:.4f}; fit {f.fit_s:.2f} s (no OOS check {f.fit_s_no_oos:.2f} s)"
            f" vs {o.fit_s:.2f} s: ratio {f.fit_s / o.fit_s:.2f} (no check {f.fit_s_no_oos / o.fit_s:.2f})"
        )
    cpu = platform.processor() or platform.platform()
    print(
        f"\nmachine: {platform.machine()}, {cpu}, {os.cpu_count()} CPUs; python {platform.python_version()}"
    )
    print(f"date: {date.today().isoformat()}; total {time.perf_counter() - t0:.0f} s")
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(tab.round(4).to_markdown(index=False) + "\n")


if __name__ == "__main__":
    main()
