"""fairlib.llm on the bundled SmolLM2-135M-Instruct (GGUF, loaded once, ~15-20 s)."""
import hashlib
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.special import softmax

import fairlib.llm as llm
from fairlib.llm import TransformersScorer

SYSTEM = "You are a clinical decision support assistant. Answer only Yes or No."
PROMPTS = ["A 70-year-old man with crushing chest pain, heart rate 130, blood pressure 80/50. "
           "Does this patient need immediate emergency intervention?",
           "A 25-year-old with a sprained ankle, normal vital signs. Does this patient need immediate emergency intervention?",
           "Is the sky blue?"]


@pytest.fixture(scope="module")
def smol(tmp_path_factory):
    return TransformersScorer.from_pretrained("bundled", batch_size=3, cache=tmp_path_factory.mktemp("c") / "c.sqlite")


@pytest.fixture(scope="module")
def brute(smol):
    "Yes/No ids by decoding every id on its own (independent of yes_no_token_ids' batch decode)."
    tok, n = smol.tokenizer, smol.model.get_output_embeddings().weight.shape[0]
    texts = [tok.decode([i]).strip().lower() for i in range(n)]
    return {w: [i for i, t in enumerate(texts) if t == w] for w in ("yes", "no")}


def test_bundled_identity_is_the_gguf_file_hash(smol):
    d, g = llm.bundled_model_path()
    assert g.endswith(".gguf") and smol.model_label == g and smol.precision == "fp32"
    assert smol.model_id == f"{d.name}/{g}@sha256:{hashlib.sha256((d / g).read_bytes()).hexdigest()}"


def test_bundled_yes_no_ids_brute_force(smol, brute):
    tok = smol.tokenizer
    for w in ("yes", "no"):
        assert smol.ids[w].tolist() == brute[w]
    assert tok.encode(" Yes", add_special_tokens=False)[0] in smol.ids["yes"]
    assert tok.encode("No", add_special_tokens=False)[0] in smol.ids["no"]


def test_bundled_batched_matches_generate(smol, brute):
    df = smol.score(PROMPTS, system=SYSTEM, cache=False, progress=False)
    tok, model = smol.tokenizer, smol.model
    for i, p in enumerate(PROMPTS):
        enc = tok.apply_chat_template([{"role": "system", "content": SYSTEM}, {"role": "user", "content": p}],
                                      add_generation_prompt=True, return_tensors="pt", return_dict=True)
        with torch.no_grad():
            g = model.generate(**enc, max_new_tokens=1, do_sample=False, output_logits=True,
                               return_dict_in_generate=True, pad_token_id=tok.pad_token_id)
        q = softmax(g.logits[0][0].double().numpy())
        y, n = q[brute["yes"]].sum(), q[brute["no"]].sum()
        assert abs(df["p_yes"][i] - y / (y + n)) < 1e-5
        assert abs(df["yes_no_mass"][i] - (y + n)) < 1e-5
    # far more Yes/No mass than a uniform next-token distribution would give (10 / 49152 ~ 2e-4)
    assert (df["yes_no_mass"] > 0.05).all() and (df["yes_no_mass"] <= 1).all()


def test_bundled_provenance_says_dequantised_q4_1(smol):
    assert smol.provenance["gguf_file_type"] == "MOSTLY_Q4_1"
    assert "dequantised on load to float32" in smol.provenance["weights"]


def test_bundled_int8_dynamic_is_a_small_keyed_precision_effect(smol, tmp_path):
    s8 = TransformersScorer.from_pretrained("bundled", precision="int8_dynamic", batch_size=3)
    assert s8.precision == "int8_dynamic" and s8.model_id == smol.model_id   # same file; precision keys apart
    assert "re-quantised to int8" in s8.provenance["weights"]
    a = smol.score(PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False)
    b = s8.score(PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False)
    assert not b["from_cache"].any()
    dp = np.abs(a["p_yes"] - b["p_yes"]).max()
    assert 0 < dp < 0.5, dp       # a real precision effect: measured ~0.3 max on ED prompts (per-channel int8)
    assert (b["yes_no_mass"] > 0.05).all()


def test_bundled_option_scores_match_p_yes(smol):
    "Yes/No as options: the one-token 'Yes' and 'No' are among the tokens P(Yes) sums over."
    r = smol.option_scores(PROMPTS, ("Yes", "No"), system=SYSTEM, cache=False)
    df = smol.score(PROMPTS, system=SYSTEM, cache=False, progress=False)
    assert r.method == "first-token"
    assert (r.option_mass <= df["yes_no_mass"].to_numpy() + 1e-9).all() and (r.option_mass > 0.5 * df["yes_no_mass"]).all()
    assert np.abs(r.probs[:, 0] - df["p_yes"].to_numpy()).max() < 0.05
    levels = smol.option_scores(PROMPTS, ("1", "2", "3", "4", "5"), system="Answer with an ESI level 1-5.", cache=False)
    assert levels.probs.shape == (3, 5) and np.allclose(levels.probs.sum(1), 1)
