"""The fast Verdict Flip Rate (count / bin draws) has the same distribution as plain index resampling.

Both paths are run over many seeds on a cohort built so that every metric sits near its threshold
(so verdicts really flip). Agreement is checked with two-sample tests (KS and Anderson-Darling) that
must not reject, and means that must agree within Monte Carlo error. A power check shows the same
tests do reject a plausible bug (the wrong resample size).
"""
import numpy as np
import pytest
from scipy import stats

from fairlib.core import check_rng
from fairlib.metrics import AUDIT_METRICS, metric_from_counts
from fairlib.vfr import (audit_data, draw_counts, draw_counts_bins, index_resample_values,
                         verdict_flip_rate)

METRICS = list(AUDIT_METRICS)
N = 800


def _cohort(seed=7, n=4000):
    "Three groups (one small), label-dependent scores, a group-dependent calibration offset."
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b", "c"]), n, p=[0.6, 0.33, 0.07])
    base = np.select([g == "a", g == "b"], [0.45, 0.5], 0.4)
    y = rng.binomial(1, base)
    logit = 1.3 * (2 * y - 1) + rng.normal(0, 1.1, n) + np.select([g == "a", g == "b"], [0.0, 0.12], -0.1)
    p = 1 / (1 + np.exp(-logit))
    p = np.clip(p + np.where(g == "c", 0.03, 0.0), 0, 1)
    return y, (p >= 0.5).astype(int), g, p


@pytest.fixture(scope="module")
def data():
    y, yh, g, p = _cohort()
    return audit_data(y, yh, g, y_prob=p, resample_size=N, min_support=30)


def _fast(data, metric, K, seed, N_override=None):
    d = data if N_override is None else audit_data(data.y, data.yhat, np.asarray(data.groups)[data.ct.codes],
                                                   y_prob=data.prob, resample_size=N_override, min_support=30)
    rng = check_rng(seed)
    if AUDIT_METRICS[metric].needs_prob:
        c, b = draw_counts_bins(d, K, rng)
    else:
        c, b = draw_counts(d, K, rng), None
    return np.asarray(metric_from_counts(metric, c, b, included=d.included), float)


@pytest.fixture(scope="module")
def samples(data):
    "Metric values from both paths, pooled over 6 seeds x 250 resamples each (1,500 per path and metric)."
    out = {}
    for m in METRICS:
        f = np.concatenate([_fast(data, m, 250, s) for s in range(6)])
        i = np.concatenate([index_resample_values(data, m, 250, 1000 + s) for s in range(6)])
        out[m] = (f, i)
    return out


def test_cohort_is_near_thresholds(samples):
    "The check is only informative if verdicts actually flip: most metrics have 5%..95% pass rates."
    spread = [m for m, (f, i) in samples.items() if 0.05 < AUDIT_METRICS[m].passes(i).mean() < 0.95]
    assert len(spread) >= 4, spread


@pytest.mark.filterwarnings("ignore:p-value capped", "ignore:p-value floored")
@pytest.mark.parametrize("metric", METRICS)
def test_metric_distribution_matches_index_resampling(samples, metric):
    f, i = samples[metric]
    assert not np.isnan(f).any() and not np.isnan(i).any()
    alpha = 0.001                                   # per test; 2 tests x 7 metrics
    assert stats.ks_2samp(f, i).pvalue > alpha
    assert stats.anderson_ksamp([f, i], variant="midrank").pvalue > alpha   # p is floored at 0.001
    se = np.sqrt(f.var(ddof=1) / f.size + i.var(ddof=1) / i.size)
    assert abs(f.mean() - i.mean()) < 4 * se
    assert 0.85 < f.std() / i.std() < 1.15        # same spread (1,500 draws each: SE of the ratio ~ 2%)


@pytest.mark.parametrize("metric", ["EOD", "PP", "Cal"])
def test_vfr_distribution_matches_over_seeds(data, metric):
    "VFR per seed (K = 100) from both paths: same distribution across 24 seeds, same mean pass rate."
    K, S = 100, 24
    f = [_fast(data, metric, K, s) for s in range(S)]
    i = [index_resample_values(data, metric, K, 5000 + s) for s in range(S)]
    spec = AUDIT_METRICS[metric]
    pf = np.array([spec.passes(v).sum() for v in f]); pi = np.array([spec.passes(v).sum() for v in i])
    vf, vi = np.minimum(pf, K - pf) / K, np.minimum(pi, K - pi) / K
    assert 0 < vi.mean() < 0.5                     # the cell really is unstable
    assert stats.mannwhitneyu(vf, vi).pvalue > 0.001
    qf, qi = pf.sum() / (K * S), pi.sum() / (K * S)
    se = np.sqrt(qf * (1 - qf) / (K * S) + qi * (1 - qi) / (K * S))
    assert abs(qf - qi) < 4 * se


