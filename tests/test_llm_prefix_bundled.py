"""The shared-prefix tree of `TransformersScorer.option_scores` on the bundled SmolLM2-135M-Instruct (GGUF).

A few agent-like prompts only (slow on CPU): the tree's option log-probabilities equal plain forward
passes of each full prompt alone (no batching, no prefix, no padding) to 1e-5, and the agent policy's
probabilities equal those renormalised.
"""

import numpy as np
import pytest
import torch

import fairlib.llm as llm
from fairlib.llm.transformers import TransformersScorer

pytestmark = pytest.mark.slow  # loads the bundled GGUF model

SYSTEM = "You are an emergency-department clinician making one decision at a time. Answer exactly."
CASES = [
    "A 54-year-old man with crushing chest pain radiating to the left arm and sweating for one hour.",
    "A 23-year-old woman with a twisted ankle after football, able to bear weight, mild swelling.",
]
QUESTIONS = [
    "Emergency Severity Index level (1 most urgent, 5 least urgent)? Answer with one digit.",
    "Order ECG? Answer Yes or No.",
]
OPTIONS = {QUESTIONS[0]: ("1", "2", "3", "4", "5"), QUESTIONS[1]: ("Yes", "No")}


@pytest.fixture(scope="module")
def smol():
    return TransformersScorer.from_pretrained("bundled", batch_size=4)


def oracle(sc, prompt, options, system=SYSTEM):
    "log P(option | prompt): one plain forward pass of the full templated prompt, float64 log-softmax."
    ids = sc.tokenizer(
        llm.chat_prompt(sc.tokenizer, prompt, system=system), add_special_tokens=False
    )["input_ids"]
    oid = [sc.tokenizer(o, add_special_tokens=False)["input_ids"] for o in options]
    assert all(len(o) == 1 for o in oid)
    with torch.inference_mode():
        lp = torch.log_softmax(sc.model(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1)
    return lp[[o[0] for o in oid]].numpy()


def test_bundled_prefix_tree_equals_each_prompt_alone(smol):
    q = QUESTIONS[0]
    prompts = [f"{c}\nStep: {s}.\n{q}" for c in CASES for s in ("triage", "reassessment")]
    n0 = smol.n_tokens
    tree = smol.option_scores(prompts, OPTIONS[q], system=SYSTEM, cache=False)
    used = smol.n_tokens - n0
    want = np.array([oracle(smol, p, OPTIONS[q]) for p in prompts])
    # probabilities to llm.ANSWER_TOLERANCE (1e-5, the scale the answer key ignores); log-probabilities of
    # ~-3 carry fp32 reduction-order noise of ~1e-5 relative through 30 layers, hence rtol there
    np.testing.assert_allclose(
        np.exp(tree.logprobs), np.exp(want), atol=llm.ANSWER_TOLERANCE, rtol=0
    )
    np.testing.assert_allclose(
        tree.probs, np.exp(want) / np.exp(want).sum(1, keepdims=True), atol=llm.ANSWER_TOLERANCE
    )
    np.testing.assert_allclose(tree.logprobs, want, rtol=2e-5, atol=1e-6)
    full = sum(map(len, smol.encode([smol.format(p, system=SYSTEM) for p in prompts])))
    assert used < 0.75 * full, (used, full)  # the template, system prompt and cases ran once


def test_bundled_agent_policy_equals_plain_forward(smol):
    from fairlib.agent.policies import OptionScoringPolicy, Call, Decision

    pol = OptionScoringPolicy(smol)
    ds = tuple(
        Decision(f"d{i}", q, OPTIONS[q], tuple(range(len(OPTIONS[q]))))
        for i, q in enumerate(QUESTIONS)
    )
    calls = [Call((i,), str(i), c, ds) for i, c in enumerate(CASES)]
    for call, res in zip(calls, pol.score(calls)):
        for d, (p, mass, _) in zip(call.decisions, res):
            lp = oracle(smol, f"{call.context}\n{d.question}", d.options, system=pol.system)
            np.testing.assert_allclose(p, np.exp(lp) / np.exp(lp).sum(), atol=1e-5)
            assert mass == pytest.approx(float(np.exp(lp).sum()), abs=1e-5)


def test_bundled_p_yes_over_the_tiers_of_a_case_equals_each_prompt_alone(smol):
    "mFARM's three tiers of two Opioid cases x 4 variants in one call (prefix tree, rows on different prefixes):"
    "P(Yes) equals a plain forward pass of each prompt alone, and the shared header and body run once."
    from fairlib.mfarm.instrument import prompt_table, SYSTEM_PROMPT

    df = prompt_table(
        "opioid",
        tiers=("high", "medium", "low"),
        split="test",
        instrument="paper",
        protocol="paper",
    )
    df = df[
        df.case_id.isin(df.case_id.drop_duplicates().iloc[:2])
        & df.variant.isin(["BASE", "White_Male", "Black_Female", "Asian_Intersex"])
    ]
    assert len(df) == 24 and set(df.tier) == {"high", "medium", "low"}
    prompts = df.prompt.tolist()
    n0 = smol.n_tokens
    got = smol.score(prompts, system=SYSTEM_PROMPT, cache=False, progress=False)
    used = smol.n_tokens - n0
    enc = smol.encode([smol.format(p, system=SYSTEM_PROMPT) for p in prompts])
    assert used < 0.85 * sum(map(len, enc)), (used, sum(map(len, enc)))
    want = []
    for e in enc:
        with torch.inference_mode():
            logits = smol.model(input_ids=torch.tensor([e])).logits[:, -1, :]
        want.append(llm.yes_no_probability(logits, smol.ids["yes"], smol.ids["no"])[0][0].item())
    np.testing.assert_allclose(got["p_yes"], want, atol=llm.ANSWER_TOLERANCE, rtol=0)
