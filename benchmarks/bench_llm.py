"""Speed of fairlib's batched P(Yes) scorer: naive loop vs batched scorer vs the machine's compute bound, in ONE run.

Same model (default: the bundled SmolLM2-135M-Instruct), same prompts (ED-triage prompts of the authors'
instrument from `fairlib.mfarm.instrument`, `instrument="paper"`, one tier), same precision (fp32), same run:

1. **naive**: one prompt at a time through `generate(max_new_tokens=1)`, P(Yes) from the first step's logits;
2. **batched**: `TransformersScorer.score` (length-bucketed left-padded batches, last-position LM head,
   shared prefixes run once as a prefix tree), cache off;
3. **bound**: the FLOPs of the tokens the batched scorer actually computed (shared prefix once + every
   padded row token through every decoder linear layer, attention scores, and one LM-head row per prompt)
   divided by the throughput of fp32 linear layers of the model's own shapes, measured in this run (before
   and after the scoring, averaged) with both kernels (plain `torch.nn.Linear`, PyTorch's default BLAS, and
   the oneDNN packed layers fairlib's CPU scorer runs); the bound uses the faster of the two.

The naive loop runs its own copy of the model on PyTorch's default kernels (what a plain transformers
user gets); the scorer runs fairlib's default (`cpu_kernel="auto"`: oneDNN on a CPU in fp32), and the same
scorer on PyTorch's kernels (`cpu_kernel="aten"`) is timed in the same rounds to separate the two effects.

the methods alternate chunk by chunk so load changes on a shared machine hit both alike. Reports
the ratios (targets: batched within 1.5x of the bound, >= 1.5x faster than naive), how much prefix
the authors' template lets prompts share (their demographic descriptor sits in the first sentence)
next to fairlib's own wording, and then precision options as separate effects (never defaults):
int8 dynamic quantisation (and optionally bf16) with their speed and max |dP(Yes)| against fp32.
Prints the CPU's instruction sets (avx2 / avx512f / avx512_bf16 / amx) because bf16 and int8 speed
depend on them. Exit status 1 if naive and batched P(Yes) differ by >= 1e-4.

Then an ablation of the oneDNN path: the scorer with its causal-chunked attention, its last-layer cut, or its
SiLU fusion switched off (one at a time), same prompts, alternating rounds: time and max |dP| against the default.

Then the three context tiers of a few ED cases, scored one call per tier vs all in one call (the prefix tree
runs each case header and the body ED high shares with ED medium once): time, tokens run, max |dP|.

    python benchmarks/bench_llm.py [--n 24] [--batch-size 8] [--tier high] [--model bundled] [--bf16] [--no-int8]
                                   [--tier-cases 2] [--no-ablation] [--ablation-rounds 4]
"""

from __future__ import annotations
import argparse, os, sys, time
import numpy as np
import torch


