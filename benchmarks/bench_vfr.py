"""Benchmark: the VFR-Audit Axis-1 grid (12 models x 7 metrics x 4 attributes = 336 cells, K = 500,
N = 10,000) with fairlib's fast path vs plain index resampling vs fairlearn MetricFrame.

    python benchmarks/bench_vfr.py                 # the paper's audit partition size, 185,026 records
    python benchmarks/bench_vfr.py --predictions runs/work/vfr/predictions.pkl   # a trained panel

The audit partition is the twin cohort's 80/20 audit partition (185,026 records, the paper's size);
without --predictions the twelve "models" are synthetic score vectors (noisy functions of the label
and the attributes): the resampling cost does not depend on where the scores came from.
fairlib's whole grid is timed; the two reference implementations are timed on a few cells and a
few resamples each and extrapolated linearly to the full grid (their cost is linear in the number
of resamples and cells: one resampled cohort and one metric evaluation per resample).
"""
from __future__ import annotations
import argparse, json, sys, time
import numpy as np
import pandas as pd

from fairlib.core import check_rng, cell_seed
from fairlib.metrics import AUDIT_METRICS
from fairlib.vfr import ATTRIBUTES, audit_data, index_resample_values, vfr_grid, verdict_flip_rate


def audit_partition(n_audit: int, n_models: int, seed: int = 0) -> tuple[pd.DataFrame, str]:
    "Long predictions frame on an audit partition of `n_audit` records (the twin's, when available)."
    try:
        from fairlib.data.texas import synthetic_texas100x, prepare_cohort
        from fairlib.models import paper_split
        cohort = prepare_cohort(synthetic_texas100x(seed=seed))
        audit = cohort.iloc[paper_split(cohort.los_gt3).audit[:n_audit]].reset_index(drop=True)
        source = f"twin cohort (seed {seed}), 80/20 audit partition"
    except ImportError:                                    # before fairlib.data.texas exists
        rng = np.random.default_rng(seed)
        audit = pd.DataFrame(dict(
            race=rng.choice(["White", "Other", "Black", "Asian/Pacific Islander", "American Indian"], n_audit,
                            p=[0.652, 0.202, 0.125, 0.018, 0.003]),
            sex=rng.choice(["Female", "Male"], n_audit, p=[0.633, 0.367]),
            ethnicity=rng.choice(["Hispanic", "Not Hispanic"], n_audit, p=[0.275, 0.725]),
            age_bucket=rng.choice(["Pediatric", "Young Adult", "Middle-Aged", "Elderly"], n_audit, p=[.04, .23, .30, .43])))
        audit["los_gt3"] = rng.binomial(1, 0.45, n_audit)
        source = "stand-in attributes (fairlib.data.texas not importable)"
    rng = np.random.default_rng(seed + 1)
    y = audit.los_gt3.to_numpy()
    age_shift = audit.age_bucket.map({"Pediatric": -0.8, "Young Adult": -0.6, "Middle-Aged": 0.0, "Elderly": 0.5}).to_numpy()
    frames = []
    for j in range(n_models):
        logit = (1.5 + 0.15 * j) * (2 * y - 1) + 0.6 * age_shift + rng.normal(0, 1.2, y.size)
        p = 1 / (1 + np.exp(-logit))
        frames.append(pd.DataFrame(dict(model=f"model_{j:02d}", y_true=y, y_prob=p, y_pred=(p >= 0.5).astype(np.int8),
                                        **{a: audit[a].to_numpy() for a in ATTRIBUTES})))
    out = pd.concat(frames, ignore_index=True)
    return out.astype({a: "category" for a in ATTRIBUTES}), source      # as 02_panel writes them


