"""Bad inputs to fairlib.llm and fairlib.llm_server: each is a FairlibInputError naming the argument
(or, for server failures, an LLMServerError saying what happened), never a raw torch / sqlite / urllib error."""

import numpy as np
import pytest

import fairlib.llm as llm
from fairlib.core import FairlibInputError
from fairlib.llm.cache import AnswerCache, CorruptCacheError
from fairlib.llm.scorer import OptionScores
from fairlib.llm.transformers import TransformersScorer
from fairlib.llm.server import ServerScorer, check_server_url

SYSTEM = "Answer only Yes or No."
TMPL = "{% for m in messages %}<{{m.role}}>{{m.content}}{% endfor %}<assistant>"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    model, tok = llm.make_tiny_model(d, seed=0)
    return d, TransformersScorer(model, tok, model_id="tiny")


def raises(arg, f, match=None):
    with pytest.raises(FairlibInputError) as e:
        f()
    assert f"`{arg}`" in str(e.value), str(e.value)
    if match:
        assert match in str(e.value), str(e.value)


# ------------------------------------------------------------------ precision
@pytest.mark.parametrize(
    "precision",
    ["fp8", "FP32", "", None, 32, "int2", "bnb3"],
    ids=["fp8", "upper-case", "empty", "none", "number", "int2", "bnb3"],
)
def test_bad_precision(precision):
    raises("precision", lambda: llm.check_precision(precision), "must be one of")


@pytest.mark.parametrize("precision", ["bnb16", "bnb8", "bnb4", "bnb4_nf4"])
def test_gpu_precision_on_cpu(precision, monkeypatch):
    monkeypatch.setattr(llm.loading, "_cuda_available", lambda: False)
    raises("precision", lambda: llm.precision_load_kwargs(precision), "needs a CUDA GPU")


# ------------------------------------------------------------------ prompts, system, options
@pytest.mark.parametrize(
    "prompts",
    [[], (), "   ", ["ok", ""], ["ok", 3], ["ok", None], 42, {"a": 1}],
    ids=[
        "empty-list",
        "empty-tuple",
        "blank-string",
        "blank-entry",
        "int-entry",
        "none-entry",
        "int",
        "dict",
    ],
)
def test_bad_prompts(tiny, prompts):
    _, sc = tiny
    raises("prompts", lambda: sc.score(prompts, system=SYSTEM, cache=False, progress=False))


@pytest.mark.parametrize("system", ["", "  ", 3, ["Answer"]], ids=["empty", "blank", "int", "list"])
def test_bad_system(tiny, system):
    _, sc = tiny
    raises("system", lambda: sc.score(["ok"], system=system, cache=False, progress=False))


@pytest.mark.parametrize(
    "options",
    ["Yes", ["Yes"], [], ["Yes", "Yes"], ["Yes", ""], ["Yes", 2], None],
    ids=["string", "one", "empty", "duplicate", "blank", "int", "none"],
)
def test_bad_options(tiny, options):
    _, sc = tiny
    raises("options", lambda: sc.option_scores(["ok"], options, system=SYSTEM, cache=False))


def test_option_prompts_empty(tiny):
    _, sc = tiny
    raises("prompts", lambda: sc.option_scores([], ["Yes", "no"], system=SYSTEM, cache=False))


def test_overlapping_options(tiny):
    _, sc = tiny
    raises(
        "options",
        lambda: sc.option_scores(["ok"], ["Yes", "Yesterday"], system=SYSTEM, cache=False),
        "token prefix",
    )


# ------------------------------------------------------------------ batch sizes and scorer settings
@pytest.mark.parametrize(
    "kw",
    [
        dict(batch_size=0),
        dict(batch_size=-3),
        dict(batch_size=2.5),
        dict(batch_size="8"),
        dict(batch_size=True),
        dict(max_batch_tokens=0),
        dict(max_batch_tokens=1.5),
        dict(min_prefix=0),
    ],
    ids=["bs-0", "bs-neg", "bs-float", "bs-str", "bs-bool", "mbt-0", "mbt-float", "min-prefix-0"],
)
def test_bad_scorer_settings(tiny, kw):
    d, sc = tiny
    arg = next(iter(kw))
    raises(arg, lambda: TransformersScorer(sc.model, sc.tokenizer, **kw))


def test_scorer_bad_precision_label(tiny):
    _, sc = tiny
    raises("precision", lambda: TransformersScorer(sc.model, sc.tokenizer, precision="int3"))


# ------------------------------------------------------------------ loading
def test_load_bad_name(tmp_path):
    raises("name_or_path", lambda: llm.load_model(""))


def test_load_bad_gguf_file(tiny):
    d, _ = tiny
    raises("gguf_file", lambda: llm.load_model(str(d), gguf_file="missing.gguf"), "is not a file")


def test_load_convert_gguf_must_be_a_bool(tiny):
    d, _ = tiny
    raises("convert_gguf", lambda: llm.load_model(str(d), convert_gguf="yes"))


def test_load_bad_device(tiny):
    d, _ = tiny
    raises("device", lambda: llm.load_model(str(d), device="tpu"))


def test_load_int8_dynamic_on_gpu_device(tiny):
    d, _ = tiny
    raises(
        "device",
        lambda: llm.load_model(str(d), precision="int8_dynamic", device="cuda"),
        "CPU only",
    )


