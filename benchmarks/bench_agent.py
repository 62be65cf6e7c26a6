"""Speed of the FairMedAgent option-scoring policy, in ONE run: batched shared-prefix scoring vs one option at a time.

Same model (default: the bundled SmolLM2-135M-Instruct; `--tiny` for a random tiny Llama that needs no
weights), same precision (fp32), same calls (the triage, ordering and reassessment rounds of the
six-stage loop for `--vignettes` vignettes x `--conditions` conditions), same run:

1. **one option at a time**: for every decision and every one of its options, a separate full forward
   pass of the formatted prompt, reading that option's next-token probability (the naive way of scoring
   candidate answers one by one);
2. **batched, no prefix sharing**: `OptionScoringPolicy(share_prefix=False)` — every row of a call in one
   batch, all options from one forward pass;
3. **batched, shared prefix** (the default): through the public
   `fairlib.llm.TransformersScorer.option_scores`, whose prefix tree runs each call's context once and
   only each decision's question per row.

The three alternate call by call so load changes on a shared machine hit them alike. A fourth row,
**shared prefix, whole round**, scores all calls in one `score(calls)` as the agent loop does (the
tree then also runs the system prompt and each vignette's narrative once for all its calls), once
before and once after the call-by-call loop (mean of the two). Reports
seconds, model calls per second, decisions per second, tokens run, the ratios and the largest
absolute difference of option probabilities between methods; exit status 1 if it is >= 1e-4 (same
precision, same answers).

    python benchmarks/bench_agent.py [--tiny] [--vignettes 2] [--conditions 2] [--threads 2]
"""

