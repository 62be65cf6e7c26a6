"""Beyond one machine: the VFR grid scales out through joblib unchanged.

`fairlib.vfr.vfr_grid` dispatches its (model, attribute) cells through `joblib.Parallel` without
naming a backend, so `joblib.parallel_config(backend="dask")` on a `dask.distributed` cluster runs
them on the cluster's workers. Every cell draws from its own order-free seed (`cell_seed`), so the
result must be bit-identical to a single-process run. The oracle is that serial run (`n_jobs=1`);
the task stream proves the cells really ran on the cluster and were not silently run locally.
Only loopback networking is used (LocalCluster on 127.0.0.1, two worker processes, status page on a free port).
"""

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed", reason="dask[distributed] is in the dev extra")
import joblib
from distributed import Client, LocalCluster, get_task_stream

from fairlib.vfr.axis1 import vfr_grid

pytestmark = [
    pytest.mark.slow,  # starts two worker processes (~10 s on 2 cores)
    pytest.mark.xdist_group("dask_cluster"),
]  # one cluster per run under `--dist loadgroup`

ATTRS = ["race", "sex"]
METRICS = ["SPD", "DI", "EOD", "Cal"]  # count-based cells and the two-stage calibration path


def _predictions(n=3000, seed=0, models=("m1", "m2")):
    rng = np.random.default_rng(seed)
    race = rng.choice(["W", "B", "O", "A"], n, p=[0.6, 0.2, 0.15, 0.05])
    sex = rng.choice(["F", "M"], n)
    y = rng.binomial(1, 0.45, n)
    frames = []
    for j, mo in enumerate(models):
        p = 1 / (1 + np.exp(-(rng.normal(0, 1, n) + (1.2 + j) * (2 * y - 1) + 0.4 * (sex == "F"))))
        frames.append(
            pd.DataFrame(
                dict(
                    model=mo, y_true=y, y_prob=p, y_pred=(p >= 0.5).astype(int), race=race, sex=sex
                )
            )
        )
    return pd.concat(frames, ignore_index=True)


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


@pytest.mark.parametrize("seed", [7, np.random.SeedSequence(2024)], ids=["int", "SeedSequence"])
def test_vfr_grid_on_dask_is_bit_identical_to_serial(client, seed):
    pred = _predictions()
    kw = dict(
        attributes=ATTRS,
        metrics=METRICS,
        n_resamples=60,
        resample_size=1500,
        seed=seed,
        keep_values=True,
    )
    serial = vfr_grid(pred, n_jobs=1, **kw)
    with get_task_stream(client) as ts, joblib.parallel_config(backend="dask"):
        remote = vfr_grid(pred, **kw)
    assert len(ts.data) >= 1, (
        "no task reached the dask cluster: vfr_grid did not honour parallel_config"
    )
    assert len(serial) == 2 * len(ATTRS) * len(METRICS)
    assert serial["vfr"].notna().any()
    # bit-identical: exact float equality, same row order, same per-resample metric values
    pd.testing.assert_frame_equal(
        remote.drop(columns="metric_values"), serial.drop(columns="metric_values"), check_exact=True
    )
    for a, b in zip(remote["metric_values"], serial["metric_values"]):
        np.testing.assert_array_equal(np.asarray(a, float), np.asarray(b, float))


def test_vfr_grid_on_dask_differs_with_another_seed(client):
    "Guard against a vacuous comparison: the grid does depend on the seed it is given."
    pred = _predictions()
    kw = dict(
        attributes=ATTRS, metrics=["SPD"], n_resamples=60, resample_size=1500, keep_values=True
    )
    with joblib.parallel_config(backend="dask"):
        a, b = vfr_grid(pred, seed=1, **kw), vfr_grid(pred, seed=2, **kw)
    assert not all(np.array_equal(x, y) for x, y in zip(a["metric_values"], b["metric_values"]))


def test_audit_size_grid_on_dask_is_bit_identical_to_serial(client):
    "Axis 2 (N* per cell) goes through the same joblib dispatch."
    from fairlib.vfr.axis2 import audit_size_grid

    pred = _predictions(n=2000)
    kw = dict(
        attributes=["sex"],
        metrics=["SPD", "DI"],
        sizes=[200, 800, 2000],
        n_resamples=20,
        seed=3,
        return_curves=True,
    )
    serial_cells, serial_curves = audit_size_grid(pred, n_jobs=1, **kw)
    with get_task_stream(client) as ts, joblib.parallel_config(backend="dask"):
        cells, curves = audit_size_grid(pred, **kw)
    assert len(ts.data) >= 1, "no task reached the dask cluster"
    assert len(serial_cells) == 2 * 2
    pd.testing.assert_frame_equal(cells, serial_cells, check_exact=True)
    pd.testing.assert_frame_equal(curves, serial_curves, check_exact=True)
