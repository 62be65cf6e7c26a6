"""`fl.audit` on a dask DataFrame, on a real `dask.distributed` cluster of two worker processes.

The oracle is the in-memory audit of the same rows (`fl.audit(data=<pandas DataFrame>)`): point values to 1e-9, and
the flip rates, intervals and size plan of the count metrics identical for the same seed (their resamples are drawn
from counts, in memory too). The calibration metric's resamples pick scores inside blocks; on a cluster they come
from a score histogram, so they are compared in distribution (stage 1 of the draw to the bit, the values by a
two-sample Kolmogorov-Smirnov test, with a negative control showing the test can reject). The task stream shows that
the counting ran on the workers. Only loopback networking is used (LocalCluster on 127.0.0.1).
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

distributed = pytest.importorskip("distributed", reason="dask[distributed] is in the dev extra")
import dask.dataframe as dd
from distributed import Client, LocalCluster, get_task_stream

import fairlib as fl
from fairlib.core import FairlibInputError
from fairlib.counts import metric_from_counts
from fairlib.countaudit import draw_histogram_bins
from fairlib.distributed import dataset_counts, show_progress
from fairlib.records import audit_data
from fairlib.resample import draw_counts_bins
from fairlib.sizeplan import _at_size
from fairlib.views import _view_data

pytestmark = pytest.mark.xdist_group("dask_cluster")  # one cluster per run under `--dist loadgroup`

METRICS = ["DI", "SPD", "EOpp", "EOD", "PP", "Theil", "Cal"]
COUNT_METRICS = METRICS[:-1]
P = 6  # partitions


def _records(n=12_000, seed=0):
    rng = np.random.default_rng(seed)
    race = rng.choice(["W", "B", "A", "O"], n, p=[0.55, 0.25, 0.15, 0.05])
    sex = rng.choice(["F", "M"], n)
    y = rng.binomial(1, np.where(race == "B", 0.5, 0.4))
    p = np.clip(0.3 + 0.35 * y + 0.05 * (sex == "F") + rng.normal(0, 0.2, n), 0, 1)
    return pd.DataFrame(dict(race=race, sex=sex, y=y, p=p, yh=(p > 0.5).astype(int)))


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",
            host="127.0.0.1",
            silence_logs=40,
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


def _count_tasks(ts) -> list:
    return [t for t in ts.data if str(t["key"]).startswith("fairlib-count")]


@pytest.mark.slow  # the first test starts the cluster (~10 s on 2 cores)
@pytest.mark.parametrize("sf", ["race", ["race", "sex"]], ids=["one", "intersection"])
def test_audit_on_the_cluster_equals_the_in_memory_audit(client, sf):
    f = _records()
    kw = dict(
        sensitive_features=sf, y_prob="p", vfr=True, n_resamples=200, seed=11, size_plan=True
    )  # every metric
    mem = fl.audit("y", "yh", data=f, **kw)
    with get_task_stream(client) as ts:
        big = fl.audit("y", "yh", data=dd.from_pandas(f, npartitions=P), **kw)
    ran = _count_tasks(ts)
    assert len(ran) == P, "the counting did not run as one task per partition on the cluster"
    assert {t["worker"] for t in ran} <= set(client.scheduler_info()["workers"])
    assert isinstance(big, fl.AuditResult) and big.n == mem.n == len(f)
    assert big.excluded == mem.excluded and big.sensitive_features == mem.sensitive_features
    # point values: per group and per metric, to 1e-9 (counts exactly)
    pd.testing.assert_frame_equal(big.groups, mem.groups, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(big.metrics.value, mem.metrics.value, rtol=1e-9, atol=1e-12)
    assert big.overall == pytest.approx(mem.overall, rel=1e-12)
    # the count metrics: flip rates, intervals, stability and the size plan identical for the same seed
    assert big.views == mem.views and big.reference == mem.reference
    pd.testing.assert_frame_equal(big.disparity_table, mem.disparity_table, rtol=1e-9, atol=1e-12)
    a, b = (r.metrics.set_index(["view", "metric"]) for r in (mem, big))
    assert list(a.columns) == list(b.columns)
    counted = a.index.get_level_values("metric") != "Cal"
    pd.testing.assert_frame_equal(b[counted], a[counted], check_exact=True)
    pa, pb = (r.size_plan.set_index(["view", "metric"]) for r in (mem, big))
    pd.testing.assert_frame_equal(pb[counted], pa[counted], check_exact=True)
    assert a[counted].vfr.gt(0).any(), "no flip at all: the comparison would be vacuous"
    # Cal: the same point value and verdict; its resamples are compared in distribution below
    assert (b[~counted].verdict == a[~counted].verdict).all()
    np.testing.assert_allclose(b[~counted].vfr, a[~counted].vfr, atol=0.1)


def test_another_seed_changes_the_flip_rates(client):
    "Guard against a vacuous equality: the VFR columns do depend on the seed."
    big = dd.from_pandas(_records(), npartitions=P)
    kw = dict(sensitive_features="race", metrics=["SPD", "PP"], vfr=True, n_resamples=100)
    a = fl.audit("y", "yh", data=big, seed=1, **kw).metrics
    b = fl.audit("y", "yh", data=big, seed=2, **kw).metrics
    assert not a[["value_ci_low", "value_ci_high"]].equals(b[["value_ci_low", "value_ci_high"]])


def test_resample_size_seed_sequence_and_an_excluded_group(client):
    f = _records(n=6000)
    f.loc[:20, "race"] = "X"  # 21 records: excluded at min_support=30
    kw = dict(
        sensitive_features="race",
        metrics=COUNT_METRICS,
        vfr=True,
        n_resamples=60,
        resample_size=2500,
        seed=np.random.SeedSequence(2024),
    )
    mem = fl.audit("y", "yh", data=f, **kw)
    big = fl.audit("y", "yh", data=dd.from_pandas(f, npartitions=4), **kw)
    assert big.excluded == mem.excluded == {"X": 21}
    pd.testing.assert_frame_equal(big.metrics, mem.metrics, check_exact=True)
    assert "X (n=21)" in big.metrics.vfr_reason.iloc[0]  # the group by its label


def test_string_labels_with_pos_label(client):
    f = _records(n=5000)
    f["y"] = np.where(f.y == 1, "yes", "no")
    f["yh"] = np.where(f.yh == 1, "yes", "no")
    kw = dict(
        sensitive_features="sex", pos_label="yes", metrics=COUNT_METRICS, vfr=True, n_resamples=60
    )
    mem = fl.audit("y", "yh", data=f, **kw)
    big = fl.audit("y", "yh", data=dd.from_pandas(f, npartitions=3), **kw)
    pd.testing.assert_frame_equal(big.metrics, mem.metrics, check_exact=True)
    pd.testing.assert_frame_equal(big.groups, mem.groups, rtol=1e-12)


def test_categorical_and_nullable_columns(client):
    "Parquet often brings categories and nullable ints: read as in memory (a category's values, not its codes)."
    f = _records(n=4000)
    f["y"] = pd.Categorical(f.y)
    f["yh"] = f.yh.astype("Int64")
    f["race"] = pd.Categorical(f.race, categories=["W", "B", "A", "O", "unused"])
    kw = dict(sensitive_features=["race", "sex"], metrics=COUNT_METRICS, vfr=True, n_resamples=40)
    mem = fl.audit("y", "yh", data=f, **kw)
    big = fl.audit("y", "yh", data=dd.from_pandas(f, npartitions=3), **kw)
    pd.testing.assert_frame_equal(big.metrics, mem.metrics, check_exact=True)
    pd.testing.assert_frame_equal(big.groups, mem.groups, rtol=1e-12)


def test_the_result_is_a_whole_audit_result(client, tmp_path):
    big = fl.audit(
        "y",
        "yh",
        sensitive_features="race",
        y_prob="p",
        data=dd.from_pandas(_records(4000), npartitions=3),
    )
    back = fl.AuditResult.from_json(big.to_json())
    pd.testing.assert_frame_equal(back.metrics, big.metrics)
    assert "Fairness audit: 4,000 records" in big.summary()
    from fairlib.htmlreport import write_report

    html = write_report(big, tmp_path / "r.html").read_text()
    assert "Cal" in html and "4,000" in html


def test_local_scheduler_without_a_client():
    "No client: dask's local scheduler runs the same pass."
    f = _records(n=3000)
    mem = fl.audit("y", "yh", sensitive_features="race", y_prob="p", data=f)
    import dask

    with dask.config.set(scheduler="sync"):  # even while a Client exists
        big = fl.audit(
            "y", "yh", sensitive_features="race", y_prob="p", data=dd.from_pandas(f, npartitions=3)
        )
    np.testing.assert_allclose(big.metrics.value, mem.metrics.value, rtol=1e-9)


# --- validation: the in-memory errors, naming the partition -------------------------------------------------------


def _bad_in_partition(f, k, col, values):
    "Set `col` to `values` in rows of partition k (of P equal partitions) only."
    size = len(f) // P
    rows = f.index[k * size : k * size + len(values)]
    f = f.copy()
    if any(isinstance(v, str) or v is None for v in values):
        f[col] = f[col].astype(object)
    elif any(
        v != v for v in values
    ):  # NaN: the column becomes float, as it would be read from a file
        f[col] = f[col].astype(float)
    f.loc[rows, col] = values
    return f


CASES = [
    ("label 2", "y", [2, 2, 0], {}),
    ("NaN label", "yh", [np.nan, np.nan], {}),
    ("score above 1", "p", [1.5, 0.2], {}),
    ("NaN score", "p", [np.nan], {}),
    ("missing group", "race", [None, None, None], {}),
]


@pytest.mark.parametrize("case, col, values, kw", CASES, ids=[c[0] for c in CASES])
def test_a_bad_value_gives_the_in_memory_error_naming_its_partition(client, case, col, values, kw):
    f = _bad_in_partition(_records(n=6000), 3, col, values)
    with pytest.raises(FairlibInputError) as mem:
        fl.audit("y", "yh", sensitive_features="race", y_prob="p", data=f, **kw)
    with pytest.raises(FairlibInputError) as big:
        fl.audit(
            "y",
            "yh",
            sensitive_features="race",
            y_prob="p",
            data=dd.from_pandas(f, npartitions=P),
            **kw,
        )
    m, b = mem.value, big.value
    assert (b.argument, b.func) == (m.argument, m.func)
    assert b.problem == f"{m.problem} (in partition 3 of {P}, data.get_partition(3))"


def test_the_first_problem_in_check_order_and_every_partition_that_has_it(client):
    f = _bad_in_partition(_records(n=6000), 4, "p", [3.0])
    f = _bad_in_partition(f, 2, "y", [7])
    f = _bad_in_partition(f, 5, "y", [7])
    with pytest.raises(FairlibInputError) as e:
        fl.audit(
            "y", "yh", sensitive_features="race", y_prob="p", data=dd.from_pandas(f, npartitions=P)
        )
    assert e.value.argument == "y_true"  # labels are checked before scores, as in memory
    assert (
        "(in partition 2 of 6, data.get_partition(2); `y_true` also fails in partition(s) [5])"
        in e.value.problem
    )


def test_pos_label_rules_are_checked_over_all_partitions(client):
    "Each partition has two labels, the dataset three: only the whole pass can tell, and it does as in memory."
    f = _records(n=6000)
    f["y"] = np.where(f.y == 1, "yes", "no").astype(object)
    f["yh"] = np.where(f.yh == 1, "yes", "no").astype(object)
    f.loc[f.index[-50:], ["y", "yh"]] = "maybe"
    f.loc[f.index[-50:], "yh"] = "yes"
    for pos in ("yes", "nope"):
        with pytest.raises(FairlibInputError) as mem:
            fl.audit("y", "yh", sensitive_features="race", pos_label=pos, data=f)
        with pytest.raises(FairlibInputError) as big:
            fl.audit(
                "y",
                "yh",
                sensitive_features="race",
                pos_label=pos,
                data=dd.from_pandas(f, npartitions=P),
            )
        assert (big.value.argument, big.value.problem) == (mem.value.argument, mem.value.problem)


PRE_PASS = [
    ("missing column", dict(y_true="nope")),
    ("missing sensitive column", dict(sensitive_features=["race", "nope"])),
    ("text labels without pos_label", dict(y_true="race")),
    ("text scores", dict(y_prob="sex")),
]


@pytest.mark.parametrize("case, kw", PRE_PASS, ids=[c[0] for c in PRE_PASS])
def test_column_and_dtype_problems_are_found_before_the_pass(client, case, kw):
    f = _records(n=3000)
    args = dict(y_true="y", y_pred="yh", sensitive_features="race", y_prob="p") | kw
    with pytest.raises(FairlibInputError) as mem:
        fl.audit(data=f, **args)
    with get_task_stream(client) as ts, pytest.raises(FairlibInputError) as big:
        fl.audit(data=dd.from_pandas(f, npartitions=3), **args)
    assert (big.value.argument, big.value.problem) == (mem.value.argument, mem.value.problem)
    assert not _count_tasks(ts), "a column problem should be found before any partition is read"


def test_refusals_particular_to_a_dask_frame(client):
    big = dd.from_pandas(_records(n=2000), npartitions=2)
    with pytest.raises(FairlibInputError) as e:
        fl.audit("y", "yh", sensitive_features="race", data=big, sample_weight=np.ones(2000))
    assert e.value.argument == "sample_weight"
    with pytest.raises(FairlibInputError) as e:
        fl.audit(np.zeros(2000), "yh", sensitive_features="race", data=big)
    assert e.value.argument == "y_true" and "column name" in e.value.problem
    with pytest.raises(FairlibInputError) as e:
        fl.audit("y", "yh", sensitive_features=np.zeros(2000), data=big)
    assert e.value.argument == "sensitive_features"
    empty = dd.from_pandas(_records(n=10).iloc[:0], npartitions=1)
    with pytest.raises(FairlibInputError) as e:
        fl.audit("y", "yh", sensitive_features="race", data=empty)
    assert (e.value.argument, e.value.problem) == ("data", "has no rows")


# --- the calibration resamples: exact in stage 1, equal in distribution -------------------------------------------


@pytest.fixture(scope="module")
def cal_inputs(client):
    f = _records(n=20_000, seed=3)
    dc = dataset_counts(
        dd.from_pandas(f, npartitions=P), "y", "yh", sensitive_features="race", y_prob="p"
    )
    mem = audit_data(f.y.to_numpy(), f.yh.to_numpy(), f.race.to_numpy(), y_prob=f.p.to_numpy())
    return f, dc, _view_data(dc.ct), mem


def _cal(counts, bins, inc):
    return np.asarray(metric_from_counts("Cal", counts, bins, included=inc), float)


def test_calibration_draws_match_in_memory_in_stage_one_to_the_bit(cal_inputs):
    _, dc, data, mem = cal_inputs
    c1, b1 = draw_histogram_bins(data, dc.score_counts, dc.score_sums, 300, seed=5)
    c2, b2 = draw_counts_bins(mem, 300, seed=5)
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_array_equal(b1[..., :2], b2[..., :2])  # counts and Σy per bin
    assert not np.array_equal(b1[..., 2], b2[..., 2])  # Σp: other picks, same law (below)


@pytest.mark.parametrize(
    "N, shift", [(None, 0.97), (2000, 0.95), (300, 0.85)], ids=["n", "2000", "300"]
)
def test_calibration_values_agree_in_distribution(cal_inputs, N, shift):
    "Two-sample KS on 3,000 resampled Cal values (different seeds), plus mean and SD; and a shift it must detect."
    f, dc, data, mem = cal_inputs
    if N is not None:
        data, mem = _at_size(data, N), _at_size(mem, N)
    K = 3000
    a = _cal(*draw_histogram_bins(data, dc.score_counts, dc.score_sums, K, seed=1), data.included)
    b = _cal(*draw_counts_bins(mem, K, seed=2), mem.included)
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    se = b.std() / np.sqrt(K)
    assert abs(a.mean() - b.mean()) < 5 * se and abs(a.std() / b.std() - 1) < 5 / np.sqrt(2 * K)
    # negative control: the same test rejects the draws of slightly different scores
    shifted = audit_data(
        f.y.to_numpy(), f.yh.to_numpy(), f.race.to_numpy(), y_prob=np.clip(f.p * shift, 0, 1)
    )
    shifted = shifted if N is None else _at_size(shifted, N)
    c = _cal(*draw_counts_bins(shifted, K, seed=3), shifted.included)
    assert stats.ks_2samp(a, c).pvalue < 1e-3


def test_score_bins_one_still_keeps_every_bins_mean(cal_inputs):
    "The resampled Σp has the in-memory expectation whatever the resolution (each sub-bin keeps its exact sum)."
    f, _, _, mem = cal_inputs
    dc1 = dataset_counts(
        dd.from_pandas(f, npartitions=3),
        "y",
        "yh",
        sensitive_features="race",
        y_prob="p",
        score_bins=1,
    )
    _, b1 = draw_histogram_bins(_view_data(dc1.ct), dc1.score_counts, dc1.score_sums, 4000, seed=9)
    _, b2 = draw_counts_bins(mem, 4000, seed=10)
    sd = b2[..., 2].std(0) / np.sqrt(4000)
    assert (np.abs(b1[..., 2].mean(0) - b2[..., 2].mean(0)) <= 5 * sd + 1e-9).all()
    np.testing.assert_allclose(dc1.ct.bins, mem.ct.bins, rtol=1e-12)


def test_progress_bar_follows_the_partitions(client, capsys):
    with show_progress():
        dataset_counts(
            dd.from_pandas(_records(n=2000), npartitions=4), "y", "yh", sensitive_features="race"
        )
    err = capsys.readouterr().err
    assert "fairlib: counting" in err and "4/4" in err


def test_group_values_that_read_the_same_are_refused_across_partitions(client):
    "7 in one partition and '7' in another are two values under one name: refused, as in memory."
    f = _records(n=3000)
    f["site"] = pd.Series([7] * 1500 + ["7"] * 1500, dtype=object)
    with pytest.raises(FairlibInputError) as mem:
        fl.audit("y", "yh", sensitive_features="site", data=f)
    import dask

    with dask.config.set({"dataframe.convert-string": False}):  # else dask itself turns 7 into '7'
        big_frame = dd.from_pandas(f, npartitions=2)
    with pytest.raises(FairlibInputError) as big:
        fl.audit("y", "yh", sensitive_features="site", data=big_frame)
    assert (big.value.argument, big.value.problem) == (mem.value.argument, mem.value.problem)
