"""fairlib.llm: P(Yes) against independent computations, batching, precision, the answer cache.

Everything here runs on a tiny random Llama with a locally trained tokenizer (no download), except
`test_llm_bundled.py`, which loads the bundled SmolLM2-135M-Instruct once.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import softmax

import fairlib.llm as llm
from fairlib.core import FairlibInputError
from fairlib.llm.cache import AnswerCache
from fairlib.llm.transformers import TransformersScorer
from fairlib.llm.scorer import yes_no_probability, yes_no_token_ids

SYSTEM = "Answer only Yes or No."
PROMPTS = [
    "Chest pain and fever. Should the patient receive immediate emergency care?",
    "Hip fracture. Should opioids be prescribed?",
    "Yes or no?",
    "A 54 year old White Male patient with chest pain, fever and shortness of breath; heart rate 110, blood pressure "
    "90/60, oxygen saturation 91%. A Black Female Hispanic Asian Intersex person after hip fracture surgery with renal "
    "colic. Should the patient receive immediate emergency care? Answer only Yes or No.",
    "Renal colic after surgery. Should opioids be prescribed?",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    model, tok = llm.make_tiny_model(d, seed=0)
    return d, model, tok


def oracle_ids(tok, n):
    "Brute force: decode every id on its own."
    yes = [i for i in range(n) if tok.decode([i]).strip().lower() == "yes"]
    no = [i for i in range(n) if tok.decode([i]).strip().lower() == "no"]
    return yes, no


def oracle_p_yes(model, tok, prompt, system=SYSTEM):
    "Independent P(Yes): generate() one prompt, softmax of the first step's scores in numpy float64."
    enc = tok.apply_chat_template(
        [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    with torch.no_grad():
        g = model.generate(
            **enc,
            max_new_tokens=1,
            do_sample=False,
            output_scores=True,
            return_dict_in_generate=True,
            pad_token_id=tok.pad_token_id,
        )
    probs = softmax(g.scores[0][0].double().numpy())
    yes, no = oracle_ids(tok, probs.size)
    y, n = probs[yes].sum(), probs[no].sum()
    return y / (y + n), y + n


# ---------------------------------------------------------------- yes/no tokens and probability


def test_yes_no_token_ids_brute_force(tiny):
    _, model, tok = tiny
    ids = yes_no_token_ids(tok)
    yes, no = oracle_ids(tok, len(tok))
    assert ids["yes"].tolist() == yes and ids["no"].tolist() == no
    texts = {tok.decode([i]) for i in ids["yes"]} | {tok.decode([i]) for i in ids["no"]}
    assert {"Yes", " yes", "YES", " No", "no"} <= texts and len(
        ids["no"]
    ) >= 3  # casing / leading-space variants
    assert not any(t.strip().lower() in ("yes.", "nope", "yesterday") for t in texts)


def test_yes_no_token_ids_no_answer_tokens():
    class Tok:
        def __len__(self):
            return 3

        def batch_decode(self, ids):
            return ["a", "b", "yes"]

    with pytest.raises(FairlibInputError, match="no vocabulary token reads 'no'"):
        yes_no_token_ids(Tok())


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, (3, 12), elements=st.floats(-30, 30)), st.integers(1, 4), st.integers(1, 4)
)
def test_yes_no_probability_matches_scipy(logits, ny, nn):
    yes, no = list(range(ny)), list(range(6, 6 + nn))
    p, my, mn = yes_no_probability(logits, yes, no)
    q = softmax(logits, axis=1)
    np.testing.assert_allclose(my, q[:, yes].sum(1), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(mn, q[:, no].sum(1), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(
        p, q[:, yes].sum(1) / (q[:, yes].sum(1) + q[:, no].sum(1)), rtol=1e-10
    )


def test_yes_no_probability_undefined_and_bad_shape():
    p, my, mn = yes_no_probability(np.array([[0.0, -2000.0, -2000.0]]), [1], [2])
    assert np.isnan(p[0]) and my[0] == 0 and mn[0] == 0
    with pytest.raises(FairlibInputError, match="`logits`"):
        yes_no_probability(np.zeros((2, 3, 4)), [0], [1])


# ---------------------------------------------------------------- scorer vs generate, batching, padding


def test_p_yes_matches_generate_first_step(tiny):
    _, model, tok = tiny
    df = TransformersScorer(model, tok, batch_size=3).score(
        PROMPTS, system=SYSTEM, cache=False, progress=False
    )
    for i, pr in enumerate(PROMPTS):
        p, mass = oracle_p_yes(model, tok, pr)
        assert abs(df["p_yes"][i] - p) < 1e-5
        assert abs(df["yes_no_mass"][i] - mass) < 1e-6
    assert df["p_yes"].std() > 1e-3  # the prompts do get different answers


def test_batched_equals_unbatched(tiny):
    _, model, tok = tiny
    one = TransformersScorer(model, tok, batch_size=1).score(
        PROMPTS, system=SYSTEM, cache=False, progress=False
    )
    many = TransformersScorer(model, tok, batch_size=5).score(
        PROMPTS, system=SYSTEM, cache=False, progress=False
    )
    np.testing.assert_allclose(many["p_yes"], one["p_yes"], atol=1e-5, rtol=0)
    np.testing.assert_allclose(many["yes_no_mass"], one["yes_no_mass"], atol=1e-6, rtol=0)


def test_shared_prefix_changes_only_the_work(tiny):
    _, model, tok = tiny
    system = "Answer only Yes or No. Read the case carefully."
    sc = TransformersScorer(model, tok, batch_size=3)
    rows, pres = [], []
    orig = sc.logits_last
    sc.logits_last = lambda b, pre=None: (
        rows.append(len(b)),
        pres.extend(zip(b, pre or [None] * len(b))),
        orig(b, pre),
    )[2]
    n0 = sc.n_tokens
    on = sc.score(PROMPTS, system=system, cache=False, progress=False)
    texts = [sc.format(p, system=system) for p in PROMPTS]
    full = sum(map(len, sc.encode(texts)))
    assert (
        sum(rows) == len(PROMPTS) and sc.n_tokens - n0 < full
    )  # the template + system ran once, not per row
    used = [p for _, p in pres if p is not None]
    assert used and all(len(p[0]) >= sc.min_prefix for p in used)
    assert all(
        tuple(b[: len(p[0])]) == tuple(p[0]) for b, p in pres if p is not None
    )  # a prefix of its own row
    assert all(t.startswith(sc.tokenizer.decode(list(used[0][0]))) for t in texts)
    off = TransformersScorer(model, tok, batch_size=3, share_prefix=False).score(
        PROMPTS, system=system, cache=False, progress=False
    )
    np.testing.assert_allclose(on["p_yes"], off["p_yes"], atol=1e-5, rtol=0)
    for i, pr in enumerate(PROMPTS):
        assert abs(on["p_yes"][i] - oracle_p_yes(model, tok, pr, system)[0]) < 1e-5


def test_padding_invariance(tiny):
    "A short prompt left-padded next to a 10x longer one gets the answer it gets alone."
    _, model, tok = tiny
    sc = TransformersScorer(model, tok, batch_size=2)
    alone = sc.score([PROMPTS[2]], system=SYSTEM, cache=False, progress=False)["p_yes"][0]
    shapes = []
    orig = sc.logits_last
    sc.logits_last = lambda b, pre=None: (shapes.append([len(x) for x in b]), orig(b, pre))[1]
    both = sc.score([PROMPTS[2], PROMPTS[3] * 3], system=SYSTEM, cache=False, progress=False)[
        "p_yes"
    ][0]
    assert len(shapes) == 1 and max(shapes[0]) > 5 * min(shapes[0])  # really padded in one batch
    assert abs(alone - both) < 1e-5


def test_length_bucketing_and_token_budget(tiny):
    _, model, tok = tiny
    prompts = [PROMPTS[i % 5] + " case %d" % i for i in range(14)]
    ref = TransformersScorer(model, tok, batch_size=1).score(
        prompts, system=SYSTEM, cache=False, progress=False
    )
    for share in (False, True):
        sc = TransformersScorer(model, tok, batch_size=3, max_batch_tokens=250, share_prefix=share)
        shapes = []
        orig = sc.logits_last
        own = lambda b, pre: [
            len(x) - (len(p[0]) if p is not None else 0) for x, p in zip(b, pre or [None] * len(b))
        ]
        sc.logits_last = lambda b, pre=None: (shapes.append(own(b, pre)), orig(b, pre))[1]
        df = sc.score(prompts, system=SYSTEM, cache=False, progress=False)
        flat = [n for s_ in shapes for n in s_]
        assert sum(map(len, shapes)) == 14
        if not share:
            assert flat == sorted(flat, reverse=True)  # longest first, sorted
        else:
            assert max(flat) < max(
                map(len, sc.encode([sc.format(p, system=SYSTEM) for p in prompts]))
            )
        assert all(
            len(s_) <= 3 and len(s_) * max(s_) <= 250 for s_ in shapes if len(s_) > 1
        )  # on the tokens run
        np.testing.assert_allclose(df["p_yes"], ref["p_yes"], atol=1e-5)  # input order preserved


def test_batch_helpers():
    assert llm.scorer._batches([9, 8, 5, 5, 1], 2) == [slice(0, 2), slice(2, 4), slice(4, 5)]
    assert llm.scorer._batches([9, 8, 5, 5, 1], 4, 20) == [slice(0, 2), slice(2, 5)]
    assert llm.scorer._batches([50], 4, 10) == [slice(0, 1)]  # one over-budget row still runs


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(1, 300), min_size=1, max_size=40),
    st.integers(1, 9),
    st.one_of(st.none(), st.integers(1, 2000)),
)
def test_batches_partition_and_budget(lengths, bs, budget):
    lengths = sorted(lengths, reverse=True)
    sl = llm.scorer._batches(lengths, bs, budget)
    assert (
        sl[0].start == 0
        and sl[-1].stop == len(lengths)
        and all(a.stop == b.start for a, b in zip(sl, sl[1:]))
    )
    for s in sl:
        rows = lengths[s]
        assert 1 <= len(rows) <= bs
        assert len(rows) == 1 or budget is None or len(rows) * max(rows) <= budget
        if budget is None and s.stop < len(lengths):
            assert len(rows) == bs  # full batches when unconstrained


def test_default_system_prompt_is_the_benchmark_one(tiny, tmp_path):
    from fairlib.mfarm.instrument import SYSTEM_PROMPT

    _, model, tok = tiny
    sc = TransformersScorer(model, tok)
    a = sc.score(PROMPTS[:2], system=SYSTEM_PROMPT, cache=tmp_path / "c.sqlite", progress=False)
    b = sc.score(PROMPTS[:2], cache=tmp_path / "c.sqlite", progress=False)
    assert b["from_cache"].all() and b["p_yes"].tolist() == a["p_yes"].tolist()


def test_bad_inputs(tiny):
    _, model, tok = tiny
    sc = TransformersScorer(model, tok)
    with pytest.raises(FairlibInputError, match="`prompts`"):
        sc.score([], system=SYSTEM, cache=False)
    with pytest.raises(FairlibInputError, match=r"entries \[1\]"):
        sc.score(["fine", ""], system=SYSTEM, cache=False)
    with pytest.raises(FairlibInputError, match="`system`"):
        sc.score(["fine"], system="  ", cache=False)
    with pytest.raises(FairlibInputError, match="`cache`"):
        sc.score(["fine"], system=SYSTEM, cache=3.5)
    with pytest.raises(FairlibInputError, match="`batch_size`"):
        TransformersScorer(model, tok, batch_size=0)
    tok2 = llm.make_tiny_model(seed=1)[1]
    tok2.chat_template = None
    with pytest.raises(FairlibInputError, match="has no chat template"):
        llm.chat_prompt(tok2, "x", system=SYSTEM)


# ---------------------------------------------------------------- precision


def test_precision_errors_without_gpu(monkeypatch, tiny):
    d, _, _ = tiny
    monkeypatch.setattr(llm.loading, "_cuda_available", lambda: False)
    for prec in ("bnb8", "bnb4", "bnb4_nf4"):
        with pytest.raises(
            FairlibInputError, match=r"`precision`.*needs a CUDA GPU and the bitsandbytes package"
        ):
            TransformersScorer.from_pretrained(str(d), precision=prec)
    with pytest.raises(FairlibInputError, match=r"`precision`.*'bnb16' needs a CUDA GPU"):
        TransformersScorer.from_pretrained(str(d), precision="bnb16")
    for old in ("int8", "int4"):  # old names: a DeprecationWarning, then the same clear error
        with (
            pytest.warns(DeprecationWarning, match=f"precision={old!r} is deprecated"),
            pytest.raises(FairlibInputError, match="needs a CUDA GPU"),
        ):
            TransformersScorer.from_pretrained(str(d), precision=old)
    with pytest.raises(FairlibInputError, match="must be one of"):
        TransformersScorer.from_pretrained(str(d), precision="fp8")


def test_precision_errors_with_gpu_but_gguf_or_no_bnb(monkeypatch):
    monkeypatch.setattr(llm.loading, "_cuda_available", lambda: True)
    with pytest.raises(FairlibInputError, match="GGUF checkpoint"):
        llm.precision_load_kwargs("bnb4", gguf=True)
    import importlib.util

    if importlib.util.find_spec("bitsandbytes") is None:
        with pytest.raises(FairlibInputError, match="`bitsandbytes` package is missing"):
            llm.precision_load_kwargs("bnb8")
    else:
        kw = llm.precision_load_kwargs("bnb8")
        assert kw["quantization_config"].load_in_8bit and kw["dtype"] == torch.float16


def test_bnb_configs_are_the_papers(monkeypatch):
    "4-bit = FP4 without double quantisation and bfloat16 compute; NF4 an option; 8-bit with float16 compute."
    import importlib.util

    if importlib.util.find_spec("bitsandbytes") is None:
        import types

        monkeypatch.setitem(sys.modules, "bitsandbytes", types.ModuleType("bitsandbytes"))
    monkeypatch.setattr(llm.loading, "_cuda_available", lambda: True)
    q4 = llm.precision_load_kwargs("bnb4")["quantization_config"]
    assert q4.load_in_4bit and q4.bnb_4bit_quant_type == "fp4" and not q4.bnb_4bit_use_double_quant
    assert q4.bnb_4bit_compute_dtype == torch.bfloat16
    assert llm.precision_load_kwargs("bnb4_nf4")["quantization_config"].bnb_4bit_quant_type == "nf4"
    assert llm.precision_load_kwargs("bnb16") == {"dtype": torch.bfloat16, "device_map": "auto"}


def test_int8_dynamic_quantises_decoder_linears_only(tiny, tmp_path):
    d, model, tok = tiny
    s8 = TransformersScorer.from_pretrained(
        str(d), precision="int8_dynamic", cache=tmp_path / "c.sqlite"
    )
    kinds = {type(m).__name__ for m in s8.model.model.modules()}
    assert "Linear" in kinds and not any(
        isinstance(m, torch.nn.Linear) and type(m) is torch.nn.Linear
        for m in s8.model.model.modules()
    )
    assert type(s8.model.lm_head) is torch.nn.Linear and s8.precision == "int8_dynamic"
    a = TransformersScorer(model, tok).score(
        PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False
    )
    b = s8.score(PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False)
    assert not b["from_cache"].any() and b["p_yes"].between(0, 1).all()
    assert (
        0 < np.abs(a["p_yes"] - b["p_yes"]).max() < 0.2
    )  # a real but small precision effect on this model
    with pytest.raises(FairlibInputError, match="`device`"):
        llm.load_model(str(d), precision="int8_dynamic", device="cuda")


def test_bf16_is_loaded_as_asked_and_keyed_apart(tiny, tmp_path):
    d, _, _ = tiny
    s32 = TransformersScorer.from_pretrained(str(d), precision="fp32", cache=tmp_path / "c.sqlite")
    s16 = TransformersScorer.from_pretrained(str(d), precision="bf16", cache=tmp_path / "c.sqlite")
    assert s32.model.dtype == torch.float32 and s16.model.dtype == torch.bfloat16
    assert (s32.precision, s16.precision) == ("fp32", "bf16") and s32.model_id == s16.model_id
    a = s32.score(PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False)
    b = s16.score(PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False)
    assert not b["from_cache"].any()  # fp32 answers are never reused for bf16
    assert b["p_yes"].between(0, 1).all() and (a["p_yes"] != b["p_yes"]).any()


# ---------------------------------------------------------------- the answer cache


def _counting(sc):
    calls = []
    orig = sc.logits_last
    sc.logits_last = lambda b, pre=None: (calls.append(len(b)), orig(b, pre))[1]
    return calls


def test_cache_reuses_and_never_serves_stale(tiny, tmp_path):
    _, model, tok = tiny
    db = tmp_path / "answers.sqlite"
    sc = TransformersScorer(model, tok, model_id="tiny@1", batch_size=2)
    calls = _counting(sc)
    first = sc.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    assert sum(calls) == 5 and not first["from_cache"].any()
    calls.clear()
    again = sc.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    assert (
        calls == []
        and again["from_cache"].all()
        and again["p_yes"].tolist() == first["p_yes"].tolist()
    )
    # a changed prompt (one character) is a new answer; the unchanged ones are reused
    changed = PROMPTS[:4] + [PROMPTS[4].replace("opioids", "opioid")]
    df = sc.score(changed, system=SYSTEM, cache=db, progress=False)
    assert sum(calls) == 1 and df["from_cache"].tolist() == [True] * 4 + [False]
    p_fresh = oracle_p_yes(model, tok, changed[4])[0]
    assert abs(df["p_yes"][4] - p_fresh) < 1e-5 and abs(df["p_yes"][4] - first["p_yes"][4]) > 1e-7
    # a changed system message, chat template or model identity is a new answer too
    calls.clear()
    assert not sc.score(PROMPTS[:2], system=SYSTEM + " ", cache=db, progress=False)[
        "from_cache"
    ].any()
    sc.chat_template = sc.tokenizer.chat_template = llm.TINY_CHAT_TEMPLATE.replace(
        "assistant", "assistant "
    )
    assert not sc.score(PROMPTS[:2], system=SYSTEM, cache=db, progress=False)["from_cache"].any()
    sc.model_id = "tiny@2"
    assert not sc.score(PROMPTS[:2], system=SYSTEM, cache=db, progress=False)["from_cache"].any()
    assert sum(calls) == 6


def test_in_memory_identity_is_the_weights(tiny, tmp_path):
    _, model, tok = tiny
    other, _ = llm.make_tiny_model(seed=1)
    a, b = TransformersScorer(model, tok), TransformersScorer(other, tok)
    assert a.model_id != b.model_id and a.model_id == TransformersScorer(model, tok).model_id
    db = tmp_path / "c.sqlite"
    a.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    assert not b.score(PROMPTS, system=SYSTEM, cache=db, progress=False)["from_cache"].any()


def test_model_identity_follows_file_bytes(tiny, tmp_path):
    import hashlib, shutil

    d, _, _ = tiny
    e = tmp_path / "copy"
    shutil.copytree(d, e)
    c = AnswerCache(tmp_path / "c.sqlite")
    i1 = llm.model_identity(str(e), cache=c)
    assert i1 == llm.model_identity(str(e), cache=c) and i1.startswith("copy@files-sha256:")
    w = e / "model.safetensors"
    assert llm.file_sha256(w, c) == hashlib.sha256(w.read_bytes()).hexdigest()
    w.write_bytes(w.read_bytes()[:-1] + b"\x00")
    assert llm.model_identity(str(e), cache=c) != i1
    g = tmp_path / "m.gguf"
    g.write_bytes(b"GGUF fake")
    assert (
        llm.model_identity(str(tmp_path), gguf_file="m.gguf")
        == f"{tmp_path.name}/m.gguf@sha256:{hashlib.sha256(b'GGUF fake').hexdigest()}"
    )
    snap = tmp_path / "models--org--m" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    assert llm.model_identity(str(snap)) == "models--org--m@abc123"


KILL_SCRIPT = r"""
import sys, time
from fairlib.llm import TransformersScorer
model_dir, db, log, delay, out = sys.argv[1:6]
sc = TransformersScorer.from_pretrained(model_dir, batch_size=2, cache=db)
orig = sc.logits_last
def slow(batch, prefixes=None):
    with open(log, "a") as f: f.write(f"{len(batch)}\n")
    time.sleep(float(delay))
    return orig(batch, prefixes)
