"""`fairlib audit` on a dataset: a folder or a glob of Parquet files, counted on dask (a running scheduler, a local
cluster started for the command, or dask's local scheduler), with a progress bar over the partitions. The oracle is
the in-memory audit of the same rows."""

import json

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed", reason="dask[distributed] is in the dev extra")
from distributed import Client, LocalCluster

import fairlib as fl
from fairlib.cli import main
from fairlib.cluster import read_dataset

pytestmark = pytest.mark.xdist_group("dask_cluster")


@pytest.fixture(scope="module")
def records():
    rng = np.random.default_rng(4)
    n = 6000
    f = pd.DataFrame(
        dict(race=rng.choice(["W", "B", "A"], n, p=[0.6, 0.3, 0.1]), sex=rng.choice(["F", "M"], n))
    )
    f["y"] = rng.binomial(1, 0.4, n)
    f["p"] = np.clip(0.3 + 0.35 * f.y + rng.normal(0, 0.2, n), 0, 1)
    f["yh"] = (f.p > 0.5).astype(int)
    return f


def _parts(f, k):
    return [f.iloc[i * len(f) // k : (i + 1) * len(f) // k] for i in range(k)]


@pytest.fixture(scope="module")
def dataset(records, tmp_path_factory):
    "The records as a folder of four Parquet files."
    root = tmp_path_factory.mktemp("claims")
    for k, part in enumerate(_parts(records, 4)):
        part.to_parquet(root / f"part-{k}.parquet", index=False)
    return root


@pytest.fixture(scope="module")
def scheduler():
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",
            host="127.0.0.1",
            silence_logs=40,
        ) as cluster,
        Client(cluster),
    ):
        yield cluster.scheduler_address


ARGS = "--y-true y --y-pred yh --y-prob p --sensitive race sex --vfr --n-resamples 60".split()


def _metrics(path):
    return fl.AuditResult.from_json(path.read_text()).metrics


def test_a_folder_on_a_running_scheduler_equals_the_in_memory_audit(
    records, dataset, scheduler, tmp_path, capsys
):
    out = tmp_path / "r.json"
    assert main(["audit", str(dataset), *ARGS, "--scheduler", scheduler, "--json", str(out)]) == 0
    cap = capsys.readouterr()
    assert (
        "fairlib: counting" in cap.err and "4/4" in cap.err
    )  # the progress bar, on standard error
    assert "fairlib: counting" not in cap.out and "Fairness audit: 6,000 records" in cap.out
    mem = fl.audit(
        "y",
        "yh",
        sensitive_features=["race", "sex"],
        y_prob="p",
        data=records,
        vfr=True,
        n_resamples=60,
    )
    got = _metrics(out).set_index(["view", "metric"])
    want = mem.metrics.set_index(["view", "metric"])
    np.testing.assert_allclose(got.value, want.value, rtol=1e-9, atol=1e-12)
    counted = want.index.get_level_values("metric") != "Cal"
    pd.testing.assert_frame_equal(got[counted], want[counted], check_dtype=False)


def test_a_glob_on_the_local_scheduler_without_progress(records, dataset, tmp_path, capsys):
    out = tmp_path / "r.json"
    args = [
        "audit",
        str(dataset / "part-*.parquet"),
        "--y-true",
        "y",
        "--y-pred",
        "yh",
        "--sensitive",
        "race",
    ]
    assert main([*args, "--no-progress", "--json", str(out)]) == 0
    assert "fairlib: counting" not in capsys.readouterr().err
    mem = fl.audit("y", "yh", sensitive_features="race", data=records)
    np.testing.assert_allclose(_metrics(out).value, mem.metrics.value, rtol=1e-9, atol=1e-12)


def test_dataset_problems_are_one_line_naming_the_flag(dataset, capsys):
    assert (
        main(["audit", str(dataset), "--y-true", "income", "--y-pred", "yh", "--sensitive", "race"])
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("fairlib audit: --y-true: no column 'income'") and err.count("\n") == 1
    assert (
        main(
            [
                "audit",
                str(dataset / "*.xlsx"),
                "--y-true",
                "y",
                "--y-pred",
                "yh",
                "--sensitive",
                "race",
            ]
        )
        == 1
    )
    assert "matches no file" in capsys.readouterr().err


def test_a_bad_label_names_its_partition(records, tmp_path, capsys):
    root = tmp_path / "bad"
    root.mkdir()
    bad = records.copy()
    bad.loc[4000, "y"] = 3
    for k, part in enumerate(_parts(bad, 3)):
        part.to_parquet(root / f"part-{k}.parquet", index=False)
    assert (
        main(
            [
                "audit",
                str(root),
                "--y-true",
                "y",
                "--y-pred",
                "yh",
                "--sensitive",
                "race",
                "--no-progress",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    parts = read_dataset(
        root
    )  # dask may split or join files into partitions: find the one with the bad row
    k = next(i for i in range(parts.npartitions) if (parts.get_partition(i).y.compute() == 3).any())
    assert "--y-true: labels must be binary 0/1, found [3]" in err
    assert f"(in partition {k} of {parts.npartitions}, data.get_partition({k}))" in err


@pytest.mark.slow  # starts a local cluster of its own (~10 s on 2 cores)
def test_workers_start_a_local_cluster_for_the_command(records, dataset, tmp_path):
    out = tmp_path / "r.json"
    args = [
        "audit",
        str(dataset),
        "--y-true",
        "y",
        "--y-pred",
        "yh",
        "--sensitive",
        "sex",
        "--workers",
        "2",
    ]
    assert main([*args, "--no-progress", "--json", str(out)]) == 0
    mem = fl.audit("y", "yh", sensitive_features="sex", data=records)
    np.testing.assert_allclose(_metrics(out).value, mem.metrics.value, rtol=1e-9, atol=1e-12)
    assert json.loads(out.read_text())  # a whole result file