@pytest.mark.parametrize(
    "adapter", ["missing-dir", "no-config", 3], ids=["missing", "no-config", "int"]
)
def test_load_bad_adapter(tiny, tmp_path, adapter):
    d, _ = tiny
    if adapter == "no-config":
        adapter = tmp_path / "empty"
        adapter.mkdir()
    elif adapter == "missing-dir":
        adapter = tmp_path / "nope"
    raises("adapter", lambda: llm.load_model(str(d), adapter=adapter))


def test_load_bad_merge_flag(tiny):
    d, _ = tiny
    raises("merge_adapter", lambda: llm.load_model(str(d), merge_adapter="yes"))


# ------------------------------------------------------------------ the cache
@pytest.mark.parametrize("cache", [3.5, ["a"], object()], ids=["float", "list", "object"])
def test_bad_cache_argument(tiny, cache):
    _, sc = tiny
    raises("cache", lambda: sc.score(["ok"], system=SYSTEM, cache=cache, progress=False))


def test_cache_is_a_directory(tmp_path):
    raises("cache", lambda: AnswerCache(tmp_path), "is a directory")


@pytest.mark.parametrize(
    "payload",
    [b"not a database" * 40, b"SQLite format 3\x00" + b"\xff" * 300],
    ids=["garbage", "broken-header"],
)
def test_corrupt_cache(tiny, tmp_path, payload):
    _, sc = tiny
    p = tmp_path / "answers.sqlite"
    p.write_bytes(payload)
    with pytest.raises(CorruptCacheError) as e:
        sc.score(["ok"], system=SYSTEM, cache=p, progress=False)
    assert "`cache`" in str(e.value) and str(p) in str(e.value) and "delete it" in str(e.value)


# ------------------------------------------------------------------ undefined values carry a reason
def test_undefined_p_yes_has_reason():
    p, y, n = llm.yes_no_probability(np.array([[0.0, -2000.0, -2000.0]]), [1], [2])
    assert np.isnan(p[0]) and "underflowed" in llm.scorer._p_yes_reason(p, y, n)[0]


def test_undefined_options_have_reason():
    r = OptionScores.from_logprobs(("A", "B"), [[-np.inf, -np.inf], [np.nan, -1.0]])
    assert np.isnan(r.probs).all() and r.choice == [None, None]
    assert "probability 0" in r.table["reason"][0] and "not a number" in r.table["reason"][1]


def test_bad_logits_shape():
    raises("logits", lambda: llm.yes_no_probability(np.zeros((2, 3, 4)), [0], [1]))


# ------------------------------------------------------------------ the served backend
@pytest.mark.parametrize(
    "url",
    [
        "",
        "localhost:8000",
        "ftp://127.0.0.1/v1",
        "http://",
        "http://h:99999/v1",
        "http://h:8000/v1/completions",
        "http://h:8000/v1?x=1",
        8000,
    ],
    ids=["empty", "no-scheme", "ftp", "no-host", "bad-port", "endpoint-not-base", "query", "int"],
)
def test_bad_server_url(url):
    raises("url", lambda: check_server_url(url))


@pytest.mark.parametrize(
    "kw,arg",
    [
        (dict(timeout=0), "timeout"),
        (dict(timeout=-1), "timeout"),
        (dict(timeout="10"), "timeout"),
        (dict(timeout=float("inf")), "timeout"),
        (dict(n_jobs=0), "n_jobs"),
        (dict(max_retries=-1), "max_retries"),
        (dict(backoff=-0.5), "backoff"),
        (dict(top_logprobs=0), "top_logprobs"),
        (dict(api="chat", top_logprobs=50), "top_logprobs"),
        (dict(api="generate"), "api"),
        (dict(chunk_size=0), "chunk_size"),
        (dict(model=""), "model"),
        (dict(precision=""), "precision"),
    ],
    ids=[
        "timeout-0",
        "timeout-neg",
        "timeout-str",
        "timeout-inf",
        "n_jobs-0",
        "retries-neg",
        "backoff-neg",
        "k-0",
        "k-too-big-chat",
        "api",
        "chunk-0",
        "model-empty",
        "precision-empty",
    ],
)
def test_bad_server_settings(kw, arg):
    kw = {"model": "m", "chat_template": TMPL, **kw}
    raises(arg, lambda: ServerScorer("http://127.0.0.1:9/v1", **kw))


def test_server_completions_needs_a_template():
    raises("tokenizer", lambda: ServerScorer("http://127.0.0.1:9/v1", model="m"))


def test_server_url_missing_from_settings(monkeypatch):
    monkeypatch.setenv("FAIRLIB_LLM_SERVER_URL", "")
    raises("url", lambda: ServerScorer(model="m", chat_template=TMPL), "llm_server_url")


def test_server_url_setting_malformed(monkeypatch):
    monkeypatch.setenv("FAIRLIB_LLM_SERVER_URL", "not a url")
    raises("url", lambda: ServerScorer(model="m", chat_template=TMPL))


def test_conversion_cache_bad_inputs(tmp_path):
    raises(
        "gguf_file", lambda: llm.converted_gguf(tmp_path, "missing.gguf", "0" * 64), "is not a file"
    )
    raises("sha256", lambda: llm.gguf_conversion_dir(tmp_path / "m.gguf", "not-a-hash"))