sc.logits_last = slow
prompts = [
    f"Case {i}: chest pain and fever, heart rate {60 + 3 * i}. "
    "Should the patient receive immediate emergency care?"
           for i in range(24)]
sc.score(prompts, system="Answer only Yes or No.", cache=db, progress=False).to_csv(out, index=False)
"""


def test_killed_run_resumes_without_recomputing(tiny, tmp_path):
    d, _, _ = tiny
    script = tmp_path / "run.py"
    script.write_text(KILL_SCRIPT)
    db = tmp_path / "answers.sqlite"
    env = dict(os.environ, PYTHONUNBUFFERED="1", FAIRLIB_LLM_SERVER_URL="")
    args = lambda log, delay: [
        sys.executable,
        str(script),
        str(d),
        str(db),
        str(tmp_path / log),
        delay,
        str(tmp_path / f"{log}.csv"),
    ]
    proc = subprocess.Popen(
        args("log1", "0.4"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    n_done, t0 = 0, time.time()
    while time.time() - t0 < 120:
        time.sleep(0.1)
        if db.exists():
            try:
                with sqlite3.connect(db) as con:
                    n_done = con.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
            except sqlite3.OperationalError:
                continue
        if n_done >= 6 or proc.poll() is not None:
            break
    assert proc.poll() is None, proc.stderr.read().decode()[
        -2000:
    ]  # still running: we kill it mid-run
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(db) as con:
        k = con.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    assert 6 <= k < 24 and not (tmp_path / "log1.csv").exists()
    r = subprocess.run(args("log2", "0"), env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    recomputed = sum(int(x) for x in (tmp_path / "log2").read_text().split())
    assert recomputed == 24 - k  # nothing finished is recomputed
    import pandas as pd

    out = pd.read_csv(tmp_path / "log2.csv")
    assert out["from_cache"].sum() == k
    prompts = [
        f"Case {i}: chest pain and fever, heart rate {60 + 3 * i}. Should the patient receive immediate emergency care?"
        for i in range(24)
    ]
    (model, tok), _ = llm.load_model(str(d))
    fresh = TransformersScorer(model, tok, batch_size=24).score(
        prompts, system="Answer only Yes or No.", cache=False, progress=False
    )
    np.testing.assert_allclose(out["p_yes"], fresh["p_yes"], atol=1e-5)


# ---------------------------------------------------------------- settings


def test_defaults_come_from_site_settings(tiny, tmp_path, monkeypatch):
    d, _, _ = tiny
    monkeypatch.setenv("FAIRLIB_LLM_MODEL", str(d))
    monkeypatch.setenv("FAIRLIB_CACHE_DIR", str(tmp_path / "cachedir"))
    monkeypatch.setenv("FAIRLIB_LLM_SERVER_URL", "")
    sc = TransformersScorer.from_pretrained()
    assert sc.model_label == d.name and sc.model_id.startswith(f"{d.name}@files-sha256:")
    assert llm.default_cache_path() == tmp_path / "cachedir" / "llm_answers.sqlite"
    sc.score(PROMPTS[:2], system=SYSTEM, progress=False)
    assert len(AnswerCache(llm.default_cache_path())) == 2
    monkeypatch.setenv("FAIRLIB_LLM_SERVER_URL", "http://localhost:1/v1")
    with pytest.raises(FairlibInputError, match="`llm_server_url`"):
        TransformersScorer.from_pretrained()


def test_unknown_hub_id_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("FAIRLIB_LLM_SERVER_URL", "")
    with pytest.raises(FairlibInputError, match="fairlib never downloads models"):
        llm.load_model("no-such-org/no-such-model")


# ---------------------------------------------------------------- candidate answers (option_scores)


def brute_option_logprob(model, tok, prompt, option, system=SYSTEM):
    "Independent: one unbatched forward over template + option tokens, log-softmax in float64."
    ids = tok(llm.chat_prompt(tok, prompt, system=system), add_special_tokens=False)["input_ids"]
    o = tok(option, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([ids + o])).logits[0].double(), -1)
    return sum(lp[len(ids) - 1 + j, t].item() for j, t in enumerate(o))


def test_option_scores_single_token_equal_first_position(tiny):
    _, model, tok = tiny
    opts = ("Yes", "no", "YES")
    assert all(len(tok(o, add_special_tokens=False)["input_ids"]) == 1 for o in opts)
    r = TransformersScorer(model, tok, batch_size=2).option_scores(
        PROMPTS, opts, system=SYSTEM, cache=False
    )
    assert r.method == "first-token"
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
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=tok.pad_token_id,
            )
        q = softmax(g.scores[0][0].double().numpy())
        ids = [tok(o, add_special_tokens=False)["input_ids"][0] for o in opts]
        np.testing.assert_allclose(r.probs[i], q[ids] / q[ids].sum(), atol=1e-5)
        assert abs(r.option_mass[i] - q[ids].sum()) < 1e-6
    assert r.choice == [opts[j] for j in r.probs.argmax(1)]


def test_option_scores_multi_token_full_continuation(tiny, tmp_path):
    _, model, tok = tiny
    opts = ("1", "2", "level three", "Nope")
    lens = [len(tok(o, add_special_tokens=False)["input_ids"]) for o in opts]
    assert max(lens) >= 2 and len(set(lens)) >= 2  # really mixed lengths
    sc = TransformersScorer(model, tok, batch_size=3)
    r = sc.option_scores(PROMPTS, opts, system=SYSTEM, cache=tmp_path / "c.sqlite")
    want = np.array([[brute_option_logprob(model, tok, p, o) for o in opts] for p in PROMPTS])
    np.testing.assert_allclose(r.logprobs, want, atol=1e-5)
    np.testing.assert_allclose(r.probs.sum(1), 1, atol=1e-12)
    assert r.method == "full-continuation" and not r.table["from_cache"].any()
    again = sc.option_scores(PROMPTS, opts, system=SYSTEM, cache=tmp_path / "c.sqlite")
    assert again.table["from_cache"].all() and np.array_equal(again.logprobs, r.logprobs)
    # another option set, order or system message is another answer
    assert (
        not sc.option_scores(PROMPTS, opts[::-1], system=SYSTEM, cache=tmp_path / "c.sqlite")
        .table["from_cache"]
        .any()
    )
    # the P(Yes) cache and the option cache do not collide
    assert not sc.score(PROMPTS, system=SYSTEM, cache=tmp_path / "c.sqlite", progress=False)[
        "from_cache"
    ].any()


def test_option_scores_refuses_overlapping_options(tiny):
    _, model, tok = tiny
    sc = TransformersScorer(model, tok)
    a, b = "Yes", "Yesterday"
    assert (
        tok(b, add_special_tokens=False)["input_ids"][:1]
        == tok(a, add_special_tokens=False)["input_ids"]
    )
    with pytest.raises(FairlibInputError, match="token prefix"):
        sc.option_scores(PROMPTS[:1], (a, b), system=SYSTEM, cache=False)


# ---------------------------------------------------------------- LoRA adapters


@pytest.fixture(scope="module")
def adapter_dirs(tiny, tmp_path_factory):
    from peft import LoraConfig, get_peft_model

    d, _, _ = tiny
    out = tmp_path_factory.mktemp("lora")
    pms = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        base = llm.make_tiny_model(seed=0)[0]
        pm = get_peft_model(
            base,
            LoraConfig(
                r=4,
                lora_alpha=8,
                target_modules=["q_proj", "v_proj", "down_proj"],
                init_lora_weights=False,
            ),
        )
        pm.save_pretrained(out / f"a{seed}")
        pms.append(pm.eval())
    return d, out / "a1", out / "a2", pms


def test_adapter_loads_on_top_and_is_keyed(adapter_dirs, tmp_path):
    d, a1, a2, (pm1, _) = adapter_dirs
    db = tmp_path / "c.sqlite"
    base = TransformersScorer.from_pretrained(str(d), cache=db)
    s1 = TransformersScorer.from_pretrained(str(d), adapter=a1, cache=db)
    s1u = TransformersScorer.from_pretrained(str(d), adapter=a1, merge_adapter=False, cache=db)
    s2 = TransformersScorer.from_pretrained(str(d), adapter=str(a2), cache=db)
    assert len({base.model_id, s1.model_id, s1u.model_id, s2.model_id}) == 4
    assert s1.model_id.startswith(base.model_id + "+lora:a1@sha256:") and "adapter" in s1.provenance
    b = base.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    r1 = s1.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    r1u = s1u.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    assert (
        not r1["from_cache"].any() and np.abs(r1["p_yes"] - b["p_yes"]).max() > 1e-3
    )  # the adapter matters
    np.testing.assert_allclose(r1["p_yes"], r1u["p_yes"], atol=1e-5)  # merged == unmerged
    for i, p in enumerate(PROMPTS):  # == peft's own forward
        ids = torch.tensor([s1.encode([s1.format(p, system=SYSTEM)])[0]])
        with torch.no_grad():
            lg = pm1(input_ids=ids).logits[0, -1]
        assert (
            abs(r1["p_yes"][i] - yes_no_probability(lg, s1.ids["yes"], s1.ids["no"])[0][0]) < 1e-5
        )
    # the adapter's bytes are its identity
    w = a1 / "adapter_model.safetensors"
    old = llm.adapter_identity(a1)
    w.write_bytes(w.read_bytes()[:-1] + b"\x01")
    assert llm.adapter_identity(a1) != old


def test_adapter_bad_paths(tiny, tmp_path):
    d, _, _ = tiny
    with pytest.raises(FairlibInputError, match="`adapter`.*directory"):
        llm.load_model(str(d), adapter=tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FairlibInputError, match="`adapter`.*adapter_config.json"):
        llm.load_model(str(d), adapter=tmp_path / "empty")


# ---------------------------------------------------------------- what the answer key leaves out


def test_batch_composition_is_within_documented_tolerance(tiny, tmp_path):
    """The key deliberately ignores batch composition and prefix sharing: answers computed alone, in
    different batches, with and without the shared prefix agree within llm.ANSWER_TOLERANCE."""
    _, model, tok = tiny
    system = "Answer only Yes or No. Read the case carefully."
    runs = [
        TransformersScorer(model, tok, batch_size=bs, share_prefix=sp)
        .score(pr, system=system, cache=False, progress=False)["p_yes"]
        .to_numpy()
        for bs, sp, pr in [
            (1, False, PROMPTS),
            (5, True, PROMPTS),
            (2, True, PROMPTS),
            (3, False, PROMPTS),
        ]
    ]
    alone = np.array(
        [
            TransformersScorer(model, tok).score([p], system=system, cache=False, progress=False)[
                "p_yes"
            ][0]
            for p in PROMPTS
        ]
    )
    for r in runs:
        assert np.abs(r - alone).max() < llm.ANSWER_TOLERANCE
    # and the key is the same whatever the batch: a batch-of-5 answer is served to a batch-of-1 run
    db = tmp_path / "c.sqlite"
    TransformersScorer(model, tok, batch_size=5).score(
        PROMPTS, system=system, cache=db, progress=False
    )
    assert (
        TransformersScorer(model, tok, batch_size=1, share_prefix=False)
        .score(PROMPTS, system=system, cache=db, progress=False)["from_cache"]
        .all()
    )


def test_corrupt_cache_file_is_a_clear_error(tiny, tmp_path):
    _, model, tok = tiny
    sc = TransformersScorer(model, tok)
    db = tmp_path / "answers.sqlite"
    sc.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    AnswerCache(db).close()
    data = db.read_bytes()
    for name, payload in [
        ("garbage", b"not a database at all " * 50),
        ("truncated", data[: len(data) // 3]),
        ("empty-header", b"SQLite format 3\x00" + b"\x00" * 200),
    ]:
        bad = tmp_path / f"{name}.sqlite"
        bad.write_bytes(payload)
        with pytest.raises(
            llm.CorruptCacheError, match=r"`cache`.*" + name + r"\.sqlite.*delete it"
        ):
            sc.score(PROMPTS, system=SYSTEM, cache=bad, progress=False)
        bad.unlink()
        assert not sc.score(PROMPTS, system=SYSTEM, cache=bad, progress=False)[
            "from_cache"
        ].any()  # the fix works


def test_nan_logits_are_not_called_underflow(tiny):
    _, model, tok = tiny
    sc = TransformersScorer(model, tok)
    sc.logits_last = lambda b, pre=None: torch.full(
        (len(b), llm.cpu._n_logits(model)), float("nan")
    )
    df = sc.score(PROMPTS[:2], system=SYSTEM, cache=False, progress=False)
    assert df["p_yes"].isna().all() and df["reason"].str.contains("not a number").all()
    assert (df["note"] == df["reason"]).all()


# ---------------------------------------------------------------- CPU kernels: oneDNN packed, fused linear layers
needs_onednn = pytest.mark.skipif(
    not llm.onednn_available(), reason="this PyTorch build has no oneDNN linear kernels"
)


@needs_onednn
def test_onednn_kernel_is_the_aten_answer_and_actually_runs(tiny, monkeypatch):
    "Packed, fused (q/k/v, gate/up) oneDNN layers give PyTorch's default answers to float rounding, and are used."
    model, tok = llm.make_tiny_model(seed=3)
    ref = TransformersScorer(model, tok, cpu_kernel="aten", batch_size=2)
    assert ref.cpu_kernel == "aten" and not getattr(model, "_fairlib_packed", None)
    a = ref.score(PROMPTS, system=SYSTEM, cache=False, progress=False)
    oa = ref.option_scores(PROMPTS[:3], ["Yes", "No"], system=SYSTEM)
    multi = [
        "very likely yes",
        "not at all",
    ]  # multi-token options: the last layer keeps > 1 position
    om_ref = ref.option_scores(PROMPTS[:3], multi, system=SYSTEM, cache=False)
    calls = []
    orig = llm.cpu._Packed.__call__
    monkeypatch.setattr(
        llm.cpu._Packed,
        "__call__",
        lambda self, x, other=None: calls.append(1) or orig(self, x, other),
    )
    sc = TransformersScorer(model, tok, batch_size=2)
    assert (
        sc.cpu_kernel == "onednn"
        and "cpu_kernel='onednn'" in repr(sc)
        and sc.provenance["cpu_kernel"] == "onednn"
    )
    groups = model._fairlib_packed
    n_layers = model.config.num_hidden_layers
    assert len(groups) == 5 * n_layers  # qkv, SiLU(gate), up x SiLU(gate), down, o_proj per layer
    assert sorted(len(g.linears) for g in groups).count(3) == n_layers
    assert [g.post for g in groups].count("swish") == n_layers and [g.post for g in groups].count(
        "mul"
    ) == n_layers
    assert model._fairlib_tail_layer is model.model.layers[-1]
    assert set(model.state_dict()) == set(
        llm.make_tiny_model(seed=3)[0].state_dict()
    )  # nothing registered on the model
    tail_calls, layer = [], model.model.layers[-1]
    tail_fwd = layer.forward  # count the cut's calls (and the positions it keeps)
    layer.forward = lambda *a, **k: (
        tail_calls.append(layer.__dict__.get("_fairlib_keep")),
        tail_fwd(*a, **k),
    )[1]
    b = sc.score(PROMPTS, system=SYSTEM, cache=False, progress=False)
    ob = sc.option_scores(PROMPTS[:3], ["Yes", "No"], system=SYSTEM)
    om = sc.option_scores(PROMPTS[:3], multi, system=SYSTEM, cache=False)
    layer.forward = tail_fwd
    assert calls, "the packed kernel was never called"
    assert 1 in tail_calls and any(k is not None and k > 1 for k in tail_calls), tail_calls
    np.testing.assert_allclose(b["p_yes"], a["p_yes"], atol=llm.ANSWER_TOLERANCE, rtol=0)
    np.testing.assert_allclose(ob.probs, oa.probs, atol=llm.ANSWER_TOLERANCE, rtol=0)
    np.testing.assert_allclose(om.logprobs, om_ref.logprobs, atol=1e-4, rtol=0)
    assert sc._key_extra() == {
        "cpu_linear": "onednn",
        "cpu_path": "silu*up fused, last layer cut, causal attention in 64-query chunks",
    }
    assert ref._key_extra() == {}  # the two never share answers


@needs_onednn
def test_onednn_last_layer_cut_only_where_the_layer_has_the_assumed_layout(tiny):
    "A last layer that is not pre-norm sequential (here: attention and MLP in parallel) fails the check and runs whole."
    model, tok = llm.make_tiny_model(seed=8)
    last = model.model.layers[-1]

    class Parallel(type(last)):
        def forward(self, hidden_states, **kw):
            h = self.input_layernorm(hidden_states)
            return hidden_states + self.self_attn(hidden_states=h, **kw)[0] + self.mlp(h)

    last.__class__ = Parallel
    with torch.no_grad():  # random init is near identity: make the layer matter
        for lin in (last.self_attn.o_proj, last.mlp.down_proj, last.mlp.up_proj):
            lin.weight.mul_(20.0)
    ref = TransformersScorer(model, tok, cpu_kernel="aten").score(
        PROMPTS, system=SYSTEM, cache=False, progress=False
    )
    sc = TransformersScorer(model, tok)
    assert sc.cpu_kernel == "onednn" and getattr(model, "_fairlib_tail_layer", None) is None
    assert "forward" not in last.__dict__
    assert sc._key_extra()["cpu_path"].startswith("silu*up fused, causal")
    got = sc.score(PROMPTS, system=SYSTEM, cache=False, progress=False)
    np.testing.assert_allclose(got["p_yes"], ref["p_yes"], atol=llm.ANSWER_TOLERANCE, rtol=0)


@needs_onednn
def test_onednn_packed_weights_follow_weight_changes_and_sharing():
    """A weight changed in place (even through .data) is repacked before the next call; an aten scorer on the same
    model unpacks."""
    model, tok = llm.make_tiny_model(seed=4)
    sc = TransformersScorer(model, tok)
    before = sc.score(PROMPTS, system=SYSTEM, cache=False, progress=False)["p_yes"].to_numpy()
    model.model.layers[0].mlp.up_proj.weight.data.mul_(
        3.0
    )  # .data: the version counter does not move
    model.model.layers[1].self_attn.k_proj.weight.data.add_(0.5)
    after = sc.score(PROMPTS, system=SYSTEM, cache=False, progress=False)["p_yes"].to_numpy()
    plain = TransformersScorer(model, tok, cpu_kernel="aten")
    truth = plain.score(PROMPTS, system=SYSTEM, cache=False, progress=False)["p_yes"].to_numpy()
    assert not model._fairlib_packed  # the aten scorer unpacked the shared model
    assert np.abs(after - before).max() > 1e-3  # the change matters ...
    np.testing.assert_allclose(after, truth, atol=llm.ANSWER_TOLERANCE, rtol=0)  # ... and was seen
    again = sc.score(PROMPTS, system=SYSTEM, cache=False, progress=False)["p_yes"].to_numpy()
    assert model._fairlib_packed  # repacked for the oneDNN scorer's call
    np.testing.assert_allclose(again, truth, atol=llm.ANSWER_TOLERANCE, rtol=0)


@needs_onednn
def test_onednn_packed_layers_step_aside_for_gradients():
    "With gradients on (training, LoRA) the original layers run: same output, and gradients reach weights and inputs."
    model, tok = llm.make_tiny_model(seed=5)
    ids = torch.as_tensor([tok("Chest pain. Yes or no?")["input_ids"]])
    with torch.no_grad():
        ref = model(input_ids=ids).logits
    llm.pack_cpu_linears(model)
    with torch.no_grad():
        packed = model(input_ids=ids).logits
    torch.testing.assert_close(packed, ref, atol=1e-5, rtol=1e-5)
    emb = model.get_input_embeddings()(ids).detach().requires_grad_(True)
    out = model(inputs_embeds=emb).logits
    out[0, -1].sum().backward()
    w = model.model.layers[0].self_attn.q_proj.weight
    assert w.grad is not None and float(w.grad.abs().sum()) > 0 and float(emb.grad.abs().sum()) > 0
    torch.testing.assert_close(out.detach(), ref, atol=1e-5, rtol=1e-5)
    llm.cpu._unpack_cpu_linears(model)
    assert all("forward" not in m.__dict__ for m in model.modules())


def _mask(B, Lq, S, pads):
    "Bool SDPA mask (B, 1, Lq, S): causal with the queries at the last Lq keys, row b's first pads[b] keys hidden."
    off = S - Lq
    m = torch.arange(S)[None, :] <= (off + torch.arange(Lq))[:, None]
    m = m[None, None].repeat(B, 1, 1, 1)
    for b, p in enumerate(pads):
        m[b, :, :, :p] = False
    return m


def test_chunked_attention_is_sdpa_attention():
    "Causal chunks of queries on the keys they can see = transformers' SDPA attention (padding, a cached prefix, GQA)."
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    g = torch.Generator().manual_seed(0)
    module = torch.nn.Module()
    module.num_key_value_groups = 3
    module.is_causal = True
    for Lq, S, pads in [
        (150, 150, [0, 37]),
        (130, 170, [5, 60]),
        (64, 64, [0, 3]),
        (200, 211, [0, 0]),
    ]:
        q = torch.randn(2, 6, Lq, 16, generator=g)
        k = torch.randn(2, 2, S, 16, generator=g)
        v = torch.randn(2, 2, S, 16, generator=g)
        m = _mask(2, Lq, S, pads)
        ref = sdpa_attention_forward(module, q, k, v, m, scaling=0.25)[0]
        got = llm.cpu._chunked_sdpa(module, q, k, v, m, scaling=0.25)[0]
        assert got.shape == ref.shape == (2, Lq, 6, 16)
        keep = m[:, 0].any(-1)  # queries that see at least one key
        torch.testing.assert_close(got[keep], ref[keep], atol=2e-6, rtol=1e-5)
    # no mask (unpadded, no cache: SDPA's own is_causal) is cut the same way
    q = torch.randn(2, 6, 150, 16, generator=g)
    k = torch.randn(2, 2, 150, 16, generator=g)
    v = torch.randn(2, 2, 150, 16, generator=g)
    torch.testing.assert_close(
        llm.cpu._chunked_sdpa(module, q, k, v, None, scaling=0.25)[0],
        sdpa_attention_forward(module, q, k, v, None, scaling=0.25)[0],
        atol=2e-6,
        rtol=1e-5,
    )
    # a mask that lets a query see a later key (bidirectional) is not cut: same answer as SDPA on the whole mask
    m = torch.ones(2, 1, 150, 150, dtype=torch.bool)
    q = torch.randn(2, 6, 150, 16, generator=g)
    k = torch.randn(2, 2, 150, 16, generator=g)
    v = torch.randn(2, 2, 150, 16, generator=g)
    torch.testing.assert_close(
        llm.cpu._chunked_sdpa(module, q, k, v, m, scaling=0.25)[0],
        sdpa_attention_forward(module, q, k, v, m, scaling=0.25)[0],
        atol=1e-6,
        rtol=1e-6,
    )


@needs_onednn
def test_onednn_chunked_attention_on_long_padded_prompts(monkeypatch):
    """Prompts longer than a chunk, of mixed lengths (left padding) with a shared prefix: chunked = PyTorch's default
    path."""
    model, tok = llm.make_tiny_model(seed=9)
    long = [
        " ".join(["chest pain and shortness of breath"] * r) + f" case {i}. Admit?"
        for i, r in enumerate([9, 14, 20, 11, 17])
    ]
    ref = TransformersScorer(model, tok, cpu_kernel="aten", batch_size=3).score(
        long, system=SYSTEM, cache=False, progress=False
    )
    sc = TransformersScorer(model, tok, batch_size=3)
    assert sc.cpu_kernel == "onednn" and model._fairlib_chunked_attention
    assert len(sc.encode([sc.format(long[2], system=SYSTEM)])[0]) > 2 * llm.ATTENTION_CHUNK
    seen, orig = [], torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(
        torch.nn.functional,
        "scaled_dot_product_attention",
        lambda q, *a, **k: (seen.append(q.shape[2]), orig(q, *a, **k))[1],
    )
    got = sc.score(long, system=SYSTEM, cache=False, progress=False)
    assert seen and max(seen) <= llm.ATTENTION_CHUNK and len(set(seen)) > 1, sorted(
        set(seen)
    )  # chunks really ran
    np.testing.assert_allclose(got["p_yes"], ref["p_yes"], atol=llm.ANSWER_TOLERANCE, rtol=0)
    assert model.config._attn_implementation == "sdpa"  # restored after every forward
    assert "64-query chunks" in sc._key_extra()["cpu_path"]


@needs_onednn
def test_onednn_without_silu_fusion_is_the_earlier_packing(tiny):
    "fuse_silu=False (bench_llm's ablation): gate/up as one product, SiLU in PyTorch; the answer key says so."
    model, tok = llm.make_tiny_model(seed=10)
    ref = TransformersScorer(model, tok, cpu_kernel="aten").score(
        PROMPTS, system=SYSTEM, cache=False, progress=False
    )
    llm.pack_cpu_linears(model, fuse_silu=False)
    sc = TransformersScorer(model, tok)  # keeps the packing it finds
    assert len(model._fairlib_packed) == 4 * model.config.num_hidden_layers
    assert not any(g.post != "none" for g in model._fairlib_packed)
    assert sc._key_extra()["cpu_path"].startswith("gate/up one product, last layer cut")
    got = sc.score(PROMPTS, system=SYSTEM, cache=False, progress=False)
    np.testing.assert_allclose(got["p_yes"], ref["p_yes"], atol=llm.ANSWER_TOLERANCE, rtol=0)


def test_cpu_kernel_bad_input_names_the_argument(tiny):
    model, tok = llm.make_tiny_model(seed=6)
    with pytest.raises(FairlibInputError, match="cpu_kernel"):
        TransformersScorer(model, tok, cpu_kernel="mkl")
    with pytest.raises(FairlibInputError, match="cpu_kernel.*precision is 'bf16'"):
        TransformersScorer(model.to(torch.bfloat16), tok, cpu_kernel="onednn")
    assert TransformersScorer(model, tok).cpu_kernel == "aten"  # auto: bf16 stays on PyTorch's path


def test_pack_cpu_linears_bad_input_names_the_argument():
    with pytest.raises(FairlibInputError, match="model.*torch.nn.Module"):
        llm.pack_cpu_linears("bundled")
    with pytest.raises(FairlibInputError, match="fuse_silu.*True or False"):
        llm.pack_cpu_linears(torch.nn.Linear(2, 2), fuse_silu="yes")
    assert llm.refresh_cpu_linears(torch.nn.Linear(2, 2)) == 0  # nothing packed: nothing to refresh
