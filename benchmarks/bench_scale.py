"""Benchmark: `fl.audit` on a dask DataFrame that is never held in one place, on a LocalCluster of worker processes
with a memory limit each, against the in-memory audit of the same rows and a group-by count on the same cluster.

    python benchmarks/bench_scale.py                            # 1e6 and 1e7 rows
    python benchmarks/bench_scale.py --sizes 1e6 1e7 1e8 --json bench_scale.json

The rows are generated partition by partition on the workers (`dask.dataframe.from_map`): the client never holds
them. Each partition is a synthetic audit extract (a 4 x 2 intersection of race and sex, labels, scores in [0, 1]
and thresholded predictions) drawn from its own seed, so every run audits the same rows. For each size the run
measures, on the same cluster:

- `generate`: the generation alone (one pass that only counts the rows of each partition);
- `floor`: dask's groupby count over (race, sex, y, ŷ), a plain one-pass aggregation of the same rows;
- `audit`: `fl.audit(data=<dask frame>, vfr=True)` with every built-in metric and the scores (`all`; K = 500
  resamples per metric and view), and with the six count metrics alone (`counts`), end to end: generation, the
  counting pass, the tree of sums, the VFR;
- the peak resident memory of each worker process (psutil, sampled every 50 ms) and of the client.

Where the rows fit (`--in-memory-max`, `--in-memory-cal-max`), the same rows are generated in one process and
audited in memory, in a subprocess so that its peak memory is its own. Ratios are per row and end to end (the
in-memory side includes making its frame). The machine (cores, memory, CPU model) and its load are printed: timings
from a machine that others are using at the same time are only indicative.
"""

from __future__ import annotations
import argparse, json, multiprocessing as mp, os, platform, sys, threading, time, warnings

import numpy as np
import pandas as pd

GROUPS = dict(race=(["W", "B", "A", "O"], [0.55, 0.25, 0.15, 0.05]), sex=(["F", "M"], [0.5, 0.5]))
COUNT_METRICS = ["DI", "SPD", "EOpp", "EOD", "PP", "Theil"]


def partition(i: int, rows: int, seed: int = 0) -> pd.DataFrame:
    "Partition `i`: `rows` records from their own seed (a biased synthetic classifier's audit extract)."
    rng = np.random.default_rng([seed, i])
    cols = {
        k: pd.Categorical.from_codes(rng.choice(len(v), rows, p=p), v)
        for k, (v, p) in GROUPS.items()
    }
    race_b = np.asarray(cols["race"].codes == 1)
    female = np.asarray(cols["sex"].codes == 0)
    y = rng.binomial(1, np.where(race_b, 0.5, 0.4)).astype(np.int8)
    p = np.clip(0.3 + 0.35 * y + 0.06 * female - 0.04 * race_b + rng.normal(0, 0.2, rows), 0.0, 1.0)
    return pd.DataFrame(dict(**cols, y=y, p=p, yh=(p > 0.5).astype(np.int8)))


