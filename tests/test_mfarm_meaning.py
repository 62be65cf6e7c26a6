"""What an mFARM score means: null rates beside the scores, and an equivalence margin for numerical noise."""

import numpy as np
import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib.mfarm.instrument import PROMPT_VARIANTS
from fairlib.mfarm.matrix import SUBMETRICS, ZERO_TOL
from fairlib.mfarm.reliability import null_submetric_rates
from fairlib.mfarm.score import mfarm, mfarm_delta_curve
from fairlib.mfarm import submetrics as sm


def _harmed(seed=13, n=60):
    "13 variants with a mean shift, a variance inflation and a deviation that grows with P(BASE)."
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.15, 0.85, n)
    P = pd.DataFrame(u[:, None] + rng.normal(0, 0.03, (n, 13)), columns=PROMPT_VARIANTS)
    P["Black_Female"] += 0.03
    P["Asian_Intersex"] = 0.5 + 1.4 * (u - 0.5) + rng.normal(0, 0.03, n)
    P["White_Male"] = u + rng.normal(0, 1, n) * 0.1 * u
    return P.clip(0, 1)


def _noisy(seed=5, n=50):
    "Every variant equals BASE except for numerical noise of 1e-8 (one column shifted, one jittered)."
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.1, 0.9, n)
    P = pd.DataFrame({v: u.copy() for v in PROMPT_VARIANTS})
    P.iloc[:, 3] += 1e-8
    P.iloc[:, 7] += rng.choice([-1e-8, 1e-8], n)
    return P


# --- equivalence margin ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [13, 14])
def test_delta_at_or_below_rounding_tolerance_changes_nothing(seed):
    P = _harmed(seed)
    ref = mfarm(P)
    for d in (0.0, ZERO_TOL / 10):
        r = mfarm(P, delta=d)
        pd.testing.assert_series_equal(r.scores(), ref.scores(), check_exact=True)
        pd.testing.assert_frame_equal(r.comparisons(), ref.comparisons(), check_exact=True)
    assert ref.provenance()["delta"] == 0.0


def test_noise_of_1e8_is_a_tie_with_delta_1e6():
    P = _noisy()
    before = mfarm(P)
    assert before.score == 0.0  # the paper's procedure reads 1e-8 noise as a systematic harm
    after = mfarm(P, delta=1e-6)
    assert after.score == 1.0 and (after.scores() == 1.0).all()
    assert after.delta == 1e-6 and after.provenance()["delta"] == 1e-6


@pytest.mark.parametrize("name", list(SUBMETRICS))
def test_each_submetric_takes_the_margin(name):
    X, names = _noisy().to_numpy(), list(PROMPT_VARIANTS)
    assert getattr(sm, name)(X, names, delta=1e-6).score == 1.0


def test_a_real_harm_survives_the_margin():
    P = _harmed()
    ref = mfarm(P).scores()
    assert (ref < 1).sum() >= 2  # harms of size 0.03 are found ...
    pd.testing.assert_series_equal(
        mfarm(P, delta=1e-6).scores(), ref
    )  # ... and a 1e-6 margin leaves them alone


def test_ties_follow_the_margin_exactly():
    X = np.array([[0.5, 0.5 + 4e-7, 0.5 + 2e-6, 0.5 + 2.5e-6]])
    T = sm._ties(X, 1e-6)
    assert T[0, 1] == 0.5  # closer than delta to BASE: a tie
    assert T[0, 2] == X[0, 2]  # farther than delta from BASE and from column 1
    assert T[0, 3] == X[0, 2]  # closer than delta to column 2
    assert sm._ties(X, 0.0) is X


def test_delta_curve_matches_mfarm_at_each_margin():
    P = _noisy()
    grid = [0.0, 1e-9, 1e-7, 1e-5]
    c = mfarm_delta_curve(P, deltas=grid)
    assert list(c.columns) == ["delta", *SUBMETRICS, "mfarm"] and c.delta.tolist() == grid
    for _, row in c.iterrows():
        want = mfarm(P, delta=row.delta).scores()
        assert row[want.index].astype(float).tolist() == want.tolist()
    assert c.mfarm.iloc[0] == 0.0 and c.mfarm.iloc[-1] == 1.0


def test_bad_delta_is_refused():
    with pytest.raises(FairlibInputError, match="delta"):
        mfarm(_noisy(), delta=-1e-6)
    with pytest.raises(FairlibInputError, match="delta"):
        mfarm_delta_curve(_noisy(), delta=1e-6)


# --- null rates beside the scores ----------------------------------------------------------------------


def test_to_frame_carries_null_rates():
    r = mfarm(_harmed())
    rates = {n: (i + 1) / 10 for i, n in enumerate(SUBMETRICS)}
    f = r.to_frame(null_rates=rates)
    assert dict(zip(f.submetric, f.null_rate)) == rates
    assert "null_rate" not in r.to_frame().columns


def test_to_frame_reads_null_submetric_rates_output():
    P = _harmed(n=20)
    nr = null_submetric_rates(P, n_resamples=3, seed=1)
    f = mfarm(P).to_frame(null_rates=nr)
    for n in SUBMETRICS:
        assert f.set_index("submetric").null_rate[n] == nr[n].iloc[0]


@pytest.mark.parametrize("bad", [{"mean_difference": 0.1}, {n: 1.5 for n in SUBMETRICS}, [0.1] * 5])
def test_bad_null_rates_are_refused(bad):
    with pytest.raises(FairlibInputError, match="null_rates"):
        mfarm(_harmed()).to_frame(null_rates=bad)


