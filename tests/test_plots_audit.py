"""Plots of an audit result: per-group rate intervals equal statsmodels' proportion_confint on counts taken from the
raw data, thresholds and values sit where the metric table says, verdicts are carried by shape and word, the VFR
bars and their Monte Carlo interval, and the seaborn views."""

import io
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from statsmodels.stats.proportion import proportion_confint

import fairlib as fl
from fairlib.audit import AuditResult
from fairlib.core import FairlibInputError
from fairlib.handbook import load_adult
from fairlib.plots import plot_audit, plot_score_distributions, plot_verdict_heatmap, plot_vfr
from fairlib.reliability import TAU_VFR

RATES = [
    "selection_rate",
    "TPR",
    "FPR",
    "PPV",
]  # the order of the clusters in plot_audit's left panel


@pytest.fixture(scope="module")
def adult():
    df = load_adult()
    df["y_pred"] = ((df.age > 40) & (df.education_num >= 13)).astype(int)
    return df


@pytest.fixture(scope="module")
def result(adult):
    return fl.audit(
        "high_income", "y_pred", sensitive_features="race", data=adult, vfr=True, n_resamples=100
    )


@pytest.fixture(scope="module")
def near(adult):
    "3,000 records of Adult by sex: EOpp lies close to its threshold, so its verdict flips in many resamples."
    sub = adult.sample(3000, random_state=1)
    return fl.audit(
        "high_income", "y_pred", sensitive_features="sex", data=sub, vfr=True, n_resamples=200
    )


def raw_counts(df, group):
    "(successes, trials) of each rate for one group, counted from the records (not from fairlib's tables)."
    g = df[df.race == group]
    y, p = g.high_income.to_numpy(), g.y_pred.to_numpy()
    return {
        "selection_rate": (p.sum(), len(p)),
        "TPR": ((p & y).sum(), y.sum()),
        "FPR": ((p & (1 - y)).sum(), (1 - y).sum()),
        "PPV": ((p & y).sum(), p.sum()),
    }


def whiskers(ax):
    "Per group (in legend order): the (low, high) of each bar's error bar, in cluster order."
    out = []
    for c in [c for c in ax.containers if isinstance(c, BarContainer)]:
        segs = c.errorbar.lines[2][0].get_segments()
        out.append([(s[0][1], s[1][1]) for s in segs])
    return out


def test_returns_a_figure_with_a_rates_and_a_metrics_panel(result):
    fig = plot_audit(result)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    ax_r, ax_m = fig.axes
    assert len(ax_r.patches) == len(result.groups) * len(RATES)
    assert [t.get_text() for t in ax_r.get_xticklabels()] == ["selection rate", "TPR", "FPR", "PPV"]
    assert len(ax_m.get_yticks()) == len(result.metrics)
    fig.savefig(io.BytesIO(), format="png")  # renders under Agg


@pytest.mark.parametrize(
    "method,sm_method,level", [("wilson", "wilson", 0.95), ("clopper-pearson", "beta", 0.9)]
)
def test_rate_intervals_equal_statsmodels_on_counts_from_the_records(
    adult, result, method, sm_method, level
):
    fig = plot_audit(result, method=method, level=level)
    drawn = whiskers(fig.axes[0])
    groups = list(result.groups.race)
    assert len(drawn) == len(groups)
    for g, bars in zip(groups, drawn):
        counts = raw_counts(adult, g)
        for rate, (lo, hi) in zip(RATES, bars):
            k, n = counts[rate]
            want = proportion_confint(k, n, alpha=1 - level, method=sm_method)
            np.testing.assert_allclose((lo, hi), want, rtol=0, atol=1e-9, err_msg=f"{g} {rate}")


def test_bar_heights_are_the_rates_of_the_records(adult, result):
    fig = plot_audit(result)
    bars = [c for c in fig.axes[0].containers if isinstance(c, BarContainer)]
    for g, c in zip(result.groups.race, bars):
        counts = raw_counts(adult, g)
        heights = [b.get_height() for b in c]
        np.testing.assert_allclose(
            heights, [k / n for k, n in (counts[r] for r in RATES)], atol=1e-12
        )