def fairlearn_values(frame: pd.DataFrame, attribute: str, metric: str, K: int, N: int, seed) -> tuple[np.ndarray, float]:
    "K resampled values with fairlearn MetricFrame (same stratified index resampling); returns values and seconds."
    from fairlearn.metrics import MetricFrame, selection_rate, true_positive_rate, false_positive_rate
    from sklearn.metrics import precision_score
    y, yh, a = frame.y_true.to_numpy(), frame.y_pred.to_numpy(), frame[attribute].to_numpy()
    data = audit_data(y, yh, a, N=N)
    key = data.ct.codes * 2 + data.y
    strata = [np.flatnonzero(key == s) for s in range(data.m.size)]
    m = data.m.reshape(-1); rng = check_rng(seed)
    fns = dict(sr=selection_rate, tpr=true_positive_rate, fpr=false_positive_rate,
               ppv=lambda t, p: precision_score(t, p, zero_division=np.nan))
    out = np.empty(K); t0 = time.perf_counter()
    for k in range(K):
        idx = np.concatenate([st[rng.integers(0, st.size, m[s])] for s, st in enumerate(strata) if m[s] > 0])
        mf = MetricFrame(metrics=fns, y_true=y[idx], y_pred=yh[idx], sensitive_features=a[idx])
        g = mf.by_group
        spread = lambda c: g[c].max() - g[c].min()
        out[k] = dict(DI=g.sr.min() / g.sr.max(), SPD=spread("sr"), EOpp=spread("tpr"),
                      EOD=max(spread("tpr"), spread("fpr")), PP=spread("ppv"))[metric]
    return out, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--K", type=int, default=500); ap.add_argument("--N", type=int, default=10_000)
    ap.add_argument("--n-audit", type=int, default=185_026); ap.add_argument("--models", type=int, default=12)
    ap.add_argument("--predictions", help="long predictions pickle from nbs/papers/vfr/02_panel (work_dir)")
    ap.add_argument("--naive-K", type=int, default=40, help="resamples per timed cell for plain index resampling")
    ap.add_argument("--fairlearn-K", type=int, default=5, help="resamples per timed cell for fairlearn MetricFrame")
    ap.add_argument("--json", help="write the measurements here")
    a = ap.parse_args(argv)

    if a.predictions:
        pred = pd.read_pickle(a.predictions); source = a.predictions
    else:
        pred, source = audit_partition(a.n_audit, a.models)
    models = list(dict.fromkeys(pred.model)); n_rec = int((pred.model == models[0]).sum())
    cells = len(models) * len(AUDIT_METRICS) * len(ATTRIBUTES)
    print(f"audit partition: {n_rec:,} records x {len(models)} models ({source}); grid = {cells} cells, K={a.K}, N={a.N:,}")

    res = {}
    for nj in (1, 2):
        t0 = time.perf_counter()
        grid = vfr_grid(pred, K=a.K, N=a.N, seed=0, n_jobs=nj, progress=False)
        res[f"fairlib_n_jobs{nj}"] = time.perf_counter() - t0
        print(f"fairlib fast path, n_jobs={nj}: {res[f'fairlib_n_jobs{nj}']:.2f} s for the full grid")
    fast = min(res["fairlib_n_jobs1"], res["fairlib_n_jobs2"])
    count_metrics = [m for m in AUDIT_METRICS if not AUDIT_METRICS[m].needs_prob]
    t0 = time.perf_counter(); vfr_grid(pred, metrics=count_metrics, K=a.K, N=a.N, progress=False)
    res["fairlib_count_cells"] = time.perf_counter() - t0
    t0 = time.perf_counter(); vfr_grid(pred, metrics=["Cal"], K=a.K, N=a.N, progress=False)
    res["fairlib_cal_cells"] = time.perf_counter() - t0
    n_count = len(models) * len(count_metrics) * len(ATTRIBUTES); n_cal = len(models) * len(ATTRIBUTES)
    print(f"  of which: {n_count} count-based cells {res['fairlib_count_cells']:.2f} s, "
          f"{n_cal} calibration cells {res['fairlib_cal_cells']:.2f} s (n_jobs=1)")

    # plain index resampling: a count-metric cell and a calibration cell per attribute of one model
    f0 = pred[pred.model == models[0]]
    naive_t, naive_n, per_kind = 0.0, 0, {"count": [0.0, 0], "cal": [0.0, 0]}
    for attr, metric in [("race", "EOD"), ("age_bucket", "DI"), ("sex", "Cal"), ("ethnicity", "PP"), ("race", "Cal")]:
        d = audit_data(f0.y_true.to_numpy(), f0.y_pred.to_numpy(), f0[attr].to_numpy(), y_prob=f0.y_prob.to_numpy(), N=a.N)
        t0 = time.perf_counter(); v = index_resample_values(d, metric, a.naive_K, cell_seed(1, attr, metric))
        dt = time.perf_counter() - t0; naive_t += dt; naive_n += a.naive_K
        kind = per_kind["cal" if AUDIT_METRICS[metric].needs_prob else "count"]; kind[0] += dt; kind[1] += a.naive_K
        r = grid[(grid.model == models[0]) & (grid.attribute == attr) & (grid.metric == metric)].iloc[0]
        fv = verdict_flip_rate(f0.y_true, f0.y_pred, f0[attr], metric, y_prob=f0.y_prob, K=a.K, N=a.N, seed=2).metric_values
        print(f"  check {metric}/{attr}: index mean {np.nanmean(v):.4f} sd {np.nanstd(v):.4f} (K={a.naive_K}) | "
              f"fast mean {np.nanmean(fv):.4f} sd {np.nanstd(fv):.4f} (K={a.K}); grid VFR {r.vfr:.3f}")
    per_count = per_kind["count"][0] / per_kind["count"][1]; per_cal = per_kind["cal"][0] / per_kind["cal"][1]
    naive_count, naive_cal = per_count * a.K * n_count, per_cal * a.K * n_cal
    naive = naive_count + naive_cal; per = naive / (a.K * cells)
    print(f"plain index resampling: {per_count * 1e3:.2f} ms per resample of a count-based cell, {per_cal * 1e3:.2f} ms "
          f"of a calibration cell (measured on {naive_n} resamples) -> {naive:,.0f} s extrapolated for {cells} cells x K={a.K}")
    print(f"  speedup by cell kind (n_jobs=1): count-based {naive_count / res['fairlib_count_cells']:,.0f}x, "
          f"calibration {naive_cal / res['fairlib_cal_cells']:,.0f}x")

    fl_t, fl_n = 0.0, 0
    for attr, metric in [("race", "EOD"), ("sex", "SPD")]:
        _, t = fairlearn_values(f0, attr, metric, a.fairlearn_K, a.N, 3); fl_t += t; fl_n += a.fairlearn_K
    fl_per = fl_t / fl_n; fl = fl_per * a.K * cells
    print(f"fairlearn MetricFrame: {fl_per * 1e3:.1f} ms per resample (measured on {fl_n} resamples) "
          f"-> {fl:,.0f} s extrapolated")

    table = pd.DataFrame([
        dict(implementation="fairlib fast (count/bin draws)", seconds=fast, basis="measured, full grid", speedup=1.0),
        dict(implementation="plain index resampling", seconds=naive, basis=f"extrapolated from {naive_n} resamples",
             speedup=naive / fast),
        dict(implementation="fairlearn MetricFrame", seconds=fl, basis=f"extrapolated from {fl_n} resamples",
             speedup=fl / fast)])
    print(); print(table.to_string(index=False, float_format=lambda x: f"{x:,.2f}"))
    print(f"\ntarget: full grid < 10 s -> {'MET' if fast < 10 else 'NOT MET'} ({fast:.2f} s); "
          f">= 100x faster than index resampling -> {'MET' if naive / fast >= 100 else 'NOT MET'} ({naive / fast:,.0f}x)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(dict(records=n_rec, models=len(models), cells=cells, K=a.K, N=a.N, source=source, **res,
                           index_per_resample_s=per, index_extrapolated_s=naive,
                           speedup_count_cells=naive_count / res["fairlib_count_cells"],
                           speedup_cal_cells=naive_cal / res["fairlib_cal_cells"], fairlearn_per_resample_s=fl_per,
                           fairlearn_extrapolated_s=fl, speedup_index=naive / fast, speedup_fairlearn=fl / fast), fh, indent=1)
    return table


if __name__ == "__main__":
    main(sys.argv[1:])