from __future__ import annotations
import argparse, sys, time
import numpy as np
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="random tiny Llama (no weights) instead of the bundled model",
    )
    ap.add_argument("--vignettes", type=int, default=2)
    ap.add_argument("--conditions", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    from fairlib.llm.transformers import TransformersScorer
    from fairlib.llm.loading import make_tiny_model
    from fairlib.agent.policies import OptionScoringPolicy
    from fairlib.agent.vignettes import load_vignettes
    from fairlib.agent.conditions import get_conditions
    from fairlib.agent.loop import step_decisions, render_context
    from fairlib.agent.policies import Call

    if a.tiny:
        m, t = make_tiny_model(seed=0)
        # the tiny tokenizer lacks single-token digits / letters: relabel options with its single-token words
        sc = TransformersScorer(m, t, model_id="tiny")
    else:
        sc = TransformersScorer.from_pretrained("bundled")
    V = load_vignettes()
    vs = list(V)[: a.vignettes]
    conds = list(get_conditions())[: a.conditions]
    state = {
        "triage": {},
        "ordering": {"esi": 2, "urgency": 67},
        "reassess": {
            "esi": 2,
            "urgency": 67,
            "orders": ["CBC"],
            "results": {"CBC": "within reference ranges"},
        },
    }
    calls = []
    for v in vs:
        for c in conds:
            for step, st in state.items():
                st = dict(st)
                if "orders" in st:
                    st["orders"] = [i for i in st["orders"] if i in V[v].fixture]
                    st["results"] = V[v].results(st["orders"])
                ctx = render_context(V[v], get_conditions([c])[c].render(), st, step)
                calls.append(Call((v, c, 0, step), v, ctx, step_decisions(step, V[v])))
    if a.tiny:  # make every option a single token of the tiny vocabulary
        from dataclasses import replace

        words = [
            w
            for w in ("Yes", "No", "yes", "no", "A", "B", "C", "D", "E", "The", "a")
            if len(t(w, add_special_tokens=False)["input_ids"]) == 1
        ]
        calls = [
            replace(
                c,
                decisions=tuple(
                    replace(d, options=tuple(words[:2]), values=(1, 0)) for d in c.decisions
                ),
            )
            for c in calls
        ]
    shared = OptionScoringPolicy(sc, share_prefix=True)
    plain = OptionScoringPolicy(sc, share_prefix=False)
    T = {
        "one_option_at_a_time": 0.0,
        "batched_no_prefix": 0.0,
        "batched_shared_prefix": 0.0,
        "shared_prefix_whole_round": 0.0,
    }
    tokens = {k: 0 for k in T}
    P = {k: [] for k in T}

    def whole_round():
        "All calls in one score(): a fresh answer cache and a fresh scorer on the same weights (nothing memoised)."
        rnd = OptionScoringPolicy(
            TransformersScorer(
                sc.model, sc.tokenizer, model_id=sc.model_id, precision=sc.precision
            ),
            share_prefix=True,
        )
        t0 = time.perf_counter()
        r = rnd.score(calls)
        T["shared_prefix_whole_round"] += (time.perf_counter() - t0) / 2
        tokens["shared_prefix_whole_round"] = rnd.n_tokens
        return r

    whole_round()  # once before and once after the call-by-call loop
    for call in calls:
        t0 = time.perf_counter()
        r = shared.score([call])[0]
        T["batched_shared_prefix"] += time.perf_counter() - t0
        P["batched_shared_prefix"] += [x[0] for x in r]
        t0 = time.perf_counter()
        r = plain.score([call])[0]
        T["batched_no_prefix"] += time.perf_counter() - t0
        P["batched_no_prefix"] += [x[0] for x in r]
        t0 = time.perf_counter()
        for d in call.decisions:
            text = sc.format(f"{call.context}\n{d.question}", system=shared.system)
            enc = torch.as_tensor([sc.encode([text])[0]])
            ids = shared.option_ids(d.options)
            q = []
            for oid in ids:  # one option at a time: one forward per option
                with torch.inference_mode():
                    lg = sc.model(input_ids=enc, logits_to_keep=1).logits[0, -1].double()
                q.append(float(torch.softmax(lg, -1)[oid]))
                tokens["one_option_at_a_time"] += enc.shape[1]
            q = np.array(q)
            P["one_option_at_a_time"].append(q / q.sum())
        T["one_option_at_a_time"] += time.perf_counter() - t0
    tokens["batched_shared_prefix"], tokens["batched_no_prefix"] = shared.n_tokens, plain.n_tokens
    r = whole_round()  # the second of the two whole-round runs (mean time of both)
    P["shared_prefix_whole_round"] = [x[0] for res in r for x in res]
    n_dec = sum(len(c.decisions) for c in calls)
    print(
        f"model: {'tiny random Llama' if a.tiny else sc.model_label} ({sc.precision}); threads {a.threads}; "
        f"{len(calls)} model calls, {n_dec} decisions"
    )
    print(
        f"{'method':26s} {'seconds':>9s} {'calls/s':>9s} {'decisions/s':>12s} {'tokens run':>11s}"
    )
    for k in T:
        print(f"{k:26s} {T[k]:9.2f} {len(calls) / T[k]:9.2f} {n_dec / T[k]:12.1f} {tokens[k]:11d}")
    print(
        "ratio one-option-at-a-time / batched shared prefix: "
        f"{T['one_option_at_a_time'] / T['batched_shared_prefix']:.1f}x"
    )
    print(
        "ratio batched no prefix / batched shared prefix:    "
        f"{T['batched_no_prefix'] / T['batched_shared_prefix']:.1f}x"
    )
    print(
        "ratio one-option-at-a-time / shared, whole round:  "
        f"{T['one_option_at_a_time'] / T['shared_prefix_whole_round']:.1f}x"
    )
    ref = np.concatenate(P["batched_shared_prefix"])
    diffs = {
        k: float(np.max(np.abs(np.concatenate(P[k]) - ref)))
        for k in T
        if k != "batched_shared_prefix"
    }
    for k, v in diffs.items():
        print(f"max |dp| {k} vs batched_shared_prefix: {v:.2e}")
    worst = max(diffs.values())
    print(f"max |dp| between methods: {worst:.2e}")
    return 1 if worst >= 1e-4 else 0


if __name__ == "__main__":
    sys.exit(main())