def test_each_threshold_value_interval_and_verdict_sit_where_the_table_says(result):
    ax = plot_audit(result).axes[1]
    texts = [t.get_text() for t in ax.texts]
    for y, r in enumerate(result.metrics.itertuples()):
        ticks = [c for c in ax.collections if c.get_gid() == f"threshold:{r.metric}"]
        xs = sorted(seg[0][0] for c in ticks for seg in c.get_segments())
        want = sorted([-r.threshold, r.threshold] if r.rule.startswith("|x|") else [r.threshold])
        np.testing.assert_allclose(xs, want)
        for c in ticks:  # the tick spans the metric's row
            assert all(seg[0][1] < y < seg[1][1] for seg in c.get_segments())
        (iv,) = [c for c in ax.collections if c.get_gid() == f"interval:{r.metric}"]
        np.testing.assert_allclose(iv.get_segments()[0][:, 0], [r.value_ci_low, r.value_ci_high])
        (dot,) = [ln for ln in ax.lines if ln.get_gid() == f"value:{r.metric}"]
        assert dot.get_xdata()[0] == pytest.approx(r.value) and dot.get_ydata()[0] == y
        assert dot.get_marker() == {"Pass": "o", "Fail": "X"}[r.verdict]  # shape, not only colour
        word = {"Pass": "Pass", "Fail": "FAIL"}[r.verdict]
        assert any(t.startswith(f"{word} (") for t in texts)
    assert sum(t.startswith("FAIL") for t in texts) == (result.metrics.verdict == "Fail").sum()


def test_an_undefined_metric_has_no_marker_and_says_so():
    y = np.r_[np.ones(40), np.zeros(40), np.zeros(60)].astype(
        int
    )  # group b has no positive: its TPR is undefined
    p = np.r_[
        np.ones(30), np.zeros(10), np.ones(10), np.zeros(30), np.ones(20), np.zeros(40)
    ].astype(int)
    r = fl.audit(y, p, sensitive_features=["a"] * 80 + ["b"] * 60)
    assert (r.metrics.verdict == "Undefined").any()
    ax = plot_audit(r).axes[1]
    for m in r.metrics[r.metrics.verdict == "Undefined"].metric:
        assert not [ln for ln in ax.lines if ln.get_gid() == f"value:{m}"]
    n_undef = (r.metrics.verdict == "Undefined").sum()
    assert sum(t.get_text().startswith("undefined (NaN)") for t in ax.texts) == n_undef
    assert "no interval" in ax.get_xlabel()  # no VFR: no metric interval, and the axis says why


def test_draws_into_given_axes_and_adds_none(result):
    fig = Figure()
    axs = fig.subplots(1, 2)
    assert plot_audit(result, ax=axs) is fig
    assert len(fig.axes) == 2 and len(axs[0].patches) == len(result.groups) * len(RATES)
    with pytest.raises(FairlibInputError, match="ax"):
        plot_audit(result, ax=axs[0])


def test_a_result_read_back_from_json_plots_the_same(result):
    back = AuditResult.from_json(result.to_json())
    a, b = whiskers(plot_audit(result).axes[0]), whiskers(plot_audit(back).axes[0])
    np.testing.assert_allclose(np.array(a), np.array(b))


def test_a_group_table_without_label_counts_shows_the_selection_rate_only(result):
    g = result.groups.drop(columns=["n", "positives", "predicted_positives"])
    lean = SimpleNamespace(
        metrics=result.metrics, groups=g, sensitive_features=["race"], n=result.n
    )
    ax = plot_audit(lean).axes[0]
    assert len(ax.patches) == len(g)  # one cluster
    assert "TPR, FPR, PPV not shown" in ax.get_xlabel()
    lo, hi = whiskers(ax)[0][0]
    k = round(g.selection_rate[0] * g.support[0])
    np.testing.assert_allclose((lo, hi), proportion_confint(k, g.support[0], method="wilson"))


