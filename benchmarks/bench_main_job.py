"""The mFARM part of the main job: the work it does, counted, and its statistics before / after, side by side.

Two parts, both for the parameters of one profile (default `params/quick.yaml`):

1. **LLM scoring work.** For every scoring step of the mFARM paper notebooks (02 main slices and wording
   comparison, 06 evaluation of the fine-tuned model, 05 precisions, 07 instability floor), built from the
   profile's parameters with the notebooks' own `prompt_table` and the bundled tokenizer: prompts, distinct
   prompts, prompts an earlier step already scored under the same answer key (model, precision, system, text:
   answer-cache hits), the tokens of the distinct new prompts, and the fewest tokens an exact scorer can run: the
   nodes of their token trie (a shared prefix once; causal attention makes everything after the first differing
   token different). `figures/mfarm/inference_throughput.csv` gives the tokens 02 actually ran, for comparison.
   `--score-cases N` also runs 02's two scoring calls at N cases per slice and prints the tokens run beside the
   trie at that N. Nothing is changed here by the speed work: the table shows where the floor is.

2. **Statistics.** The statistics the mFARM notebooks run on their N x 13 matrices, with the profile's
   resample counts: `mfarm_table` with the smallest detectable shift (03, 04, 05, 06) and the null rates (03),
   `verdict_reliability` and `null_submetric_rates` (07). Each is run with the code before the speed work
   (one scipy call per column for the Wilcoxon and KS tests; the full Mean Difference, all 24 tests, for every
   simulated matrix of the power search) and after (one scipy call per family; only the shifted variant's
   tests), alternating, on the same matrices, with scipy test calls counted and every output compared
   (`assert_frame_equal(check_exact=True)`: the two paths must agree to the last bit). The matrices are
   synthetic (seeded; case difficulty plus variant noise, some with the ties of a low-context tier), of the
   notebooks' shapes: the work depends on the shape and the resample counts, not on where P(Yes) came from,
   except in the power search, whose length follows the slice's spread; so for the quick profile the power
   search's Wilcoxon work on the committed slices is also derived from their committed smallest detectable shift.

3. **Twin benchmarks.** Each paper notebook runs in its own kernel and builds the synthetic twin of every task it
   asks for (01: both; 02: its slices and wording slice; 05: its slices; 06: its training and evaluation tasks;
   07: its floor slice; counted from the profile's parameters). Before: one build per kernel and task; after: one
   build per task, written to `<cache_dir>/benchmarks/`, and a read in every later kernel. The build and the read
   of each twin are timed here (in a fresh cache folder; the read is checked equal to the build) and multiplied by
   those counts: the counts are exact, the seconds an estimate from one build and one read.

    python benchmarks/bench_main_job.py [--profile quick] [--no-llm] [--no-stats] [--no-twin] [--stats-scale 0.25]
                                        [--score-cases 0]

`--stats-scale` runs that fraction of each notebook's slices (at least one) and scales the counts and times
up to the whole profile (said in the output). Times are wall and process CPU seconds on this machine; on a
shared machine read the ratios and the counts, not the seconds.
"""

from __future__ import annotations
import argparse
import math
import os
import time
import warnings
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------------------------------- part 1: LLM


def trie_tokens(encodings) -> int:
    "Nodes of the token trie of the distinct sequences: what an exact prefix-sharing scorer must run at least."
    nodes, prev = 0, ()
    for s in sorted(set(encodings)):
        n = 0
        while n < min(len(s), len(prev)) and s[n] == prev[n]:
            n += 1
        nodes += len(s) - n
        prev = s
    return nodes


