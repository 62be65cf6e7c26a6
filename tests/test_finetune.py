"""fairlib.finetune: training data come only from the training split, the loss is the first-token Yes/No
cross-entropy (checked against an independent computation), training moves P(Yes) towards the labels, and the
saved adapter loads back through fairlib.llm.load_model with an identity of its own."""

import json

import numpy as np
import pytest
import torch

from fairlib import finetune as F
from fairlib.llm.transformers import TransformersScorer
from fairlib.llm.scorer import chat_prompt
from fairlib.llm.loading import load_model, make_tiny_model
from fairlib.mfarm.experiments import second_bos_scorer
from fairlib.mfarm.instrument import SYSTEM_PROMPT


@pytest.fixture(scope="module")
def examples():
    return F.training_examples(
        "ed_triage", source="synthetic", tier="low", n_cases=16, variants_per_case=2, seed=1
    )


def test_examples_come_from_the_training_split(examples):
    from fairlib.mfarm.benchmark import load_benchmark

    cases = load_benchmark("ed_triage", source="synthetic", seed=1).cases.set_index("case_id")
    assert (cases.loc[examples.case_id, "split"] == "train").all()
    assert examples.groupby("case_id").size().eq(2).all() and examples.case_id.nunique() == 16
    assert examples.groupby("case_id").variant.nunique().eq(2).all()
    assert examples.label.isin([0, 1]).all() and 0 < examples.label.mean() < 1


def test_answer_tokens_are_the_first_tokens_of_yes_and_no():
    _, tok = make_tiny_model(seed=0)
    ids = F.answer_token_ids(tok)
    assert tok.decode([ids["Yes"]]).strip().lower().startswith("y") and tok.decode(
        [ids["No"]]
    ).strip().lower().startswith("n")


def test_loss_is_first_generated_token_cross_entropy(tmp_path, examples):
    """Independent oracle: the loss of the first step equals the mean CE of the answer token after generate()'s first
    step logits."""
    model, tok = make_tiny_model(seed=2)
    ex = examples.iloc[:8]
    ids = F.answer_token_ids(tok)
    ce = []
    for p, y in zip(ex.prompt, ex.label):
        enc = tok(
            chat_prompt(tok, p, system=SYSTEM_PROMPT), add_special_tokens=False, return_tensors="pt"
        )
        with torch.no_grad():
            logits = model(**enc).logits[0, -1]
        ce.append(
            float(
                torch.nn.functional.cross_entropy(
                    logits[None], torch.tensor([ids["Yes" if y else "No"]])
                )
            )
        )
    r = F.finetune_lora(
        model,
        tok,
        ex.prompt,
        ex.label,
        save_dir=tmp_path / "a",
        progress=False,
        settings=F.LoraSettings(
            r=2, alpha=4, dropout=0.0, learning_rate=1e-9, batch_size=8, epochs=1
        ),
    )
    assert r.losses[0] == pytest.approx(
        np.mean(ce), rel=1e-4
    )  # LoRA starts at zero: the base model's loss


def _answer_ce(model, tok, ex):
    ids = F.answer_token_ids(tok)
    out = []
    for p, y in zip(ex.prompt, ex.label):
        enc = tok(
            chat_prompt(tok, p, system=SYSTEM_PROMPT), add_special_tokens=False, return_tensors="pt"
        )
        with torch.no_grad():
            logits = model(**enc).logits[0, -1]
        out.append(
            float(
                torch.nn.functional.cross_entropy(
                    logits[None], torch.tensor([ids["Yes" if y else "No"]])
                )
            )
        )
    return float(np.mean(out))


def test_training_lowers_the_answer_loss_and_adapter_loads(tmp_path, examples):
    """Base vs base + saved adapter (loaded back by fairlib.llm.load_model): the answer-token loss falls on the
    training examples."""
    base_dir = tmp_path / "base"
    ad = tmp_path / "adapter"
    model, tok = make_tiny_model(base_dir, seed=3)
    r = F.finetune_lora(
        model,
        tok,
        examples.prompt,
        examples.label,
        save_dir=ad,
        progress=False,
        settings=F.LoraSettings(
            r=4, alpha=8, dropout=0.0, learning_rate=1e-2, epochs=4, batch_size=8
        ),
    )
    assert r.last_loss < r.first_loss and r.n_steps == 16 and (ad / "adapter_config.json").exists()
    meta = json.loads((ad / "fairlib_training.json").read_text())
    assert meta["settings"]["r"] == 4 and meta["n_examples"] == 32
    (m0, t0), base_ident = load_model(str(base_dir))
    (m2, t2), ident = load_model(str(base_dir), adapter=ad)
    assert _answer_ce(m2, t2, examples) < _answer_ce(m0, t0, examples) - 0.1
    assert ident["model_id"] != base_ident["model_id"] and "+lora:" in ident["model_id"]
    s = TransformersScorer(m2, t2, model_id=ident["model_id"]).score(
        examples.prompt.tolist()[:3], cache=False, progress=False
    )
    assert s.p_yes.between(0, 1).all()


def test_second_bos_view_is_keyed_apart():
    model, tok = make_tiny_model(seed=4)
    sc = TransformersScorer(model, tok, model_label="t")
    sb = second_bos_scorer(sc)
    p = ["Chest pain. Emergency?"]
    a = sc.score(p, system=SYSTEM_PROMPT, cache=False, progress=False).p_yes.iloc[0]
    b = sb.score(p, system=SYSTEM_PROMPT, cache=False, progress=False).p_yes.iloc[0]
    assert a == pytest.approx(
        b, abs=1e-6
    )  # this tokenizer adds no BOS by default: same tokens, same answer
    assert sb._key_extra() != sc._key_extra() and "second BOS" in sb.model_label
    assert sb.encode(["x"]) == tok(["x"])["input_ids"]