def _splits(n: int, per: int) -> list[int]:
    k = max(1, -(-n // per))
    return [n // k + (j < n % k) for j in range(k)]


def frame(n: int, per: int, seed: int = 0):
    "The dask DataFrame of n rows in partitions of about `per` rows, generated on the workers."
    import dask.dataframe as dd

    sizes = _splits(n, per)
    meta = partition(0, 1, seed).iloc[:0]
    return dd.from_map(
        lambda a: partition(a[0], a[1], seed),
        list(enumerate(sizes)),
        meta=meta,
        enforce_metadata=False,
    )


class Peak:
    "Peak RSS of some processes, sampled in a thread."

    def __init__(self, pids, every=0.05):
        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.peak = [0] * len(self.procs)
        self.every, self._stop = every, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            for j, pr in enumerate(self.procs):
                try:
                    self.peak[j] = max(self.peak[j], pr.memory_info().rss)
                except Exception:
                    pass
            time.sleep(self.every)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def _timed(fn, pids):
    with Peak(pids) as pk:
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
    return out, dt, pk.peak


def _in_memory(args):
    "In a subprocess: make the frame, audit it, report the times and the peak RSS of this process."
    n, per, cal, K, q = args
    import resource
    import fairlib as fl

    warnings.simplefilter("ignore")
    t = time.perf_counter()
    f = pd.concat([partition(i, r) for i, r in enumerate(_splits(n, per))], ignore_index=True)
    t_gen = time.perf_counter() - t
    kw = dict(y_prob="p") if cal else dict(metrics=COUNT_METRICS)
    t = time.perf_counter()
    r = fl.audit(
        "y", "yh", sensitive_features=["race", "sex"], data=f, vfr=True, n_resamples=K, **kw
    )
    t_audit = time.perf_counter() - t
    q.put(
        dict(
            gen=t_gen,
            audit=t_audit,
            rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            n=r.n,
        )
    )


def in_memory(n, per, cal, K):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    pr = ctx.Process(target=_in_memory, args=((n, per, cal, K, q),))
    pr.start()
    out = q.get()
    pr.join()
    return out


def machine() -> dict:
    import psutil

    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            model = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return dict(
        nproc=os.cpu_count(),
        memory_gb=round(psutil.virtual_memory().total / 2**30, 1),
        cpu=model,
        load_average=os.getloadavg(),
        python=platform.python_version(),
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7])
    ap.add_argument("--rows-per-partition", type=float, default=1e6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="2GB")
    ap.add_argument("--n-resamples", type=int, default=500)
    ap.add_argument(
        "--in-memory-max", type=float, default=1e7, help="largest size also audited in memory"
    )
    ap.add_argument(
        "--in-memory-cal-max",
        type=float,
        default=1e6,
        help="... with scores and Cal (slow in memory)",
    )
    ap.add_argument(
        "--counts-max",
        type=float,
        default=1e7,
        help="largest size of the 'counts' audit on the cluster",
    )
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import dask
    import fairlib as fl
    from distributed import Client, LocalCluster

    per, K = int(a.rows_per_partition), a.n_resamples
    info = machine()
    print(f"machine: {info}", flush=True)
    rows = []
    with (
        LocalCluster(
            n_workers=a.workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=a.memory_limit,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=40,
        ) as cluster,
        Client(cluster) as client,
    ):
        pids = list(client.run(os.getpid).values()) + [os.getpid()]  # the workers, then the client
        warm = frame(200_000, 50_000)  # imports and first calls on the workers, outside the timings
        fl.audit(
            "y",
            "yh",
            sensitive_features=["race", "sex"],
            y_prob="p",
            data=warm,
            vfr=True,
            n_resamples=K,
        )
        warm.groupby(["race", "sex"], observed=True).size().compute()
        for n in map(int, a.sizes):
            ddf = frame(n, min(per, -(-n // (4 * a.workers))))  # at least 4 partitions per worker
            P = ddf.npartitions
            _, t_gen, _ = _timed(lambda: ddf.map_partitions(len).sum().compute(), pids)
            cols = ["race", "sex", "y", "yh"]
            _, t_floor, _ = _timed(lambda: ddf.groupby(cols, observed=True).size().compute(), pids)
            configs = [("all", True)] + ([("counts", False)] if n <= a.counts_max else [])
            for name, cal in configs:
                kw = dict(y_prob="p") if cal else dict(metrics=COUNT_METRICS)
                client.run(lambda: __import__("gc").collect())
                res, t_audit, peak = _timed(
                    lambda: fl.audit(
                        "y",
                        "yh",
                        sensitive_features=["race", "sex"],
                        data=ddf,
                        vfr=True,
                        n_resamples=K,
                        **kw,
                    ),
                    pids,
                )
                assert res.n == n
                row = dict(
                    rows=n,
                    audit=name,
                    partitions=P,
                    generate_s=t_gen,
                    floor_s=t_floor,
                    audit_s=t_audit,
                    rows_per_s=n / t_audit,
                    peak_worker_gb=max(peak[:-1]) / 1e9,
                    peak_client_gb=peak[-1] / 1e9,
                    vfr_max=float(res.metrics.vfr.max()),
                )
                fits = n <= (a.in_memory_cal_max if cal else a.in_memory_max)
                if fits:
                    m = in_memory(n, min(per, -(-n // (4 * a.workers))), cal, K)
                    row.update(
                        memory_audit_s=m["audit"],
                        memory_gen_s=m["gen"],
                        memory_peak_gb=m["rss"] / 1e9,
                        ratio_to_memory=t_audit / (m["audit"] + m["gen"]),
                    )
                row["ratio_to_floor"] = t_audit / t_floor
                rows.append(row)
                print(json.dumps(row), flush=True)
    info["load_average_after"] = os.getloadavg()
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.round(3).to_string(index=False))
    print(
        f"dask {dask.__version__}, memory limit {a.memory_limit} per worker, {a.workers} workers, K = {K}"
    )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(dict(machine=info, settings=vars(a), rows=rows), fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