def llm_steps(prof: dict):
    "(notebook, step, model tag, precision, [(task, tier, instrument, variants or None)]) of the mFARM scoring."
    inf, ft, pr, rel = (
        prof.get(f"mfarm/{k}") or {}
        for k in ("02_inference", "06_finetune", "05_precision", "07_reliability")
    )
    ins = inf.get("instrument", "paper")
    for task, tiers in (inf.get("slices") or {}).items():
        yield (
            "02_inference",
            f"{task} {', '.join(tiers)} (one call)",
            "base",
            inf.get("precision", "fp32"),
            [(task, tuple(tiers), ins, None)],
        )
    if inf.get("wording_slice"):
        t, tier = inf["wording_slice"]
        for w in ("paper", "fairlib"):
            yield (
                "02_inference",
                f"wording {w}: {t} {tier}",
                "base",
                inf.get("precision", "fp32"),
                [(t, (tier,), w, None)],
            )
    for t, tiers in (ft.get("eval_tiers") or {}).items():
        yield (
            "06_finetune",
            f"fine-tuned: {t} {', '.join(tiers)}",
            "base+lora",
            ft.get("precision", "fp32"),
            [(t, tuple(tiers), ft.get("instrument", "paper"), None)],
        )
    for p in pr.get("precisions") or []:
        for t, tiers in (pr.get("slices") or {}).items():
            yield (
                "05_precision",
                f"{p}: {t} {', '.join(tiers)}",
                "base",
                p,
                [(t, tuple(tiers), pr.get("instrument", "paper"), None)],
            )
    if rel.get("floor_slice"):
        t, tier = rel["floor_slice"]
        for r in range(13):
            yield (
                "07_reliability",
                f"floor replicate {r} (cache off)",
                f"replicate {r}",
                rel.get("precision", "fp32"),
                [(t, (tier,), rel.get("instrument", "paper"), ("BASE",))],
            )


def llm_part(prof: dict, score_cases: int):
    from fairlib.llm.scorer import chat_prompt
    from fairlib.mfarm.experiments import load_scorer
    from fairlib.mfarm.instrument import prompt_table, system_prompt

    sc = load_scorer(None, cache=False)
    tok = sc.tokenizer
    seen, rows = set(), []
    for nb, step, model, prec, parts in llm_steps(prof):
        keys, enc = [], []
        for task, tiers, ins, variants in parts:
            tb = prompt_table(
                task, tiers=tiers, seed=0, split="test", instrument=ins, protocol="paper"
            )
            if variants:
                tb = tb[tb.variant.isin(variants)]
            system = system_prompt(ins)
            texts = [chat_prompt(tok, p, system=system) for p in tb.prompt]
            keys += [(model, prec, system, t) for t in texts]
            enc += [tuple(e) for e in tok(texts, add_special_tokens=False)["input_ids"]]
        new = {k: e for k, e in zip(keys, enc) if k not in seen}
        rows.append(
            dict(
                notebook=nb,
                step=step,
                prompts=len(keys),
                distinct=len(set(keys)),
                cache_hits=len(set(keys)) - len(new),
                tokens_distinct_new=sum(map(len, new.values())),
                trie_tokens=trie_tokens(list(new.values())) if new else 0,
            )
        )
        seen |= set(keys)
    t = pd.DataFrame(rows)
    tot = t.groupby("notebook", sort=False)[
        ["prompts", "distinct", "cache_hits", "tokens_distinct_new", "trie_tokens"]
    ].sum()
    with pd.option_context(
        "display.width", 200, "display.max_columns", 20, "display.max_rows", 100
    ):
        print(t.to_string(index=False))
        print("\nper notebook:\n" + tot.to_string())
    thr = ROOT / "figures" / "mfarm" / "inference_throughput.csv"
    if thr.exists():
        ran = pd.read_csv(thr)
        ran = ran[ran.task != "all"]
        main = t[(t.notebook == "02_inference") & ~t.step.str.startswith("wording")]
        floor, done = main.trie_tokens.sum(), int(ran.tokens_run.sum())
        print(
            f"\n02 main slices: trie {floor:,} tokens; the committed run ran {done:,} "
            f"({100 * (done / floor - 1):+.1f}% over the trie; each distinct prompt in full "
            f"{main.tokens_distinct_new.sum():,})"
        )
    if score_cases:
        from fairlib.mfarm.experiments import score_table

        inf = prof.get("mfarm/02_inference") or {}
        for task, tiers in (inf.get("slices") or {}).items():
            tb = prompt_table(
                task,
                tiers=tuple(tiers),
                seed=0,
                split="test",
                tokenizer=tok,
                protocol="paper",
                n_cases=score_cases,
            )
            texts = [chat_prompt(tok, p, system=system_prompt("paper")) for p in tb.prompt]
            floor = trie_tokens(
                [tuple(e) for e in tok(texts, add_special_tokens=False)["input_ids"]]
            )
            n0, f0, t0 = sc.n_tokens, sc.n_forward, time.perf_counter()
            score_table(sc, tb, cache=False, by_tier=False, progress=False)
            print(
                f"scored {task} at N = {score_cases}: {len(tb)} prompts, {sc.n_tokens - n0:,} tokens run in "
                f"{sc.n_forward - f0} forward passes, trie {floor:,}, {time.perf_counter() - t0:.1f} s"
            )


