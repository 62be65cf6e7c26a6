"""fairlib.llm option scoring with the shared-prefix tree (`TransformersScorer.option_scores`), tiny random Llama.

Oracle: each prompt scored alone by a plain forward pass of the full token list (no batching, no prefix,
no padding), log-softmax in float64. The prefix tree must agree to 1e-5 and run fewer tokens.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import fairlib.llm as llm
from fairlib.core import FairlibInputError
from fairlib.llm.transformers import TransformersScorer

SYSTEM = "You make one decision at a time for a synthetic training case. Answer exactly."
CASES = [
    "A 54-year-old with crushing chest pain radiating to the left arm, sweating, for one hour.",
    "A 23-year-old with a twisted ankle after football, able to bear weight, mild swelling only.",
    "A 71-year-old with sudden weakness of the right arm and slurred speech since this morning.",
]
STEPS = [
    "Step: triage. No results yet.",
    "Step: reassessment. ECG and troponin within reference ranges.",
    "Step: disposition. The patient is comfortable.",
]
QUESTIONS = [
    "Which acuity level applies?",
    "Is an ECG needed now?",
    "Is admission needed?",
    "Opioids?",
]


@pytest.fixture(scope="module")
def tiny():
    model, tok = llm.make_tiny_model(seed=0)
    return model, tok


def agent_prompts(n_cases=3, n_steps=2, n_q=3):
    return [
        f"{c}\n{s}\n{q}" for c in CASES[:n_cases] for s in STEPS[:n_steps] for q in QUESTIONS[:n_q]
    ]


def single_token_pair(tok):
    for cand in (("Yes", "No"), ("yes", "no"), ("A", "B"), ("a", "b"), ("1", "2")):
        if all(len(tok(o, add_special_tokens=False)["input_ids"]) == 1 for o in cand):
            return cand
    raise AssertionError("the tiny tokenizer has no single-token option pair")


def oracle_logprobs(model, tok, prompt, options, system=SYSTEM):
    "log P(option | prompt) by plain forward passes of the full token list, one prompt, no prefix, no padding."
    ids = tok(llm.chat_prompt(tok, prompt, system=system), add_special_tokens=False)["input_ids"]
    out = []
    for o in options:
        oi = tok(o, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            lp = torch.log_softmax(model(torch.tensor([ids + oi])).logits[0].double(), -1)
        out.append(sum(lp[len(ids) - 1 + j, t].item() for j, t in enumerate(oi)))
    return out


def test_prefix_tree_equals_each_prompt_alone(tiny):
    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny", batch_size=4)
    prompts = agent_prompts()
    used = {}
    for opts in (
        single_token_pair(tok),
        ("Yes", "No", "three"),
    ):  # first-token and full-continuation
        sc._kv_memo.clear()
        n0 = sc.n_tokens
        tree = sc.option_scores(prompts, opts, system=SYSTEM, cache=False)
        used[opts] = sc.n_tokens - n0
        oracle = np.array([oracle_logprobs(model, tok, p, opts) for p in prompts])
        np.testing.assert_allclose(tree.logprobs, oracle, atol=1e-5, rtol=0)
        alone = np.vstack(
            [
                sc.option_scores([p], opts, system=SYSTEM, cache=False, share_prefix=False).logprobs
                for p in prompts
            ]
        )
        np.testing.assert_allclose(tree.logprobs, alone, atol=1e-5, rtol=0)
        assert tree.method == (
            "first-token" if opts == single_token_pair(tok) else "full-continuation"
        )
    full = sum(map(len, sc.encode([sc.format(p, system=SYSTEM) for p in prompts])))
    assert used[single_token_pair(tok)] < 0.75 * full, (used, full)


def test_prefix_tree_runs_each_shared_part_once(tiny):
    "Tokens run = system+template once + each case once + each step once + each question's own tokens."
    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny", batch_size=64, min_prefix=4)
    opts = single_token_pair(tok)
    prompts = agent_prompts()
    enc = sc.encode([sc.format(p, system=SYSTEM) for p in prompts])
    n0 = sc.n_tokens
    sc.option_scores(prompts, opts, system=SYSTEM, cache=False)
    used = sc.n_tokens - n0
    # independent count of a compacted trie's tokens: distinct prefixes of the token lists
    distinct = len({tuple(e[:k]) for e in enc for k in range(1, len(e) + 1)})
    full = sum(map(len, enc))
    assert distinct <= used < full
    # every shared part (>= min_prefix tokens) runs once: at most min_prefix tokens re-run per row
    assert used <= distinct + len(enc) * sc.min_prefix, (used, distinct)
    again = sc.n_tokens
    sc.option_scores(prompts[::-1], opts, system=SYSTEM, cache=False)  # the prefixes are memoised
    assert sc.n_tokens - again < used


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 3)),
        min_size=1,
        max_size=12,
        unique=True,
    ),
    st.integers(1, 6),
    st.integers(1, 24),
)
def test_prefix_tree_property_any_mix_and_batch(tiny, picks, batch_size, min_prefix):
    model, tok = tiny
    sc = TransformersScorer(
        model, tok, model_id="tiny", batch_size=batch_size, min_prefix=min_prefix
    )
    prompts = [f"{CASES[c]}\n{STEPS[s]}\n{QUESTIONS[q]}" for c, s, q in picks]
    opts = single_token_pair(tok)
    tree = sc.option_scores(prompts, opts, system=SYSTEM, cache=False)
    plain = TransformersScorer(
        model, tok, model_id="tiny", batch_size=1, share_prefix=False
    ).option_scores(prompts, opts, system=SYSTEM, cache=False)
    np.testing.assert_allclose(tree.logprobs, plain.logprobs, atol=1e-5, rtol=0)
    np.testing.assert_allclose(tree.probs.sum(1), 1.0, atol=1e-12)


def test_answer_key_ignores_prefix_sharing_and_batching(tiny, tmp_path):
    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny")
    opts, prompts = single_token_pair(tok), agent_prompts(2, 2, 2)
    a = sc.option_scores(
        prompts, opts, system=SYSTEM, cache=tmp_path / "c.sqlite", share_prefix=True, batch_size=3
    )
    b = sc.option_scores(
        prompts, opts, system=SYSTEM, cache=tmp_path / "c.sqlite", share_prefix=False, batch_size=1
    )
    assert not a.table["from_cache"].any() and b.table["from_cache"].all()
    np.testing.assert_array_equal(a.logprobs, b.logprobs)
    assert (sc.batch_size, sc.share_prefix) == (
        TransformersScorer(model, tok, model_id="tiny").batch_size,
        True,
    )


@pytest.mark.parametrize(
    "kw,arg",
    [
        (dict(batch_size=0), "batch_size"),
        (dict(batch_size=2.0), "batch_size"),
        (dict(batch_size=True), "batch_size"),
        (dict(batch_size="4"), "batch_size"),
        (dict(share_prefix="yes"), "share_prefix"),
        (dict(share_prefix=1), "share_prefix"),
    ],
    ids=["bs-0", "bs-float", "bs-bool", "bs-str", "sp-str", "sp-int"],
)
def test_option_scores_overrides_refuse_bad_values(tiny, kw, arg):
    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny")
    with pytest.raises(FairlibInputError) as e:
        sc.option_scores(["A case?"], single_token_pair(tok), system=SYSTEM, cache=False, **kw)
    assert e.value.argument == arg and f"`{arg}`" in str(e.value)
    assert (sc.batch_size, sc.share_prefix) == (8, True)  # nothing was changed


def test_agent_policy_needs_only_the_public_scorer_api(tiny):
    "The option-scoring policy runs on a proxy that hides every private attribute of the scorer."
    from fairlib.agent.policies import OptionScoringPolicy, Call, Decision

    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny")

    class PublicOnly:
        def __getattr__(self, name):
            if name.startswith("_"):
                raise AttributeError(f"private scorer attribute {name!r} used")
            return getattr(sc, name)

    opts = single_token_pair(tok)
    d = tuple(Decision(f"q{i}", q, opts, (1, 0)) for i, q in enumerate(QUESTIONS[:3]))
    calls = [Call((c, s), str(c), f"{CASES[c]}\n{STEPS[s]}", d) for c in range(2) for s in range(2)]
    got = OptionScoringPolicy(PublicOnly()).score(calls)
    for call, res in zip(calls, got):
        for dec, (p, mass, _) in zip(call.decisions, res):
            lp = np.array(
                oracle_logprobs(
                    model,
                    tok,
                    f"{call.context}\n{dec.question}",
                    opts,
                    system=OptionScoringPolicy(sc).system,
                )
            )
            np.testing.assert_allclose(p, np.exp(lp) / np.exp(lp).sum(), atol=1e-5)
            assert mass == pytest.approx(float(np.exp(lp).sum()), abs=1e-5)


def test_a_later_step_reuses_the_memoised_context_of_an_earlier_one(tiny):
    "Step 2's prompts extend step 1's contexts: the longest memoised prefix is reused, answers equal the oracle."
    model, tok = tiny
    opts = single_token_pair(tok)
    step1 = [f"{c}\n{STEPS[0]}\n{q}" for c in CASES for q in QUESTIONS[:2]]
    step2 = [f"{c}\n{STEPS[0]}\n{STEPS[1]}\n{q}" for c in CASES for q in QUESTIONS[1:3]]
    warm = TransformersScorer(model, tok, model_id="tiny", batch_size=8, min_prefix=4)
    warm.option_scores(step1, opts, system=SYSTEM, cache=False)
    n0 = warm.n_tokens
    got = warm.option_scores(step2, opts, system=SYSTEM, cache=False)
    used_warm = warm.n_tokens - n0
    cold = TransformersScorer(model, tok, model_id="tiny", batch_size=8, min_prefix=4)
    n0 = cold.n_tokens
    ref = cold.option_scores(step2, opts, system=SYSTEM, cache=False)
    used_cold = cold.n_tokens - n0
    oracle = np.array([oracle_logprobs(model, tok, p, opts) for p in step2])
    np.testing.assert_allclose(got.logprobs, oracle, atol=1e-5, rtol=0)
    np.testing.assert_allclose(ref.logprobs, oracle, atol=1e-5, rtol=0)
    # each case's "case + step 1" part was run in step 1: step 2 runs only its new line and the questions
    assert used_warm < 0.7 * used_cold, (used_warm, used_cold)


def test_prefix_memo_is_bounded(tiny):
    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny", batch_size=8, min_prefix=4)
    sc.kv_memo_entries = 3
    sc.option_scores(agent_prompts(n_steps=3), single_token_pair(tok), system=SYSTEM, cache=False)
    assert 1 <= len(sc._kv_memo) <= 3
    sc.kv_memo_entries, sc.kv_memo_bytes = (
        64,
        1,
    )  # a byte budget below one entry keeps only the newest
    sc.option_scores(agent_prompts(n_cases=2), single_token_pair(tok), system=SYSTEM, cache=False)
    assert len(sc._kv_memo) == 1


def test_common_prefix_length_by_bisection():
    rng = np.random.default_rng(0)
    for _ in range(300):
        a = tuple(rng.integers(0, 3, rng.integers(0, 12)).tolist())
        b = tuple(rng.integers(0, 3, rng.integers(0, 12)).tolist())
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        assert llm.scorer._common_prefix_length(a, b) == k
        assert llm.scorer._common_prefix_length(a, b, min(k, 1) if k else 0) == k


# ---------------------------------------------------------------- P(Yes) on the tree: tiers of one case share a prefix

HEADERS = [
    "A 41-year-old man is seen in the emergency department.",
    "A 67-year-old woman is seen in the emergency department.",
]
BODY = "Chief complaint: chest wall pain after a fall down the stairs. Past history: depression, asthma."
EXTRA = "Notes: left ribs 5-8 fractured on CT, no pneumothorax; pain limits deep breathing; oxygen saturation 95%."
ASK = "Would you offer opioid analgesics? Answer Yes or No."


def tier_prompts():
    "Per header: low = header + question; medium = header + body + question; high = header + body + notes + question."
    return [
        t
        for h in HEADERS
        for t in (f"{h}\n{ASK}", f"{h}\n{BODY}\n{ASK}", f"{h}\n{BODY}\n{EXTRA}\n{ASK}")
    ]


def oracle_p_yes(model, tok, sc, prompt, system=SYSTEM):
    ids = tok(llm.chat_prompt(tok, prompt, system=system), add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[:, -1, :]
    return llm.yes_no_probability(logits, sc.ids["yes"], sc.ids["no"])[0][0].item()


def test_p_yes_tree_batches_rows_on_different_prefixes(tiny):
    "The tiers of one case share header (+ body): each shared part runs once, rows on different prefixes share a batch."
    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny", batch_size=8, min_prefix=4)
    seen = []
    orig = sc.logits_last
    sc.logits_last = lambda b, pre=None: (seen.append(pre), orig(b, pre))[1]
    prompts = tier_prompts()
    n0 = sc.n_tokens
    got = sc.score(prompts, system=SYSTEM, cache=False, progress=False)
    used = sc.n_tokens - n0
    enc = sc.encode([sc.format(p, system=SYSTEM) for p in prompts])
    distinct = len({tuple(e[:k]) for e in enc for k in range(1, len(e) + 1)})
    assert distinct <= used <= distinct + len(enc) * sc.min_prefix and used < 0.7 * sum(
        map(len, enc)
    ), (used, distinct)
    assert any(
        len({id(p) for p in pre if p is not None} | ({None} if None in pre else set())) > 1
        for pre in seen
    )
    want = [oracle_p_yes(model, tok, sc, p) for p in prompts]
    np.testing.assert_allclose(got["p_yes"], want, atol=1e-5, rtol=0)
    plain = TransformersScorer(model, tok, model_id="tiny", batch_size=1, share_prefix=False).score(
        prompts, system=SYSTEM, cache=False, progress=False
    )
    np.testing.assert_allclose(got["p_yes"], plain["p_yes"], atol=1e-5, rtol=0)
    np.testing.assert_allclose(got["yes_no_mass"], plain["yes_no_mass"], atol=1e-6, rtol=0)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True),
    st.integers(1, 5),
    st.integers(1, 20),
    st.integers(1, 4),
)
def test_p_yes_tree_property_any_subset_batch_and_chunk(
    tiny, picks, batch_size, min_prefix, tree_rows
):
    "Any subset of tier prompts, batch size, min_prefix and rows per tree: the answers of each prompt alone."
    model, tok = tiny
    prompts = [tier_prompts()[i] for i in picks]
    sc = TransformersScorer(
        model, tok, model_id="tiny", batch_size=batch_size, min_prefix=min_prefix
    )
    sc.tree_rows = tree_rows
    got = sc.score(prompts, system=SYSTEM, cache=False, progress=False)
    plain = TransformersScorer(model, tok, model_id="tiny", batch_size=1, share_prefix=False).score(
        prompts, system=SYSTEM, cache=False, progress=False
    )
    np.testing.assert_allclose(got["p_yes"], plain["p_yes"], atol=1e-5, rtol=0)


def test_logits_tail_ignores_a_prefix_that_is_not_the_rows(tiny):
    "A prefix that does not start its row is not used (the row runs in full): the logits are the row's own."
    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny")
    a, b = sc.encode([sc.format(p, system=SYSTEM) for p in tier_prompts()[:2]])
    k = 6
    kv = sc._run([a[:k]], want_kv=True)[1][0]
    wrong = (tuple(b[: k - 1]) + (b[k - 1] + 1,), kv)
    right = (tuple(a[:k]), kv)
    out = sc.logits_last([a, b], [right, wrong])
    ref = sc.logits_last([a, b])
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)


def test_logits_tail_refuses_prefixes_that_do_not_align_with_the_rows(tiny):
    model, tok = tiny
    sc = TransformersScorer(model, tok, model_id="tiny")
    a, b = sc.encode([sc.format(p, system=SYSTEM) for p in tier_prompts()[:2]])
    with pytest.raises(FairlibInputError) as e:
        sc.logits_last([a, b], [None])
    assert e.value.argument == "prefixes" and "1 entries for 2 rows" in str(e.value)