def cpu_flags() -> str:
    "Instruction sets relevant to fp32 / bf16 / int8 speed, from /proc/cpuinfo."
    try:
        flags = set(open("/proc/cpuinfo").read().split())
    except OSError:
        return "unknown (no /proc/cpuinfo)"
    want = [
        "avx2",
        "fma",
        "avx512f",
        "avx512_vnni",
        "avx_vnni",
        "avx512_bf16",
        "amx_tile",
        "amx_bf16",
        "amx_int8",
    ]
    model = next(
        (l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
        "?",
    )
    return f"{model}; " + ", ".join(f"{f}={'yes' if f in flags else 'no'}" for f in want)


def bench_prompts(n: int, tokenizer, tier: str, instrument: str = "paper") -> list[str]:
    "n ED-triage test prompts of one tier (all 13 variants of each case) from `fairlib.mfarm.instrument`."
    from fairlib.mfarm.instrument import prompt_table

    df = prompt_table(
        "ed_triage",
        tiers=(tier,),
        n_cases=max(1, -(-n // 13)),
        seed=0,
        split="test",
        tokenizer=tokenizer,
        instrument=instrument,
    )
    return df["prompt"].tolist()[:n]


def common_prefix(seqs) -> int:
    n = 0
    while all(len(s) > n for s in seqs) and len({s[n] for s in seqs}) == 1:
        n += 1
    return n


def naive_generate(model, tokenizer, prompts, system, yes_ids, no_ids):
    "One prompt at a time through generate(max_new_tokens=1); P(Yes) from the first-step raw logits."
    from fairlib.llm.scorer import yes_no_probability

    out = []
    for p in prompts:
        enc = tokenizer.apply_chat_template(
            [{"role": "system", "content": system}, {"role": "user", "content": p}],
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        with torch.inference_mode():
            g = model.generate(
                **enc,
                max_new_tokens=1,
                do_sample=False,
                output_logits=True,
                return_dict_in_generate=True,
                pad_token_id=tokenizer.pad_token_id,
            )
        out.append(yes_no_probability(g.logits[0], yes_ids, no_ids)[0][0])
    return np.array(out)


def linear_shapes(model) -> list[tuple[int, int]]:
    "(in, out) of every nn.Linear in one decoder layer."
    layer = model.model.layers[0]
    return [
        (m.in_features, m.out_features) for m in layer.modules() if isinstance(m, torch.nn.Linear)
    ]


def linear_gflops(shapes, rows: int, reps: int = 5, kernel: str = "aten") -> float:
    """Throughput (GFLOP/s) of fp32 linear layers of `shapes` on `rows` tokens: plain `nn.Linear` (PyTorch's default
    BLAS) or, with kernel="onednn", the same layers with weights packed for oneDNN (what fairlib's CPU scorer runs)."""
    torch.manual_seed(0)
    layers = [torch.nn.Linear(i, o, bias=False) for i, o in shapes]
    if kernel == "onednn":
        from fairlib.llm.cpu import _Packed

        layers = [_Packed([l]) for l in layers]
    xs = {i: torch.randn(rows, i) for i, _ in shapes}
    with torch.inference_mode():
        for l, (i, _) in zip(layers, shapes):
            l(xs[i])  # warm-up
        t = time.perf_counter()
        for _ in range(reps):
            for l, (i, _) in zip(layers, shapes):
                l(xs[i])
        dt = time.perf_counter() - t
    return reps * sum(2 * rows * i * o for i, o in shapes) / dt / 1e9


def flops(model, work, tail_cut: bool = False) -> float:
    """FLOPs of the recorded work: [(rows, own tokens, prefix tokens already cached, positions kept)] + prefix passes.
    `tail_cut`: the last decoder layer's MLP runs on the kept positions only (fairlib's oneDNN path)."""
    cfg = model.config
    per_tok = 2 * sum(i * o for i, o in linear_shapes(model)) * cfg.num_hidden_layers
    mlp_tok = 2 * sum(
        m.in_features * m.out_features
        for m in model.model.layers[-1].mlp.modules()
        if isinstance(m, torch.nn.Linear)
    )
    d_attn = cfg.num_attention_heads * (cfg.hidden_size // cfg.num_attention_heads)
    head = 2 * cfg.hidden_size * cfg.vocab_size
    total = 0.0
    for rows, L, P, keep in work:
        total += rows * L * per_tok  # every (padded) token, every linear
        if tail_cut and L > keep:
            total -= rows * (L - keep) * mlp_tok  # ... but the last MLP: kept positions only
        total += (
            rows * L * (P + L) * 4 * d_attn * cfg.num_hidden_layers
        )  # QK^T and AV (upper bound: full context)
        total += rows * keep * head  # LM head rows actually computed
    return total


def main(argv=None):
    from fairlib.llm.transformers import TransformersScorer
    from fairlib.mfarm.instrument import SYSTEM_PROMPT

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=24, help="number of prompts")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--tier", default="high", choices=["high", "medium", "low"])
    ap.add_argument("--chunk", type=int, default=8, help="prompts per alternation round")
    ap.add_argument(
        "--model", default=None, help="model dir or id (default: llm_model setting, 'bundled')"
    )
    ap.add_argument(
        "--bf16",
        action="store_true",
        help="also time bf16 weights (slow on CPUs without bf16 instructions)",
    )
    ap.add_argument("--no-int8", action="store_true", help="skip the int8-dynamic precision run")
    ap.add_argument(
        "--no-ablation",
        action="store_true",
        help="skip timing the oneDNN path with each of its pieces off",
    )
    ap.add_argument("--ablation-rounds", type=int, default=4)
    ap.add_argument(
        "--tier-cases",
        type=int,
        default=2,
        help="ED cases whose three tiers are scored per tier vs in one call (0: skip)",
    )
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    print(f"CPU: {cpu_flags()}")
    print(
        f"torch {torch.__version__}, threads={torch.get_num_threads()}, cores={os.cpu_count()}, "
        f"load average at start {os.getloadavg()[0]:.1f} (a shared machine: compare the ratios, measured in one run)"
    )
    t = time.perf_counter()
    sc = TransformersScorer.from_pretrained(
        a.model, precision="fp32", batch_size=a.batch_size, cache=False
    )
    print(
        f"loaded {sc.model_label} ({sc.precision}; {sc.provenance.get('weights', '')}; CPU linear kernel "
        f"{sc.cpu_kernel}) in {time.perf_counter() - t:.1f} s"
    )
    # the naive loop runs its own copy of the model on PyTorch's default kernels (what a plain transformers user gets)
    plain = TransformersScorer.from_pretrained(
        a.model, precision="fp32", batch_size=a.batch_size, cache=False, cpu_kernel="aten"
    )
    prompts = bench_prompts(a.n, sc.tokenizer, a.tier, "paper")
    enc = sc.encode([sc.format(p, system=SYSTEM_PROMPT) for p in prompts])
    ntok = np.array([len(e) for e in enc])
    P = common_prefix(enc)
    print(
        f"{len(prompts)} prompts (authors' instrument, ED triage, tier {a.tier}): templated length mean "
        f"{ntok.mean():.0f} tokens (min {ntok.min()}, max {ntok.max()})"
    )
    print(
        f"shared prefix, authors' template : {P} tokens = {P / ntok.mean():.0%} of a prompt "
        f"(chat template + system message + the words before the demographic descriptor)"
    )
    alt = bench_prompts(a.n, sc.tokenizer, a.tier, "fairlib")
    ae = sc.encode([sc.format(p, system=SYSTEM_PROMPT) for p in alt])
    print(
        f"shared prefix, fairlib's wording : {common_prefix(ae)} tokens = "
        f"{common_prefix(ae) / np.mean([len(e) for e in ae]):.0%} of a prompt"
    )

    # instrument the scorer: record what every forward pass computes (rows, longest own part, longest prefix, keep)
    work = []
    orig_run = sc._run

    def run(batch, prefixes=None, keep=1, want_kv=False):
        Ps = [len(p[0]) if p is not None else 0 for p in (prefixes or [None] * len(batch))]
        work.append((len(batch), max(len(s) - P for s, P in zip(batch, Ps)), max(Ps), keep))
        return orig_run(batch, prefixes, keep, want_kv)

    sc._run = run

    shapes = linear_shapes(sc.model)
    rows = int(a.batch_size * (ntok.mean() - P))
    kernels = ("aten", "onednn") if sc.cpu_kernel == "onednn" else ("aten",)
    k_before = {k: linear_gflops(shapes, rows, kernel=k) for k in kernels}
    # warm-up, untimed
    naive_generate(
        plain.model, sc.tokenizer, prompts[:2], SYSTEM_PROMPT, sc.ids["yes"], sc.ids["no"]
    )
    sc.score(prompts[:2], system=SYSTEM_PROMPT, cache=False, progress=False)
    plain.score(prompts[:2], system=SYSTEM_PROMPT, cache=False, progress=False)
    work.clear()
    p_naive, p_batch, t_naive, t_batch, t_plain = [], [], 0.0, 0.0, 0.0
    for i in range(0, len(prompts), a.chunk):  # alternate: both methods see the same machine load
        chunk = prompts[i : i + a.chunk]
        t = time.perf_counter()
        p_naive.append(
            naive_generate(
                plain.model, plain.tokenizer, chunk, SYSTEM_PROMPT, sc.ids["yes"], sc.ids["no"]
            )
        )
        t_naive += time.perf_counter() - t
        t = time.perf_counter()
        p_batch.append(
            sc.score(chunk, system=SYSTEM_PROMPT, cache=False, progress=False)["p_yes"].to_numpy()
        )
        t_batch += time.perf_counter() - t
        if (
            plain is not None
        ):  # the same scorer on PyTorch's default kernels: the kernel's share of the speed-up
            t = time.perf_counter()
            plain.score(chunk, system=SYSTEM_PROMPT, cache=False, progress=False)
            t_plain += time.perf_counter() - t
    k_after = {k: linear_gflops(shapes, rows, kernel=k) for k in kernels}
    kgf = {k: (k_before[k] + k_after[k]) / 2 for k in kernels}
    best = max(kgf, key=kgf.get)
    gflops = kgf[best]  # the bound: the faster fp32 kernel
    p_naive, p_batch = np.concatenate(p_naive), np.concatenate(p_batch)
    f_batch = flops(
        sc.model, work, tail_cut=getattr(sc.model, "_fairlib_tail_layer", None) is not None
    )
    f_naive = flops(sc.model, [(1, int(n), 0, 1) for n in ntok])
    t_bound = f_batch / (gflops * 1e9)
    n = len(prompts)
    for k in kernels:
        print(
            f"fp32 linear layers of the model's shapes, {rows} rows, kernel {k:>6}: {k_before[k]:.0f} GFLOP/s before, "
            f"{k_after[k]:.0f} after"
        )
    print(f"-> bound uses the faster kernel ({best}): {gflops:.0f} GFLOP/s")
    print(
        f"work: naive computes {f_naive / n / 1e9:.1f} GFLOP/prompt; batched computes {f_batch / n / 1e9:.1f} "
        f"GFLOP/prompt (shared prefix once per call, padding included)"
    )
    print(
        f"naive generate loop : {n / t_naive:6.2f} prompts/s ({t_naive / n:.3f} s/prompt; "
        f"{f_naive / t_naive / 1e9:.0f} GFLOP/s = {f_naive / t_naive / 1e9 / gflops:.0%} of linear throughput)"
    )
    print(
        f"batched (bs={sc.batch_size:>2})     : {n / t_batch:6.2f} prompts/s ({t_batch / n:.3f} s/prompt), CPU kernel "
        f"{sc.cpu_kernel}"
    )
    print(
        f"batched, aten kernel: {n / t_plain:6.2f} prompts/s ({t_plain / n:.3f} s/prompt): the {sc.cpu_kernel} kernel "
        "is "
        f"{t_plain / t_batch:.2f}x faster on the same batches"
    )
    print(
        f"compute bound       : {n / t_bound:6.2f} prompts/s ({t_bound / n:.3f} s/prompt) for the tokens the scorer "
        "computed"
    )
    r_naive, r_bound = t_naive / t_batch, t_batch / t_bound
    print(
        f"RATIO batched vs naive : {r_naive:.2f}x faster  (target >= 1.5x at identical precision {sc.precision})"
    )
    print(f"RATIO batched vs bound : {r_bound:.2f}x the bound (target <= 1.5x)")
    dp = float(np.max(np.abs(p_naive - p_batch)))
    ok = dp < 1e-4
    print(f"max |P(Yes) naive - batched| = {dp:.2e}  ({'OK' if ok else 'FAIL'}: must be < 1e-4)")
    print(f"load average at end {os.getloadavg()[0]:.1f}")

    sc._run = orig_run
    base = sc.model
    if not a.no_ablation and sc.cpu_kernel == "onednn":
        # the three pieces of the oneDNN path that compute less or fewer passes, each switched off on its own, timed
        # in the same alternating rounds on the same prompts (SiLU fusion: a second copy of the model packed without it)
        from fairlib.llm.cpu import _unpack_cpu_linears, pack_cpu_linears

        old = TransformersScorer.from_pretrained(
            a.model, precision="fp32", batch_size=a.batch_size, cache=False
        )
        _unpack_cpu_linears(old.model)
        pack_cpu_linears(old.model, fuse_silu=False)
        old.score(prompts[:2], system=SYSTEM_PROMPT, cache=False, progress=False)
        tail, chunk = "_fairlib_tail_layer", "_fairlib_chunked_attention"
        variants = {
            "default (all three)": (sc, ()),
            "attention unchunked": (sc, (chunk,)),
            "last layer whole": (sc, (tail,)),
            "SiLU in PyTorch (gate/up one product)": (old, ()),
            "all three off (the earlier path)": (old, (tail, chunk)),
        }
        times, ps = dict.fromkeys(variants, 0.0), {}
        names = list(variants)
        for rep in range(
            a.ablation_rounds
        ):  # the order rotates each round: no variant always runs first
            for name in names[rep % len(names) :] + names[: rep % len(names)]:
                s_, keys = variants[name]
                d = s_.model.__dict__
                saved = {k: d.pop(k) for k in keys if k in d}
                try:
                    t = time.perf_counter()
                    ps[name] = s_.score(prompts, system=SYSTEM_PROMPT, cache=False, progress=False)[
                        "p_yes"
                    ].to_numpy()
                    times[name] += time.perf_counter() - t
                finally:
                    d.update(saved)
        ref_t = times["default (all three)"]
        print(
            f"ablation ({a.ablation_rounds} rounds of the {n} prompts, order rotating; each row switches one piece "
            "off):"
        )
        for name, t in times.items():
            print(
                f"  {name:<38}: {t / a.ablation_rounds / n:.3f} s/prompt"
                + (
                    ""
                    if name.startswith("default")
                    else f"; the default is {t / ref_t:.3f}x faster; max |dP| vs the "
                    f"default {np.max(np.abs(ps[name] - ps['default (all three)'])):.1e}"
                )
            )
        del old
    if a.tier_cases:
        # the three tiers of a case in one call (as the mFARM notebooks score them) vs one call per tier: the header
        # and the shared body of a case run once. Same prompts, same precision, alternating, cache off.
        from fairlib.mfarm.instrument import prompt_table

        df = prompt_table(
            "ed_triage",
            tiers=("high", "medium", "low"),
            n_cases=a.tier_cases,
            seed=0,
            split="test",
            tokenizer=sc.tokenizer,
            instrument="paper",
        )
        allp = df["prompt"].tolist()
        per, one, tp, to, kp, ko = [], [], 0.0, 0.0, 0, 0
        for rep in range(2):
            sc._kv_memo.clear()
            n0 = sc.n_tokens
            t = time.perf_counter()
            per = np.concatenate(
                [
                    sc.score(
                        df[df.tier == tr]["prompt"].tolist(),
                        system=SYSTEM_PROMPT,
                        cache=False,
                        progress=False,
                    )["p_yes"].to_numpy()
                    for tr in ("high", "medium", "low")
                ]
            )
            tp += time.perf_counter() - t
            kp = sc.n_tokens - n0
            sc._kv_memo.clear()
            n0 = sc.n_tokens
            t = time.perf_counter()
            one = sc.score(allp, system=SYSTEM_PROMPT, cache=False, progress=False)[
                "p_yes"
            ].to_numpy()
            to += time.perf_counter() - t
            ko = sc.n_tokens - n0
        order = np.concatenate(
            [np.flatnonzero((df.tier == tr).to_numpy()) for tr in ("high", "medium", "low")]
        )
        full = sum(len(e) for e in sc.encode([sc.format(p, system=SYSTEM_PROMPT) for p in allp]))
        print(
            f"tiers of a case, {a.tier_cases} ED cases x 13 variants x 3 tiers = {len(allp)} prompts ({full:,} "
            "templated "
            f"tokens): one call per tier ran {kp:,} tokens in {tp / 2:.1f} s; all tiers in one call ran {ko:,} tokens "
            f"in {to / 2:.1f} s -> {tp / to:.2f}x faster, {kp / ko:.2f}x fewer tokens (mean of 2 alternating rounds); "
            f"max |dP| = {np.max(np.abs(one[order] - per)):.1e}"
        )
    if not a.no_int8:
        s8 = TransformersScorer.from_pretrained(
            a.model, precision="int8_dynamic", batch_size=a.batch_size, cache=False
        )
        s8.score(prompts[:2], system=SYSTEM_PROMPT, cache=False, progress=False)
        t8 = tf = 0.0
        p8 = []
        pf = []
        for i in range(0, n, a.chunk):  # alternate with fp32 again: same load for both
            chunk = prompts[i : i + a.chunk]
            t = time.perf_counter()
            p8.append(
                s8.score(chunk, system=SYSTEM_PROMPT, cache=False, progress=False)[
                    "p_yes"
                ].to_numpy()
            )
            t8 += time.perf_counter() - t
            t = time.perf_counter()
            pf.append(
                sc.score(chunk, system=SYSTEM_PROMPT, cache=False, progress=False)[
                    "p_yes"
                ].to_numpy()
            )
            tf += time.perf_counter() - t
        p8, pf = np.concatenate(p8), np.concatenate(pf)
        print(
            f"int8 dynamic (bs={s8.batch_size}) : {n / t8:6.2f} prompts/s ({t8 / n:.3f} s/prompt) = {tf / t8:.2f}x "
            "fp32 batched "
            f"in the same rounds; precision effect max |dP| vs fp32 = {np.max(np.abs(p8 - pf)):.4f}, "
            f"mean |dP| = {np.mean(np.abs(p8 - pf)):.4f} (a precision change, not a default)"
        )
        del s8
    if a.bf16:
        sb = TransformersScorer.from_pretrained(
            a.model, precision="bf16", batch_size=a.batch_size, cache=False
        )
        m = min(n, 8)
        sb.score(prompts[:2], system=SYSTEM_PROMPT, cache=False, progress=False)
        t = time.perf_counter()
        pb = sb.score(prompts[:m], system=SYSTEM_PROMPT, cache=False, progress=False)[
            "p_yes"
        ].to_numpy()
        tb = time.perf_counter() - t
        print(
            f"bf16 weights (bs={sb.batch_size}) : {m / tb:6.2f} prompts/s ({tb / m:.3f} s/prompt, {m} prompts); "
            f"precision effect max |dP| vs fp32 = {np.max(np.abs(pb - p_batch[:m])):.4f}"
        )
    del base
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