def test_vfr_bars_threshold_and_monte_carlo_interval(near):
    m = near.metrics
    fig = plot_vfr(near)
    ax = fig.axes[0]
    assert len(ax.patches) == len(m)
    np.testing.assert_allclose([b.get_height() for b in ax.patches], m.vfr.to_numpy())
    (tau,) = [ln for ln in ax.lines if ln.get_gid() == "tau_vfr"]
    assert set(tau.get_ydata()) == {TAU_VFR}
    K = near.vfr_settings["n_resamples"]
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    segs = bars.errorbar.lines[2][0].get_segments()
    for s, r in zip(segs, m.itertuples()):
        n_def = K - r.vfr_n_undefined
        lo, hi = proportion_confint(round(r.vfr * n_def), n_def, method="wilson")
        np.testing.assert_allclose((s[0][1], s[1][1]), (lo, min(hi, 0.5)), atol=1e-12)
    unstable = m.vfr > TAU_VFR
    assert unstable.any() and (~unstable).any()  # the fixture shows both kinds
    assert [bool(b.get_hatch()) for b in ax.patches] == list(unstable)
    assert sum("UNSTABLE" in t.get_text() for t in ax.texts) == unstable.sum()
    fig.savefig(io.BytesIO(), format="png")


def test_vfr_without_vfr_columns_is_a_clear_error(adult):
    plain = fl.audit("high_income", "y_pred", sensitive_features="sex", data=adult)
    with pytest.raises(FairlibInputError, match=r"run audit\(\.\.\., vfr=True\)"):
        plot_vfr(plain)


def test_vfr_draws_into_a_given_axes(near):
    fig = Figure()
    ax = fig.add_subplot()
    assert (
        plot_vfr(near, ax=ax) is fig and len(fig.axes) == 1 and len(ax.patches) == len(near.metrics)
    )


def test_score_distributions_one_violin_per_group_and_label(adult):
    rng = np.random.default_rng(0)
    sub = adult.sample(2000, random_state=0)
    score = rng.uniform(size=len(sub))
    fig = plot_score_distributions(score, sub.sex, y_true=sub.high_income.to_numpy())
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(pd.unique(sub.sex.astype(str)))
    assert len(ax.collections) >= 2 * sub.sex.nunique()  # a half violin per group and label
    with pytest.raises(FairlibInputError, match="groups"):
        plot_score_distributions(score, sub.sex.iloc[:-1])
    with pytest.raises(FairlibInputError, match="y_prob"):
        plot_score_distributions(score * 2, sub.sex)


def test_verdict_heatmap_cells_hold_verdict_and_value(adult):
    rs = {
        a: fl.audit("high_income", "y_pred", sensitive_features=a, data=adult)
        for a in ("race", "sex")
    }
    ax = plot_verdict_heatmap(rs).axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 2 * len(rs["race"].metrics)
    # seaborn annotates row by row: metric i, then audit j
    for i, metric in enumerate(rs["race"].metrics.metric):
        for j, a in enumerate(rs):
            row = rs[a].metrics.set_index("metric").loc[metric]
            word, value = texts[i * 2 + j].split("\n")
            assert word == {"Pass": "Pass", "Fail": "FAIL", "Undefined": "undefined"}[row.verdict]
            assert float(value) == pytest.approx(row.value, rel=5e-3)
    with pytest.raises(FairlibInputError, match="results"):
        plot_verdict_heatmap({})


def test_missing_seaborn_names_the_extra(monkeypatch, near):
    import builtins

    real = builtins.__import__

    def no_seaborn(name, *a, **k):
        if name == "seaborn":
            raise ImportError("No module named 'seaborn'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_seaborn)
    with pytest.raises(FairlibInputError, match=r"fairlib\[plots\]"):
        plot_verdict_heatmap({"sex": near})


def test_vfr_interval_never_passes_one_half():
    "The VFR counts the minority verdict, so it is at most 0.5; its interval is capped there."
    m = pd.DataFrame(
        {
            "metric": ["DI", "SPD"],
            "value": [0.8, 0.1],
            "threshold": [0.8, 0.1],
            "rule": ["x >= 0.8", "|x| <= 0.1"],
        }
    )
    m = m.assign(verdict="Pass", vfr=[0.48, 0.02], vfr_n_undefined=[0, 0])
    r = SimpleNamespace(
        metrics=m,
        groups=pd.DataFrame(),
        sensitive_features=["g"],
        n=100,
        vfr_settings={"n_resamples": 50},
    )
    (bars,) = [c for c in plot_vfr(r).axes[0].containers if isinstance(c, BarContainer)]
    (s0, s1) = bars.errorbar.lines[2][0].get_segments()
    assert s0[1][1] == 0.5 and proportion_confint(24, 50, method="wilson")[1] > 0.5
    np.testing.assert_allclose((s1[0][1], s1[1][1]), proportion_confint(1, 50, method="wilson"))