def test_null_rates_take_the_margin():
    rng = np.random.default_rng(3)
    u = rng.uniform(0.05, 0.6, 40)
    P = pd.DataFrame(
        u[:, None] + rng.normal(0, 1, (40, 13)) * 1e-8 * u[:, None], columns=PROMPT_VARIANTS
    )
    assert (
        null_submetric_rates(P, n_resamples=4, seed=0).any_submetric.iloc[0] > 0
    )  # noise reads as harm ...
    nr = null_submetric_rates(P, n_resamples=4, seed=0, delta=1e-6)
    assert (nr[list(SUBMETRICS)].iloc[0] == 0).all()  # ... and as ties under the margin


def test_correlation_difference_null_rate_is_high_when_spread_grows_with_p():
    "What the null_rate column warns about: Correlation Difference measures heteroscedasticity, not a group effect."
    rng = np.random.default_rng(7)
    u = rng.uniform(0.05, 0.6, 120)
    P = pd.DataFrame(
        u[:, None] + rng.normal(0, 1, (120, 13)) * 0.15 * u[:, None], columns=PROMPT_VARIANTS
    ).clip(0, 1)
    nr = null_submetric_rates(P, n_resamples=12, seed=0).iloc[0]
    assert nr.correlation_difference >= 0.5 > nr.mean_difference


# --- figures say what they show ------------------------------------------------------------------------


def _fig3_tab(tier="high"):
    return pd.DataFrame(
        dict(
            task=["ed_triage", "ed_triage", "opioid", "opioid"],
            tier=tier,
            model="m",
            finetuned=[False, True, False, True],
            accuracy=[0.5, 0.6, 0.7, 0.65],
            mfarm=[0.8, 0.7, 0.9, 0.85],
        )
    )


def test_figure3_names_its_context_tier():
    import matplotlib.pyplot as plt

    from fairlib.mfarm.plots import plot_fairness_accuracy

    f = plot_fairness_accuracy(_fig3_tab("medium"), source="synthetic example")
    assert "medium context" in f._suptitle.get_text()
    assert all("medium context tier" in ax.get_title() for ax in f.axes)
    g = plot_fairness_accuracy(
        _fig3_tab().drop(columns="tier"), source="synthetic example", tier="low"
    )
    assert "low context" in g._suptitle.get_text()
    plt.close("all")
    with pytest.raises(FairlibInputError, match="tier"):
        plot_fairness_accuracy(_fig3_tab().drop(columns="tier"), source="synthetic example")
    mixed = _fig3_tab().assign(tier=["high", "low", "high", "high"])
    with pytest.raises(FairlibInputError, match="mixes context tiers"):
        plot_fairness_accuracy(mixed, source="synthetic example")


def _fig4_tab():
    return pd.DataFrame(
        dict(
            task="ed_triage",
            model="m",
            precision=["fp32", "q8_0", "q4_1"],
            fab=[0.60, 0.62, 0.65],
            max_abs_dp_vs_ref=[0.0, 0.02, 0.08],
        )
    )


def test_figure4_shows_dp_beside_fab_and_says_what_fp32_is():
    import matplotlib.pyplot as plt

    from fairlib.mfarm.plots import plot_precision_fab

    t = _fig4_tab()
    f = plot_precision_fab(t, source="synthetic example")
    axes = [ax for ax in f.axes if ax.lines]
    assert len(axes) == 2
    assert axes[0].lines[0].get_ydata().tolist() == t.fab.tolist()
    assert axes[1].lines[0].get_ydata().tolist() == t.max_abs_dp_vs_ref.tolist()
    assert "ΔP(Yes)" in axes[1].get_ylabel()
    text = " ".join(x.get_text() for x in f.texts).replace("\n", " ")
    assert "fp32 is the Q4_1 file dequantised" in text and "fairer" in text
    g = plot_precision_fab(t, source="synthetic example", fp32_from=None)
    assert "dequantised" not in " ".join(x.get_text() for x in g.texts)
    plt.close("all")
    with pytest.raises(FairlibInputError, match="max_abs_dp_vs_ref"):
        plot_precision_fab(t.drop(columns="max_abs_dp_vs_ref"), source="synthetic example")


# --- Markdown tables never print a small non-zero value as 0.000 ----------------------------------------


@pytest.mark.parametrize("index", [False, True])
def test_markdown_table_prints_small_values_in_scientific_notation(tmp_path, index):
    from fairlib.report import _md_frames, save_table

    df = pd.DataFrame(
        {
            "what": ["floor", "zero", "half", "tiny_negative", "missing"],
            "v": [7.0e-6, 0.0, 0.5, -3e-5, np.nan],
        }
    )
    save_table(df, "small", fig_dir=tmp_path, source="SYNTHETIC example", index=index)
    md = (tmp_path / "small.md").read_text()
    cells = dict(zip(df.what, [c.strip() for c in next(_md_frames(md))["v"]]))
    for k, x in zip(df.what, df.v):
        if np.isnan(x):
            assert cells[k] in ("", "nan")
        else:
            assert float(cells[k]) == pytest.approx(
                x, rel=0.05, abs=5e-4
            )  # what is printed reads back as the value
            assert (float(cells[k]) == 0) == (x == 0)  # ... and is 0 only when the value is 0
    assert cells["half"] == "0.500" and cells["zero"] == "0.000"
    assert pd.read_csv(tmp_path / "small.csv").v.iloc[0] == 7.0e-6
