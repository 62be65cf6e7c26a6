"""fairlib.llm on the bundled SmolLM2-135M-Instruct (GGUF, loaded once, ~15-20 s)."""

import hashlib

import numpy as np
import pytest
import torch
from scipy.special import softmax

import fairlib.llm as llm
from fairlib.llm.transformers import TransformersScorer

SYSTEM = "You are a clinical decision support assistant. Answer only Yes or No."
PROMPTS = [
    "A 70-year-old man with crushing chest pain, heart rate 130, blood pressure 80/50. "
    "Does this patient need immediate emergency intervention?",
    "A 25-year-old with a sprained ankle, normal vital signs. Does this patient need immediate emergency intervention?",
    "Is the sky blue?",
]


@pytest.fixture(scope="module")
def smol(tmp_path_factory):
    return TransformersScorer.from_pretrained(
        "bundled", batch_size=3, cache=tmp_path_factory.mktemp("c") / "c.sqlite"
    )


@pytest.fixture(scope="module")
def brute(smol):
    "Yes/No ids by decoding every id on its own (independent of yes_no_token_ids' batch decode)."
    tok, n = smol.tokenizer, smol.model.get_output_embeddings().weight.shape[0]
    texts = [tok.decode([i]).strip().lower() for i in range(n)]
    return {w: [i for i, t in enumerate(texts) if t == w] for w in ("yes", "no")}


def test_bundled_identity_is_the_gguf_file_hash(smol):
    d, g = llm.bundled_model_path()
    assert g.endswith(".gguf") and smol.model_label == g and smol.precision == "fp32"
    assert (
        smol.model_id == f"{d.name}/{g}@sha256:{hashlib.sha256((d / g).read_bytes()).hexdigest()}"
    )


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
        enc = tok.apply_chat_template(
            [{"role": "system", "content": SYSTEM}, {"role": "user", "content": p}],
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        with torch.no_grad():
            g = model.generate(
                **enc,
                max_new_tokens=1,
                do_sample=False,
                output_logits=True,
                return_dict_in_generate=True,
                pad_token_id=tok.pad_token_id,
            )
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
    assert (
        s8.precision == "int8_dynamic" and s8.model_id == smol.model_id
    )  # same file; precision keys apart
    assert "re-quantised to int8" in s8.provenance["weights"]
    a = smol.score(PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False)
    b = s8.score(PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False)
    assert not b["from_cache"].any()
    dp = np.abs(a["p_yes"] - b["p_yes"]).max()
    assert 0 < dp < 0.5, (
        dp
    )  # a real precision effect: measured ~0.3 max on ED prompts (per-channel int8)
    assert (b["yes_no_mass"] > 0.05).all()


def test_bundled_option_scores_match_p_yes(smol):
    "Yes/No as options: the one-token 'Yes' and 'No' are among the tokens P(Yes) sums over."
    r = smol.option_scores(PROMPTS, ("Yes", "No"), system=SYSTEM, cache=False)
    df = smol.score(PROMPTS, system=SYSTEM, cache=False, progress=False)
    assert r.method == "first-token"
    assert (r.option_mass <= df["yes_no_mass"].to_numpy() + 1e-9).all() and (
        r.option_mass > 0.5 * df["yes_no_mass"]
    ).all()
    assert np.abs(r.probs[:, 0] - df["p_yes"].to_numpy()).max() < 0.05
    levels = smol.option_scores(
        PROMPTS, ("1", "2", "3", "4", "5"), system="Answer with an ESI level 1-5.", cache=False
    )
    assert levels.probs.shape == (3, 5) and np.allclose(levels.probs.sum(1), 1)


def test_gguf_conversion_cache_is_bitwise_the_gguf_load(tmp_path, monkeypatch):
    "The dequantised copy written on first load gives the GGUF path's weights, tokenizer and logits exactly."
    monkeypatch.setenv("FAIRLIB_CACHE_DIR", str(tmp_path / "cache"))
    (m0, t0), i0 = llm.load_model("bundled", convert_gguf=False)
    assert not (
        tmp_path / "cache" / "converted_models"
    ).exists()  # convert_gguf=False writes nothing
    (m1, t1), i1 = llm.load_model("bundled")  # converts
    (m2, t2), i2 = llm.load_model("bundled")  # reads the copy
    conv = list((tmp_path / "cache" / "converted_models").iterdir())
    assert (
        len(conv) == 1
        and (conv[0] / "fairlib_conversion.json").is_file()
        and (conv[0] / "model.safetensors").is_file()
    )
    assert not [p for p in conv[0].parent.iterdir() if ".partial-" in p.name]
    assert i0["model_id"] == i1["model_id"] == i2["model_id"]  # answer keys unchanged
    assert i2["provenance"]["gguf_file_type"] == i0["provenance"]["gguf_file_type"] == "MOSTLY_Q4_1"
    s0, s2 = m0.state_dict(), m2.state_dict()
    assert s0.keys() == s2.keys() and all(torch.equal(s0[k], s2[k]) for k in s0)
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPTS[0]}]
    text = t0.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    assert t2.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True) == text
    assert (
        t2(text)["input_ids"] == t0(text)["input_ids"]
        and t2.pad_token == t0.pad_token
        and len(t2) == len(t0)
    )
    with torch.inference_mode():
        ids = torch.tensor([t0(text)["input_ids"]])
        assert torch.equal(m0(ids).logits, m2(ids).logits)
    (b0, _), _ = llm.load_model("bundled", precision="bf16", convert_gguf=False)
    (b2, _), _ = llm.load_model("bundled", precision="bf16")
    assert all(
        torch.equal(x, y) for x, y in zip(b0.state_dict().values(), b2.state_dict().values())
    )


@pytest.mark.skipif(
    not llm.onednn_available(), reason="this PyTorch build has no oneDNN linear kernels"
)
def test_bundled_onednn_kernel_matches_aten_on_opioid_high(smol):
    "The bundled model on the longest prompts (Opioid high, one case x 13 variants): oneDNN vs PyTorch's default path."
    from fairlib.mfarm.instrument import prompt_table

    df = prompt_table(
        "opioid", tiers=("high",), n_cases=1, seed=0, split="test", instrument="paper"
    )
    assert smol.cpu_kernel == "onednn"
    fast = smol.score(
        df["prompt"].tolist(), system=df.attrs["system"], cache=False, progress=False
    )["p_yes"].to_numpy()
    plain = TransformersScorer(
        smol.model, smol.tokenizer, model_id=smol.model_id, cpu_kernel="aten", batch_size=3
    )
    ref = plain.score(
        df["prompt"].tolist(), system=df.attrs["system"], cache=False, progress=False
    )["p_yes"].to_numpy()
    np.testing.assert_allclose(fast, ref, atol=llm.ANSWER_TOLERANCE, rtol=0)