def test_power_wrong_resample_size_is_detected(data, samples):
    "The same tests reject a fast path run at the wrong N (2N, spread / sqrt 2): they can fail."
    _, i = samples["SPD"]
    wrong = np.concatenate([_fast(data, "SPD", 250, s, N_override=2 * N) for s in range(6)])
    assert stats.ks_2samp(wrong, i).pvalue < 1e-4
    assert not 0.85 < wrong.std() / i.std() < 1.15


def test_count_draws_are_binomial(data):
    "Per-stratum resampled predicted positives follow Binomial(m_gy, c_gy1 / n_gy) (chi-square vs scipy)."
    c = draw_counts(data, 20_000, 3)
    g, y = 0, 1
    m = data.m[g, y]; p = data.ct.counts[g, y, 1] / data.n_gy[g, y]
    obs = np.bincount(c[:, g, y, 1].astype(int), minlength=m + 1)
    exp = stats.binom.pmf(np.arange(m + 1), m, p) * c.shape[0]
    keep = exp > 5
    o, e = obs[keep], exp[keep]
    e = e * o.sum() / e.sum()
    assert stats.chisquare(o, e).pvalue > 0.001
    assert (c.sum(-1) == data.m).all()


def test_bin_draws_match_index_bins_in_mean(data):
    "Mean resampled calibration bins (count, sum y, sum p) equal their exact expectation under index resampling."
    K = 3000
    _, bins = draw_counts_bins(data, K, 11)
    y, p, codes = data.y, data.prob, data.ct.codes
    b = np.minimum((p * 10).astype(int), 9)
    exp = np.zeros(bins.shape[1:])
    for gi in range(len(data.groups)):
        for yy in (0, 1):
            sel = (codes == gi) & (y == yy)
            for k in range(10):
                inb = sel & (b == k)
                exp[gi, k] += data.m[gi, yy] * np.array([inb.sum(), (inb * y).sum(), (p * inb).sum()]) / sel.sum()
    sd = bins.std(0) / np.sqrt(K)
    z = np.abs(bins.mean(0) - exp) / np.where(sd > 0, sd, 1)
    assert z.max() < 5, z.max()


def test_fast_is_bit_identical_for_a_seed(data):
    for m in ("DI", "Cal"):
        a = verdict_flip_rate(data.y, data.yhat, sensitive_features=np.asarray(data.groups)[data.ct.codes], metric=m,
                              y_prob=data.prob, n_resamples=50, resample_size=N, seed=123)
        b = verdict_flip_rate(data.y, data.yhat, sensitive_features=np.asarray(data.groups)[data.ct.codes], metric=m,
                              y_prob=data.prob, n_resamples=50, resample_size=N, seed=123)
        assert np.array_equal(a.metric_values, b.metric_values) and a == b


def test_bin_draws_are_internally_consistent(data):
    "Every resampled bin table agrees with its count table, and each bin's score sum lies inside the bin."
    counts, bins = draw_counts_bins(data, 400, 21)
    n_bins = bins.shape[-2]
    assert (counts.sum((-1, -2)) == data.m.sum(1)).all()                   # group sizes are fixed
    assert (counts.sum(-1) == data.m).all()                                  # stratum sizes are fixed
    assert np.array_equal(bins[..., 0].sum(-1), counts.sum((-1, -2)))       # bin counts add up to the group
    assert np.array_equal(bins[..., 1].sum(-1), counts[..., 1, :].sum(-1))  # sum of y = positives
    lo = np.arange(n_bins) / n_bins
    c, s = bins[..., 0], bins[..., 2]
    assert (s >= lo * c - 1e-9).all() and (s <= (lo + 1 / n_bins) * c + 1e-9).all()
    # predicted positives by bin: with y_pred = 1[p >= 0.5], all of them sit in bins >= 5
    assert np.array_equal(counts[..., 1].sum(-1), c[..., n_bins // 2:].sum(-1))


def test_within_bin_score_sums_are_exact_binomial_mixtures():
    """Stage 2 is exact: in a bin holding scores 0.21 and 0.29 half-and-half, the resampled score sum of m picks is
    m*0.21 + 0.08*Binomial(m, 1/2) — a bin-count-only shortcut (m * 0.25) would fail this."""
    n = 2000
    g = np.repeat(["a", "b"], n // 2)
    y = np.zeros(n, int)
    p = np.where(np.arange(n) % 2 == 0, 0.21, 0.29)
    d = audit_data(y, np.zeros(n, int), g, y_prob=p, resample_size=200, min_support=1)
    _, bins = draw_counts_bins(d, 20_000, 5)
    m = d.m[0, 0]                                                 # all of group a's draws land in bin 2
    assert (bins[:, 0, 2, 0] == m).all()
    k = np.rint((bins[:, 0, 2, 2] - m * 0.21) / 0.08).astype(int)
    assert np.allclose(bins[:, 0, 2, 2], m * 0.21 + 0.08 * k)
    obs = np.bincount(k, minlength=m + 1)
    exp = stats.binom.pmf(np.arange(m + 1), m, 0.5) * k.size
    keep = exp > 5
    assert stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > 0.001