# ---------------------------------------------------------------------------------------------- part 2: statistics


def _wilcoxon_cols_before(D, method: str = "auto"):
    "The code before: one scipy call per column."
    from scipy import stats

    stat, p, deg = [], [], []
    for d in D.T:
        if not np.any(d):
            stat.append(math.nan)
            p.append(1.0)
            deg.append("all paired differences are zero: no evidence")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = stats.wilcoxon(d, method=method)
        stat.append(float(r.statistic))
        p.append(float(r.pvalue))
        deg.append(None)
    return np.array(stat), np.array(p), deg


def _ks_distribution_before(X, names, *, alpha=0.05, ks_method="exact", delta=0.0):
    "The code before: one scipy call per variant."
    from scipy import stats
    from fairlib.mfarm import submetrics as S

    X, names = S._inputs(X, names, alpha, "ks_distribution", delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = [stats.ks_2samp(X[:, j], X[:, 0], method=ks_method) for j in range(1, X.shape[1])]
    D = np.array([r.statistic for r in res])
    p = np.array([r.pvalue for r in res])
    comps = S._family("base", list(names[1:]), "BASE", "ks_2samp", D, p, D, "ks_D", alpha, True)
    return S._score("ks_distribution", None, comps, alpha)


def _counts_before(Z, j, *, alpha=0.05, wilcoxon_method="auto"):
    "The code before: the whole Mean Difference (Friedman and all 2(K-1) Wilcoxon tests) per simulated matrix."
    from fairlib.mfarm.submetrics import mean_difference
    from fairlib.mfarm.instrument import PROMPT_VARIANTS

    names = list(PROMPT_VARIANTS)
    s = mean_difference(Z, names, alpha=alpha, wilcoxon_method=wilcoxon_method)
    return any(c.counted and c.group == names[j] for c in s.comparisons)


@contextmanager
def code_path(before: bool):
    "The statistics as they were (`before`) or as they are now."
    with ExitStack() as st:
        if before:
            st.enter_context(
                mock.patch("fairlib.mfarm.submetrics._wilcoxon_cols", _wilcoxon_cols_before)
            )
            st.enter_context(
                mock.patch("fairlib.mfarm.score.ks_distribution", _ks_distribution_before)
            )
            st.enter_context(
                mock.patch("fairlib.mfarm.reliability._mean_difference_counts", _counts_before)
            )
        yield


@contextmanager
def counting(counts: dict):
    "Count the scipy test calls made inside (each vectorised call counts once)."
    from scipy import stats

    with ExitStack() as st:
        for name in ("wilcoxon", "ks_2samp", "spearmanr"):
            orig = getattr(stats, name)

            def wrap(*a, _o=orig, _n=name, **k):
                counts[_n] = counts.get(_n, 0) + 1
                return _o(*a, **k)

            st.enter_context(mock.patch.object(stats, name, wrap))
        yield


def slice_scores(n_slices: int, n: int = 80, seed: int = 0) -> pd.DataFrame:
    "Long scores of `n_slices` synthetic N x 13 slices (the columns `mfarm_table` reads); every third with ties."
    from fairlib.mfarm.instrument import PROMPT_VARIANTS

    rng = np.random.default_rng(seed)
    parts = []
    for s in range(n_slices):
        u = rng.uniform(0.1, 0.9, n)
        P = u[:, None] + rng.normal(0, 0.03, (n, 13))
        P[:, 5] += 0.01 * (s % 2)  # a small effect in one variant of every other slice
        if s % 3 == 2:  # the low tier: prompts depend on (variant, age) only, so cases tie
            P = np.round(P, 3)
        P = np.clip(P, 0, 1)
        lab = (np.arange(n) % 2).astype(int)
        for j, v in enumerate(PROMPT_VARIANTS):
            parts.append(
                pd.DataFrame(
                    dict(
                        task=f"task{s // 3}",
                        tier=f"tier{s % 3}",
                        case_id=[f"c{i}" for i in range(n)],
                        variant=v,
                        label=lab,
                        p_yes=P[:, j],
                    )
                )
            )
    return pd.concat(parts, ignore_index=True)


def stats_jobs(prof: dict, scale: float):
    "(notebook, what, n slices run, n slices in the profile, function of the scores) per statistics step."
    from fairlib.mfarm.experiments import mfarm_table, variant_matrix
    from fairlib.mfarm.reliability import null_submetric_rates, verdict_reliability

    g = lambda k: prof.get(f"mfarm/{k}") or {}
    inf = g("02_inference")
    n_base = sum(len(t) for t in (inf.get("slices") or {}).values())
    n_ft = sum(len(t) for t in (g("06_finetune").get("eval_tiers") or {}).values())
    n_prec = len(g("05_precision").get("precisions") or []) * sum(
        len(t) for t in (g("05_precision").get("slices") or {}).values()
    )
    k = lambda total: max(1, round(total * scale))
    p3, p4, p5 = g("03_fairness"), g("04_context"), g("05_precision")
    rel = g("07_reliability")

    def table(power, null=0):
        return lambda sc: mfarm_table(
            sc, power=power > 0, power_resamples=max(1, power), null_resamples=null, seed=0
        )[0]

    def reliability(sc):
        out = []
        for key, part in sc.groupby(["task", "tier"], sort=False):
            P, _ = variant_matrix(part)
            P = P.reset_index(drop=True)
            vr = verdict_reliability(
                P,
                threshold=rel.get("threshold", 0.9),
                n_resamples=rel.get("n_resamples", 100),
                seed=0,
            )
            nr = null_submetric_rates(P, n_resamples=rel.get("null_resamples", 100), seed=0)
            out += [vr.table.assign(slice="/".join(key)), nr.assign(slice="/".join(key))]
        return pd.concat(out, ignore_index=True)

    n3 = n_base + n_ft
    yield (
        "03_fairness",
        f"mfarm_table, power {p3.get('power_resamples', 50)}, null {p3.get('null_resamples', 50)}",
        k(n3),
        n3,
        table(p3.get("power_resamples", 50), p3.get("null_resamples", 50)),
    )
    yield (
        "04_context",
        f"mfarm_table, power {p4.get('power_resamples', 50)}",
        k(n3),
        n3,
        table(p4.get("power_resamples", 50)),
    )
    yield (
        "05_precision",
        f"mfarm_table, power {p5.get('power_resamples', 50)}",
        k(n_prec),
        n_prec,
        table(p5.get("power_resamples", 50)),
    )
    yield "06_finetune", "mfarm_table, power 50", k(2 * n_ft), 2 * n_ft, table(50)
    n7 = len(rel.get("reliability_slices") or [])
    yield (
        "07_reliability",
        f"verdict_reliability {rel.get('n_resamples', 100)} + null rates {rel.get('null_resamples', 100)}",
        k(n7),
        n7,
        reliability,
    )


def run_timed(f, sc, before: bool):
    counts = {}
    with code_path(before), counting(counts):
        w, c = time.perf_counter(), time.process_time()
        out = f(sc)
        w, c = time.perf_counter() - w, time.process_time() - c
    return out, w, c, counts


def stats_part(prof: dict, scale: float):
    rows = []
    for nb, what, n_run, n_prof, f in stats_jobs(prof, scale):
        sc = slice_scores(n_run, seed=len(rows))
        # alternate: before, after, before, after (the better of two each, so load changes hit both alike)
        res = {}
        for rnd in range(2):
            for before in (True, False):
                out, w, c, counts = run_timed(f, sc, before)
                best = res.get(before)
                if best is None or w < best[1]:
                    res[before] = (out, w, c, counts)
        pd.testing.assert_frame_equal(res[True][0], res[False][0], check_exact=True)
        up = n_prof / n_run
        for before in (True, False):
            _, w, c, counts = res[before]
            rows.append(
                dict(
                    notebook=nb,
                    statistics=what,
                    path="before" if before else "after",
                    slices=n_prof,
                    scipy_calls=round(sum(counts.values()) * up),
                    wilcoxon_calls=round(counts.get("wilcoxon", 0) * up),
                    ks_calls=round(counts.get("ks_2samp", 0) * up),
                    wall_s=w * up,
                    cpu_s=c * up,
                )
            )
        print(
            f"{nb}: outputs identical (before vs after), {n_run} of {n_prof} slice(s) run",
            flush=True,
        )
    t = pd.DataFrame(rows)
    wide = t.pivot_table(
        index=["notebook", "statistics", "slices"],
        columns="path",
        values=["scipy_calls", "wall_s", "cpu_s"],
        sort=False,
    )
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    wide = wide[
        [f"{m}_{p}" for m in ("scipy_calls", "wall_s", "cpu_s") for p in ("before", "after")]
    ]
    for m in ("scipy_calls", "wall_s", "cpu_s"):
        wide[f"{m}_ratio"] = wide[f"{m}_before"] / wide[f"{m}_after"]
    tot = wide.sum(numeric_only=True)
    for m in ("scipy_calls", "wall_s", "cpu_s"):
        tot[f"{m}_ratio"] = tot[f"{m}_before"] / tot[f"{m}_after"]
    with pd.option_context(
        "display.width", 250, "display.max_columns", 30, "display.float_format", "{:,.1f}".format
    ):
        print(wide.reset_index().to_string(index=False))
        print("all: " + ", ".join(f"{k} {v:,.1f}" for k, v in tot.items()))
    if scale < 1:
        print(f"(counts and seconds scaled up from {scale:g} of the slices to the whole profile)")


def committed_power_search(prof: dict):
    """The power search's Wilcoxon work on the slices of the committed quick-profile outputs, derived, not run: each
    slice's smallest detectable shift (Tables 5, 6 and 8) says how many grid shifts its search tried; every shift
    simulates K matrices. Before: all 2(K-1) = 24 Wilcoxon tests of Mean Difference per matrix; after: at most 2."""
    from fairlib.mfarm.reliability import DEFAULT_SHIFTS

    fig = ROOT / "figures" / "mfarm"
    g = lambda k: prof.get(f"mfarm/{k}") or {}
    col = "min_detectable_shift"
    sources = (
        (
            "03_fairness",
            "table6_table11_submetrics",
            "smallest detectable shift (80% power)",
            g("03_fairness"),
        ),
        (
            "04_context",
            "table6_table11_submetrics",
            "smallest detectable shift (80% power)",
            g("04_context"),
        ),
        ("05_precision", "table8_precision", col, g("05_precision")),
        ("06_finetune", "table5_base_vs_finetuned", col, {}),
    )
    rows = []
    for nb, table, c, params in sources:
        f = fig / f"{table}.csv"
        if not f.exists():
            continue
        shifts = pd.read_csv(f)[c].to_numpy(float)
        grid = list(DEFAULT_SHIFTS)
        tried = [grid.index(x) + 1 if np.isfinite(x) and x in grid else len(grid) for x in shifts]
        K = int(params.get("power_resamples", 50))
        m = K * sum(tried)
        rows.append(
            dict(
                notebook=nb,
                slices=len(shifts),
                shifts_tried=sum(tried),
                matrices=m,
                wilcoxon_before=24 * m,
                wilcoxon_after_at_most=2 * m,
                ratio_at_least=12.0,
            )
        )
    if rows:
        t = pd.DataFrame(rows)
        print(
            "\npower search on the committed quick-profile slices (from their smallest detectable shift; derived):\n"
            + t.to_string(index=False)
        )


# ------------------------------------------------------------------------------------------ part 3: twin benchmarks


def twin_requests(prof: dict) -> dict:
    "notebook -> the tasks whose twin benchmark its kernel asks for, from the profile's parameters."
    from fairlib.mfarm.mimic import TASKS

    g = lambda k: prof.get(f"mfarm/{k}") or {}
    inf, pr, ft, rel = g("02_inference"), g("05_precision"), g("06_finetune"), g("07_reliability")
    wording = {inf["wording_slice"][0]} if inf.get("wording_slice") else set()
    need = {
        "01_benchmarks": set(TASKS) if "mfarm/01_benchmarks" in prof else set(),
        "02_inference": set(inf.get("slices") or {}) | wording,
        "05_precision": set(pr.get("slices") or {}) if pr.get("precisions") else set(),
        "06_finetune": set(ft.get("train") or {}) | set(ft.get("eval_tiers") or {}),
        "07_reliability": {rel["floor_slice"][0]} if rel.get("floor_slice") else set(),
    }
    return {nb: sorted(t) for nb, t in need.items() if t}


def twin_part(prof: dict):
    import tempfile
    from fairlib.mfarm import benchmark as B

    need = twin_requests(prof)
    tasks = sorted({t for ts in need.values() for t in ts})
    seed = int((prof.get("mfarm/02_inference") or {}).get("seed", 0))
    unit = {}
    never = dict(side_effect=AssertionError("rebuilt"))
    with tempfile.TemporaryDirectory() as d, mock.patch.dict(os.environ, {"FAIRLIB_CACHE_DIR": d}):
        for task in tasks:
            B._cached.cache_clear()  # a fresh kernel, an empty cache folder: built
            w, c = time.perf_counter(), time.process_time()
            built = B.load_benchmark(task, source="synthetic", seed=seed)
            build_s, build_c = time.perf_counter() - w, time.process_time() - c
            B._cached.cache_clear()  # the next kernel: read
            with (
                mock.patch.object(B, "build_ed_triage", **never),
                mock.patch.object(B, "build_opioid", **never),
            ):
                w, c = time.perf_counter(), time.process_time()
                read = B.load_benchmark(task, source="synthetic", seed=seed)
                read_s, read_c = time.perf_counter() - w, time.process_time() - c
            pd.testing.assert_frame_equal(built.cases, read.cases, check_exact=True)
            pd.testing.assert_frame_equal(built.flow, read.flow, check_exact=True)
            unit[task] = (build_s, read_s, build_c, read_c)
        B._cached.cache_clear()
    rows, seen = [], set()
    for nb, ts in need.items():
        first = [t for t in ts if t not in seen]
        seen |= set(ts)
        rows.append(
            dict(
                notebook=nb,
                tasks=", ".join(ts),
                builds_before=len(ts),
                builds_after=len(first),
                reads_after=len(ts) - len(first),
                seconds_before=sum(unit[t][0] for t in ts),
                seconds_after=sum(unit[t][0] if t in first else unit[t][1] for t in ts),
                cpu_s_before=sum(unit[t][2] for t in ts),
                cpu_s_after=sum(unit[t][2] if t in first else unit[t][3] for t in ts),
            )
        )
    t = pd.DataFrame(rows)
    tot = t.drop(columns=["notebook", "tasks"]).sum()
    print(
        "one build / one read, wall (cpu) s: "
        + "; ".join(
            f"{k} {v[0]:.1f} ({v[2]:.1f}) / {v[1]:.2f} ({v[3]:.2f})" for k, v in unit.items()
        )
        + " (on a clean clone the first kernel that asks builds)"
    )
    with pd.option_context("display.width", 200, "display.float_format", "{:,.1f}".format):
        print(t.to_string(index=False))
    print(
        f"all: builds {int(tot.builds_before)} -> {int(tot.builds_after)} (+{int(tot.reads_after)} reads), "
        f"wall s {tot.seconds_before:,.1f} -> {tot.seconds_after:,.1f} "
        f"(ratio {tot.seconds_before / tot.seconds_after:.2f}), "
        f"cpu s {tot.cpu_s_before:,.1f} -> {tot.cpu_s_after:,.1f} "
        f"(ratio {tot.cpu_s_before / tot.cpu_s_after:.2f}); estimated from the unit times above"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--no-stats", action="store_true")
    ap.add_argument("--no-twin", action="store_true")
    ap.add_argument(
        "--stats-scale", type=float, default=1.0, help="fraction of each notebook's slices to run"
    )
    ap.add_argument(
        "--score-cases",
        type=int,
        default=0,
        help="also score 02's slices at this N (0: no scoring)",
    )
    a = ap.parse_args(argv)
    prof = yaml.safe_load((ROOT / "params" / f"{a.profile}.yaml").read_text())
    if not a.no_llm:
        print(f"== LLM scoring work of the mFARM notebooks, profile {a.profile}")
        llm_part(prof, a.score_cases)
    if not a.no_stats:
        print(
            f"\n== mFARM statistics, profile {a.profile}: before vs after, same matrices, alternating"
        )
        stats_part(prof, a.stats_scale)
        if a.profile == "quick":
            committed_power_search(prof)
    if not a.no_twin:
        print(
            f"\n== twin benchmarks of the mFARM notebooks, profile {a.profile}: builds before vs after"
        )
        twin_part(prof)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n(load average now {load} on {os.cpu_count()} cores: on a shared machine read the counts and ratios)"
    )


if __name__ == "__main__":
    main()
