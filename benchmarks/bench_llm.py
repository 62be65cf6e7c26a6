"""Throughput of fairlib's batched P(Yes) scorer vs a naive per-prompt `generate()` loop.

Same model (default: the bundled SmolLM2-135M-Instruct), same prompts (ED-triage prompts from
`fairlib.prompts`, medium-context tier: ~90 prompt tokens, ~130 with the chat template), same run,
same precision. The two methods alternate chunk by chunk, so a machine whose load changes during
the run slows both alike. Prints prompts/s for both, the speed-up ratio, and the largest
|P(Yes) difference| (must be < 1e-4; exit status 1 otherwise). Then, as a separate precision effect
(never a default), scores the same prompts with the weights in bf16 and reports its speed and its
max |dP| against fp32.

    python benchmarks/bench_llm.py [--n 48] [--batch-size 8] [--tier medium] [--model bundled] [--no-bf16]
"""
from __future__ import annotations
import argparse, os, sys, time
import numpy as np
import torch


def bench_prompts(n: int, tokenizer, tier: str = "medium") -> list[str]:
    "n ED-triage test prompts of one tier from the benchmark in use, as the paper notebooks score them."
    from fairlib.prompts import prompt_table
    df = prompt_table("ed_triage", tiers=(tier,), n_cases=max(1, -(-n // 13)), seed=0, split="test", tokenizer=tokenizer)
    return df["prompt"].tolist()[:n]


def naive_generate(model, tokenizer, prompts, system, yes_ids, no_ids):
    "One prompt at a time through generate(max_new_tokens=1); P(Yes) from the first-step raw logits."
    from fairlib.llm import yes_no_probability
    out = []
    for p in prompts:
        enc = tokenizer.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": p}],
                                            add_generation_prompt=True, return_tensors="pt", return_dict=True)
        with torch.inference_mode():
            g = model.generate(**enc, max_new_tokens=1, do_sample=False, output_logits=True,
                               return_dict_in_generate=True, pad_token_id=tokenizer.pad_token_id)
        out.append(yes_no_probability(g.logits[0], yes_ids, no_ids)[0][0])
    return np.array(out)


def main(argv=None):
    from fairlib.llm import TransformersScorer
    from fairlib.prompts import SYSTEM_PROMPT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=48, help="number of prompts")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--tier", default="medium", choices=["high", "medium", "low"])
    ap.add_argument("--chunk", type=int, default=16, help="prompts per alternation round")
    ap.add_argument("--model", default=None, help="model dir or id (default: llm_model setting, 'bundled')")
    ap.add_argument("--no-bf16", action="store_true", help="skip the bf16 precision-effect run")
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    t = time.perf_counter()
    sc = TransformersScorer.from_pretrained(a.model, precision="fp32", batch_size=a.batch_size)
    print(f"loaded {sc.model_label} ({sc.precision}) in {time.perf_counter() - t:.1f} s; threads={torch.get_num_threads()}")
    prompts = bench_prompts(a.n, sc.tokenizer, a.tier)
    ntok = [len(x) for x in sc.encode([sc.format(p, system=SYSTEM_PROMPT) for p in prompts])]
    print(f"{len(prompts)} prompts, templated length {np.mean(ntok):.0f} tokens (min {min(ntok)}, max {max(ntok)})")
    # warm-up, untimed
    naive_generate(sc.model, sc.tokenizer, prompts[:2], SYSTEM_PROMPT, sc.ids["yes"], sc.ids["no"])
    sc.score(prompts[:2], system=SYSTEM_PROMPT, cache=False, progress=False)

    p_naive, p_batch, t_naive, t_batch = [], [], 0.0, 0.0
    for i in range(0, len(prompts), a.chunk):        # alternate: both methods see the same machine load
        chunk = prompts[i:i + a.chunk]
        t = time.perf_counter(); p_naive.append(naive_generate(sc.model, sc.tokenizer, chunk, SYSTEM_PROMPT, sc.ids["yes"], sc.ids["no"]))
        t_naive += time.perf_counter() - t
        t = time.perf_counter(); p_batch.append(sc.score(chunk, system=SYSTEM_PROMPT, cache=False, progress=False)["p_yes"].to_numpy())
        t_batch += time.perf_counter() - t
    p_naive, p_batch = np.concatenate(p_naive), np.concatenate(p_batch)
    dp = float(np.max(np.abs(p_naive - p_batch)))
    ratio = t_naive / t_batch
    print(f"naive generate loop : {len(prompts) / t_naive:6.2f} prompts/s ({t_naive / len(prompts):.3f} s/prompt)")
    print(f"batched (bs={sc.batch_size:>2})     : {len(prompts) / t_batch:6.2f} prompts/s ({t_batch / len(prompts):.3f} s/prompt)")
    print(f"speed-up ratio      : {ratio:.2f}x   (target >= 1.5x at identical precision {sc.precision}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"max |P(Yes) naive - batched| = {dp:.2e}  ({'OK' if dp < 1e-4 else 'FAIL'}: must be < 1e-4)")
    ok = dp < 1e-4
    if not a.no_bf16:
        del sc.model
        sb = TransformersScorer.from_pretrained(a.model, precision="bf16", batch_size=a.batch_size)
        sb.score(prompts[:2], system=SYSTEM_PROMPT, cache=False, progress=False)
        t = time.perf_counter(); p_bf = sb.score(prompts, system=SYSTEM_PROMPT, cache=False, progress=False)["p_yes"].to_numpy()
        t_bf = time.perf_counter() - t
        print(f"bf16 weights (bs={sb.batch_size}) : {len(prompts) / t_bf:6.2f} prompts/s ({t_bf / len(prompts):.3f} s/prompt); "
              f"precision effect max |dP| vs fp32 = {np.max(np.abs(p_bf - p_batch)):.4f}, "
              f"mean |dP| = {np.mean(np.abs(p_bf - p_batch)):.4f} (a precision effect, not a default)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
