"""The GPU paths in one short run, for a machine with a CUDA GPU (nothing here is needed to build or test fairlib).

Same prompts (mFARM ED-triage test prompts, the authors' instrument), same model, one run:

1. **precisions**: bitsandbytes 16-bit (bfloat16), 8-bit (int8, float16 compute) and 4-bit (FP4, the authors'; NF4
   as the option) loads of a local Hugging Face model; per precision the batched scorer's P(Yes) against the fp32
   CPU reference (max and mean |dP(Yes)|), the yes+no mass, prompts/s and peak GPU memory;
2. **batching**: the same scorer one prompt at a time vs batched, at the first precision (speed ratio, max |dP|);
3. **LoRA**: a short peft LoRA run on the GPU (`fairlib.llm.finetune.finetune_lora`, training split only), then its
   adapter scored as an unmerged LoRA branch on the 4-bit base on the GPU against the same adapter merged into
   the fp32 weights on the CPU.

    # the bundled SmolLM2 (its GGUF dequantised to safetensors):
    python benchmarks/bench_gpu.py --out gpu_results
    python benchmarks/bench_gpu.py --model /path/to/hf-model --n 130 --out gpu_results

Writes bench_gpu.json and bench_gpu.md to --out. Without a CUDA GPU it stops with exit status 2 and says why;
`--device cpu --precisions fp32 bf16` runs the same steps on the CPU (that is how the test suite checks the script).
"""

from __future__ import annotations
import argparse, json, sys, time
from pathlib import Path


def model_dir(name: str) -> str:
    """A Hugging Face model directory: `bundled` = the bundled GGUF dequantised once to float32 safetensors (bnb cannot
    read GGUF)."""
    if name != "bundled":
        return name
    from fairlib.llm.loading import bundled_model_path, converted_gguf
    from fairlib.llm.cache import file_sha256

    d, g = bundled_model_path()
    return str(converted_gguf(d, g, file_sha256(Path(d) / g)))


def prompts_for(n: int, tier: str) -> list[str]:
    from fairlib.mfarm.instrument import prompt_table

    df = prompt_table(
        "ed_triage",
        tiers=(tier,),
        n_cases=max(1, -(-n // 13)),
        seed=0,
        split="test",
        instrument="paper",
    )
    return df["prompt"].tolist()[:n]


def _peak_reset(device):
    import torch

    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def _peak_gib(device):
    import torch

    if device != "cuda":
        return None
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2**30


def _release():
    "Return the memory of models the caller has just deleted (so the next precision's peak is its own)."
    import gc, torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _timed_score(sc, prompts, system):
    import torch

    t0 = time.perf_counter()
    s = sc.score(prompts, system=system, cache=False, progress=False)
    if sc.device.type == "cuda":
        torch.cuda.synchronize()
    return s, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--model", default="bundled", help="a local Hugging Face model directory, or 'bundled'"
    )
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--precisions", nargs="+", default=["bnb16", "bnb8", "bnb4", "bnb4_nf4"])
    ap.add_argument(
        "--n", type=int, default=130, help="prompts scored per precision (13 variants per case)"
    )
    ap.add_argument("--tier", default="high")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--naive-n", type=int, default=26, help="prompts scored one at a time (step 2)")
    ap.add_argument(
        "--lora-cases",
        type=int,
        default=16,
        help="training cases for the LoRA run (2 variants each); 0 skips it",
    )
    ap.add_argument("--out", default="bench_gpu_results")
    a = ap.parse_args(argv)
    import torch
    from fairlib.llm.transformers import TransformersScorer
    from fairlib.llm.loading import check_precision, load_model
    from fairlib.mfarm.instrument import system_prompt

    if a.device == "cuda" and not torch.cuda.is_available():
        print(
            "bench_gpu: no CUDA GPU here (torch.cuda.is_available() is False); run it on a GPU machine, or pass "
            "--device cpu --precisions fp32 bf16 to run the same steps on the CPU",
            file=sys.stderr,
        )
        return 2
    precisions = [check_precision(p, "bench_gpu") for p in a.precisions]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(
        torch=torch.__version__,
        device=torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu",
    )
    try:
        import bitsandbytes

        env["bitsandbytes"] = bitsandbytes.__version__
    except ImportError:
        env["bitsandbytes"] = None
    path, system = model_dir(a.model), system_prompt("paper")
    prompts = prompts_for(a.n, a.tier)
    print(f"{len(prompts)} ED {a.tier} prompts; model {path}; {env}")
    res = dict(
        env=env,
        model=path,
        n_prompts=len(prompts),
        tier=a.tier,
        batch_size=a.batch_size,
        precisions=[],
    )

    ref = TransformersScorer.from_pretrained(path, precision="fp32", device="cpu", batch_size=8)
    p_ref, t_ref = _timed_score(ref, prompts, system)
    res["reference"] = dict(
        precision="fp32", device="cpu", seconds=t_ref, prompts_per_s=len(prompts) / t_ref
    )
    del ref
    _release()

    for i, prec in enumerate(precisions):
        _peak_reset(a.device)
        t0 = time.perf_counter()
        sc = TransformersScorer.from_pretrained(
            path, precision=prec, device=a.device, batch_size=a.batch_size
        )
        load_s = time.perf_counter() - t0
        sc.score(
            prompts[:8], system=system, cache=False, progress=False
        )  # warm-up (kernels, allocator)
        s, t = _timed_score(sc, prompts, system)
        dp = (s.p_yes - p_ref.p_yes).abs()
        row = dict(
            precision=prec,
            device=a.device,
            load_s=load_s,
            seconds=t,
            prompts_per_s=len(prompts) / t,
            max_abs_dp=float(dp.max()),
            mean_abs_dp=float(dp.mean()),
            mean_yes_no_mass=float(s.yes_no_mass.mean()),
            peak_gib=_peak_gib(a.device),
        )
        if i == 0 and a.naive_n:  # step 2 at the first precision
            few = prompts[: a.naive_n]
            t0 = time.perf_counter()
            one = [
                sc.score([p], system=system, cache=False, progress=False).p_yes.iloc[0] for p in few
            ]
            if a.device == "cuda":
                torch.cuda.synchronize()
            t_one = time.perf_counter() - t0
            batched = s.p_yes.iloc[: len(few)].to_numpy()
            row.update(
                one_at_a_time_prompts_per_s=len(few) / t_one,
                batched_speedup=(t_one / len(few))
                / (t / len(prompts)),  # seconds per prompt, one vs batched
                one_vs_batched_max_abs_dp=float(max(abs(x - y) for x, y in zip(one, batched))),
            )
        res["precisions"].append(row)
        print({k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()})
        del sc
        _release()

    if a.lora_cases:
        from fairlib.llm.finetune import LoraSettings, finetune_lora
        from fairlib.mfarm.experiments import training_examples

        ex = training_examples(
            "ed_triage", tier="low", n_cases=a.lora_cases, variants_per_case=2, split="train"
        )
        (m, tok), _ = load_model(path, precision="fp32", device=a.device)
        t0 = time.perf_counter()
        ft = finetune_lora(
            m,
            tok,
            ex.prompt.tolist(),
            ex.label.tolist(),
            save_dir=out / "adapter",
            system=system,
            settings=LoraSettings(learning_rate=1e-3, batch_size=8),
            progress=False,
        )
        train_s = time.perf_counter() - t0
        del m
        _release()
        few = prompts[:32]
        merged = TransformersScorer.from_pretrained(
            path, precision="fp32", device="cpu", adapter=ft.adapter_dir
        )
        p_m = merged.score(few, system=system, cache=False, progress=False).p_yes
        del merged
        _release()
        base4 = "bnb4" if a.device == "cuda" else precisions[0]
        branch = TransformersScorer.from_pretrained(
            path, precision=base4, device=a.device, adapter=ft.adapter_dir, merge_adapter=False
        )
        p_b = branch.score(few, system=system, cache=False, progress=False).p_yes
        del branch
        _release()
        res["lora"] = dict(
            n_examples=ft.n_examples,
            n_steps=ft.n_steps,
            train_s=train_s,
            first_loss=ft.first_loss,
            last_loss=ft.last_loss,
            branch_precision=base4,
            branch_device=a.device,
            branch_vs_merged_fp32_max_abs_dp=float((p_b - p_m).abs().max()),
            mean_p_yes_shift_vs_base=float((p_m - p_ref.p_yes.iloc[: len(few)]).mean()),
        )
        print(res["lora"])

    (out / "bench_gpu.json").write_text(json.dumps(res, indent=1))
    lines = [
        f"# bench_gpu: {env['device']}, torch {env['torch']}, bitsandbytes {env['bitsandbytes']}",
        f"{len(prompts)} ED-{a.tier} prompts (authors' instrument); reference fp32 on the CPU "
        f"({res['reference']['prompts_per_s']:.1f} prompts/s)",
        "",
        "| precision | prompts/s | max abs dP | mean abs dP | yes+no mass | peak GiB |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in res["precisions"]:
        peak = "" if r["peak_gib"] is None else f"{r['peak_gib']:.2f}"
        lines.append(
            f"| {r['precision']} | {r['prompts_per_s']:.1f} | {r['max_abs_dp']:.4f} | {r['mean_abs_dp']:.4f} | "
            f"{r['mean_yes_no_mass']:.3f} | {peak} |"
        )
    first = res["precisions"][0] if res["precisions"] else {}
    if "batched_speedup" in first:
        lines += [
            "",
            f"batched vs one prompt at a time ({first['precision']}): {first['batched_speedup']:.1f}x, "
            f"max |dP| {first['one_vs_batched_max_abs_dp']:.1e}",
        ]
    if "lora" in res:
        L = res["lora"]
        lines += [
            "",
            f"LoRA: {L['n_examples']} examples, {L['n_steps']} steps in {L['train_s']:.1f} s, loss "
            f"{L['first_loss']:.3f} -> "
            f"{L['last_loss']:.3f}; adapter on the {L['branch_precision']} base (unmerged) vs merged fp32 CPU: "
            f"max |dP| {L['branch_vs_merged_fp32_max_abs_dp']:.4f}",
        ]
    (out / "bench_gpu.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
