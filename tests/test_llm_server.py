"""fairlib.llm_server: the OpenAI-compatible backend.

Part 1 runs against stub HTTP servers on 127.0.0.1 (retries, backoff, timeouts, malformed answers,
bounded concurrency, the answer cache, what a request carries: token ids or text). Part 2 starts a REAL
llama.cpp server process on 127.0.0.1 serving the bundled GGUF and compares its P(Yes) with the local
transformers scorer on the same prompts. Part 2 skips only when `llama_cpp` (pip install
"llama-cpp-python[server]") is missing.
"""

import importlib.util
import json
import math
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from types import SimpleNamespace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

import fairlib.llm as llm
from fairlib.core import FairlibInputError
from fairlib.llm.scorer import chat_prompt
from fairlib.llm.server import (
    LLMServerError,
    ServerScorer,
    first_top_logprobs,
    p_yes_from_top,
    post_json,
)

TMPL = "{% for m in messages %}<{{m.role}}>{{m.content}}{% endfor %}<assistant>"
SYSTEM = "Answer only Yes or No."


def completion(top: dict) -> dict:
    return {"choices": [{"text": "x", "logprobs": {"tokens": ["x"], "top_logprobs": [top]}}]}


class Stub:
    """A loopback HTTP server whose POST behaviour is `mode`: 'ok', 'fail:N' (N x 503 then ok), 'always503',
    'slow' (sleeps past the client's timeout), 'badjson', 'nologprobs', '400', 'textonly' (refuses a prompt that
    is not a string with HTTP 500 and a validation error, as llama-cpp-python's server does), 'textonly422' (the same
    with HTTP 422). Records requests and peak concurrency."""

    def __init__(self, mode="ok", delay=0.0):
        self.mode, self.delay, self.requests, self.active, self.peak = mode, delay, [], 0, 0
        self.lock = threading.Lock()
        stub = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, code, body: bytes):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(200, json.dumps({"data": [{"id": "stub-model"}]}).encode())

            def do_POST(self):
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub.lock:
                    stub.requests.append(req)
                    n = len(stub.requests)
                    stub.active += 1
                    stub.peak = max(stub.peak, stub.active)
                try:
                    time.sleep(stub.delay)
                # leave the count before answering: the client may send its next request as soon as it reads this one
                finally:
                    with stub.lock:
                        stub.active -= 1
                m = stub.mode
                if m.startswith("fail:") and n <= int(m.split(":")[1]) or m == "always503":
                    return self._send(503, b'{"error": "overloaded"}')
                if m == "slow":
                    time.sleep(1.5)
                    return self._send(200, b"{}")
                if m == "badjson":
                    return self._send(200, b"<html>not json</html>")
                if m == "nologprobs":
                    return self._send(200, json.dumps({"choices": [{"text": "Yes"}]}).encode())
                if m == "400":
                    return self._send(400, b'{"error": "bad model"}')
                if m.startswith("textonly") and not isinstance(req.get("prompt"), str):
                    if m == "textonly422":  # what FastAPI answers by default
                        return self._send(
                            422, b'{"detail": [{"type": "string_type", "loc": ["body", "prompt"]}]}'
                        )
                    # llama-cpp-python 0.3.36's own answer (its error handler turns the validation error into a 500)
                    msg = "4 validation errors:\n  {'type': 'string_type', 'loc': ('body', 'prompt', 'str')}"
                    return self._send(500, json.dumps({"error": {"message": msg}}).encode())
                text = req.get("prompt", "")
                p = 0.8 if "pain" in text else 0.3
                self._send(
                    200,
                    json.dumps(
                        completion(
                            {
                                "Yes": math.log(0.9 * p),
                                " no": math.log(0.9 * (1 - p)),
                                "Maybe": math.log(0.05),
                            }
                        )
                    ).encode(),
                )

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.srv.server_port}/v1"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def stub():
    made = []

    def make(mode="ok", delay=0.0):
        s = Stub(mode, delay)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


PROMPTS = ["Chest pain and fever.", "Sprained ankle.", "Chest pain, again.", "Headache."]


def test_p_yes_from_stub_and_request_shape(stub):
    s = stub()
    sc = ServerScorer(s.url, chat_template=TMPL, n_jobs=2)
    assert sc.model == "stub-model" and sc.model_id == f"server:{s.url}#stub-model"
    df = sc.score(PROMPTS, system=SYSTEM, cache=False, progress=False)
    np.testing.assert_allclose(df["p_yes"], [0.8, 0.3, 0.8, 0.3], atol=1e-12)
    np.testing.assert_allclose(df["yes_no_mass"], 0.9, atol=1e-12)  # the top-k's yes+no coverage
    req = s.requests[0]
    assert (
        req["max_tokens"] == 1
        and req["temperature"] == 0
        and req["logprobs"] == 20
        and req["model"] == "stub-model"
    )
    assert req["prompt"].startswith("<system>" + SYSTEM) and req["prompt"].endswith("<assistant>")


def test_retries_then_succeeds_with_backoff(stub):
    s = stub("fail:2")
    waits = []
    out = post_json(
        s.url + "/completions", {"prompt": "pain"}, max_retries=3, backoff=0.25, sleep=waits.append
    )
    assert len(s.requests) == 3 and waits == [0.25, 0.5]  # exponential backoff
    assert p_yes_from_top(first_top_logprobs(out, api="completions"))[0] == pytest.approx(0.8)


def test_gives_up_after_max_retries(stub):
    s = stub("always503")
    with pytest.raises(LLMServerError, match=r"failed 3 time\(s\).*HTTP 503"):
        post_json(s.url + "/completions", {}, max_retries=2, backoff=0.0)
    assert len(s.requests) == 3


def test_client_error_is_not_retried(stub):
    s = stub("400")
    with pytest.raises(LLMServerError, match="HTTP 400.*bad model"):
        post_json(s.url + "/completions", {}, max_retries=5, backoff=0.0)
    assert len(s.requests) == 1


def test_timeout_is_a_clear_error(stub):
    s = stub("slow")
    t = time.perf_counter()
    with pytest.raises(LLMServerError, match="timed out after 0.2 s"):
        post_json(s.url + "/completions", {}, timeout=0.2, max_retries=1, backoff=0.0)
    assert time.perf_counter() - t < 5


def test_malformed_answers(stub):
    with pytest.raises(LLMServerError, match="not JSON"):
        ServerScorer(stub("badjson").url, model="m", chat_template=TMPL).score(
            ["x"], system=SYSTEM, cache=False, progress=False
        )
    with pytest.raises(LLMServerError, match="top_logprobs.*logits_all"):
        ServerScorer(stub("nologprobs").url, model="m", chat_template=TMPL).score(
            ["x"], system=SYSTEM, cache=False, progress=False
        )


def test_unreachable_server_fails_after_retries():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]  # a port nobody listens on
    sc = ServerScorer(
        f"http://127.0.0.1:{port}/v1",
        model="m",
        chat_template=TMPL,
        max_retries=1,
        backoff=0.01,
        timeout=2,
    )
    with pytest.raises(LLMServerError, match="failed 2 time"):
        sc.score(["x"], system=SYSTEM, cache=False, progress=False)


def test_concurrency_is_bounded(stub):
    s = stub(delay=0.15)
    sc = ServerScorer(s.url, chat_template=TMPL, n_jobs=3, chunk_size=9)
    sc.score([f"case {i} pain" for i in range(12)], system=SYSTEM, cache=False, progress=False)
    assert len(s.requests) == 12 and 2 <= s.peak <= 3


def test_cache_keyed_by_endpoint_model_and_k(stub, tmp_path):
    db = tmp_path / "c.sqlite"
    s1, s2 = stub(), stub()
    a = ServerScorer(s1.url, chat_template=TMPL)
    first = a.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    again = a.score(PROMPTS, system=SYSTEM, cache=db, progress=False)
    assert not first["from_cache"].any() and again["from_cache"].all() and len(s1.requests) == 4
    assert (
        not ServerScorer(s2.url, chat_template=TMPL)
        .score(PROMPTS, system=SYSTEM, cache=db, progress=False)["from_cache"]
        .any()
    )
    assert (
        not ServerScorer(s1.url, model="other", chat_template=TMPL)
        .score(PROMPTS, system=SYSTEM, cache=db, progress=False)["from_cache"]
        .any()
    )
    assert (
        not ServerScorer(s1.url, chat_template=TMPL, top_logprobs=5)
        .score(PROMPTS, system=SYSTEM, cache=db, progress=False)["from_cache"]
        .any()
    )


def test_option_scores_first_token(stub):
    s = stub()
    r = ServerScorer(s.url, chat_template=TMPL).option_scores(
        PROMPTS[:2], ["Yes", "no", "Perhaps"], system=SYSTEM, cache=False
    )
    np.testing.assert_allclose(r.probs[:, 0], [0.8, 0.3], atol=1e-12)
    assert (r.probs[:, 2] == 0).all() and r.method == "first-token-top-20"
    np.testing.assert_allclose(r.option_mass, 0.9, atol=1e-12)


def test_settings_key_and_scorer_from_settings(stub, monkeypatch):
    from fairlib.llm.server import scorer_from_settings

    s = stub()
    monkeypatch.setenv("FAIRLIB_LLM_SERVER_URL", s.url)
    sc = scorer_from_settings(chat_template=TMPL)
    assert isinstance(sc, ServerScorer) and sc.url == s.url
    monkeypatch.setenv("FAIRLIB_LLM_SERVER_URL", "")
    with pytest.raises(FairlibInputError, match="`url`.*llm_server_url"):
        ServerScorer(chat_template=TMPL)


@pytest.fixture(scope="module")
def gguf_tok():
    "The bundled model's Hugging Face tokenizer: the one the local scorer uses."
    from transformers import AutoTokenizer

    d, g = llm.bundled_model_path()
    return AutoTokenizer.from_pretrained(d, gguf_file=g)


DRIFT = "Likely conditions \n1. Chest pain\n2. Fever\nDoes this need care now?"  # " \n": llama.cpp merges it


def test_token_ids_sent_are_the_local_scorers(stub, gguf_tok):
    s = stub()
    sc = ServerScorer(s.url, tokenizer=gguf_tok)
    assert sc.prompt_format == "token_ids" and "token ids" in sc.provenance["prompt"]
    sc.score([DRIFT], system=SYSTEM, cache=False, progress=False)
    text = chat_prompt(gguf_tok, DRIFT, system=SYSTEM)
    local = llm.TransformersScorer.encode(SimpleNamespace(tokenizer=gguf_tok), [text])[
        0
    ]  # the local scorer's ids
    sent = s.requests[0]["prompt"]
    assert isinstance(sent, list) and sent == local and all(type(i) is int for i in sent)
    assert gguf_tok.decode(sent) == text  # they are the templated text, nothing added or lost


def test_text_mode_is_a_named_option(stub, gguf_tok):
    s = stub()
    sc = ServerScorer(s.url, tokenizer=gguf_tok, prompt_format="text")
    df = sc.score(["Chest pain.", "Sprained ankle."], system=SYSTEM, cache=False, progress=False)
    assert sorted(r["prompt"] for r in s.requests) == sorted(
        chat_prompt(gguf_tok, p, system=SYSTEM) for p in ["Chest pain.", "Sprained ankle."]
    )
    np.testing.assert_allclose(df["p_yes"], [0.8, 0.3], atol=1e-12)
    assert "server's own tokenizer" in sc.provenance["prompt"]
    assert (
        ServerScorer(s.url, chat_template=TMPL).prompt_format == "text"
    )  # no tokenizer: nothing to make ids with


@pytest.mark.parametrize("mode,status", [("textonly", 500), ("textonly422", 422)])
def test_refused_token_ids_point_to_text_mode(stub, gguf_tok, mode, status):
    s = stub(mode)
    with pytest.raises(
        LLMServerError, match=rf"(?s)HTTP {status}.*token ids.*prompt_format='text'"
    ):
        ServerScorer(s.url, tokenizer=gguf_tok, max_retries=3).score(
            ["x"], system=SYSTEM, cache=False, progress=False
        )
    assert len(s.requests) == 1  # a refusal is not retried
    df = ServerScorer(s.url, tokenizer=gguf_tok, prompt_format="text").score(
        ["pain"], system=SYSTEM, cache=False, progress=False
    )
    assert df["p_yes"].iloc[0] == pytest.approx(0.8)


def test_prompt_format_is_checked(stub, gguf_tok):
    s = stub()
    with pytest.raises(FairlibInputError, match="`prompt_format`.*'tokens'"):
        ServerScorer(s.url, tokenizer=gguf_tok, prompt_format="tokens")
    with pytest.raises(FairlibInputError, match="`prompt_format`.*tokenizer="):
        ServerScorer(s.url, chat_template=TMPL, prompt_format="token_ids")
    with pytest.raises(FairlibInputError, match="`prompt_format`.*api='chat'"):
        ServerScorer(s.url, api="chat", prompt_format="token_ids")
    assert ServerScorer(s.url, api="chat").prompt_format == "text"


def test_cache_keeps_token_ids_and_text_apart(stub, gguf_tok, tmp_path):
    db, s = tmp_path / "c.sqlite", stub()
    text = ServerScorer(s.url, tokenizer=gguf_tok, prompt_format="text")
    ids = ServerScorer(s.url, tokenizer=gguf_tok)
    assert not text.score(PROMPTS, system=SYSTEM, cache=db, progress=False)["from_cache"].any()
    assert not ids.score(PROMPTS, system=SYSTEM, cache=db, progress=False)["from_cache"].any()
    assert ids.score(PROMPTS, system=SYSTEM, cache=db, progress=False)["from_cache"].all()
    assert (
        len(s.requests) == 8 and [type(r["prompt"]) for r in s.requests] == [str] * 4 + [list] * 4
    )


def test_declared_constraints_refuse_bad_arguments(stub):
    from fairlib.constraints import declared
    from fairlib.llm import server

    resp = completion({"Yes": 0.0})
    assert p_yes_from_top(first_top_logprobs(resp, api="completions"))[0] == 1.0
    with pytest.raises(FairlibInputError, match="`api`.*first_top_logprobs.*'completion'"):
        first_top_logprobs(
            resp, api="completion"
        )  # a misspelt route is refused, not read as the chat shape
    with pytest.raises(FairlibInputError, match="`top`.*p_yes_from_top"):
        p_yes_from_top([("Yes", 0.0)])
    with pytest.raises(FairlibInputError, match="`timeout`.*post_json"):
        post_json(stub().url + "/completions", {}, timeout=float("inf"))
    with pytest.raises(
        FairlibInputError, match="`tokenizer`.*ServerScorer.*Hugging Face tokenizer; got 42"
    ):
        ServerScorer("http://127.0.0.1:9/v1", model="m", tokenizer=42)
    for name in server.__all__:
        f = getattr(server, name)
        if (
            callable(f)
            and not (isinstance(f, type) and issubclass(f, Exception))
            and name != "scorer_from_settings"
        ):
            assert declared(f), (
                name
            )  # scorer_from_settings takes only **kwargs, passed on to a declared class


# ---------------------------------------------------------------- a real llama.cpp server

HAVE_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None

# llama-cpp-python's server (0.3.x) takes `prompt` as text only: its request model is `str | list[str]`, so a list
# of token ids is refused with HTTP 422. OpenAI's completions API also defines a prompt given as token ids, and
# vLLM and llama.cpp's own `llama-server` accept it. The test server below is llama-cpp-python's, unchanged except
# that its request model also takes one list of ids (which its route hands to `Llama.create_completion`, whose
# token-list path adds no BOS): the same engine and GGUF, reachable in both forms, so one process compares both.
TOKEN_ID_SERVER = """
import sys
from typing import List, Union

from pydantic import field_validator
import llama_cpp.server.types as T


class TokenIdRequest(T.CreateCompletionRequest):
    prompt: Union[str, List[str], List[List[int]]] = ""

    @field_validator("prompt", mode="before")
    @classmethod
    def _one_id_list(cls, v):
        return [v] if isinstance(v, list) and v and all(type(i) is int for i in v) else v


T.CreateCompletionRequest = TokenIdRequest  # before the app module imports it
from llama_cpp.server.__main__ import main

main()
"""


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    if not HAVE_LLAMA_CPP:
        pytest.skip(
            'llama_cpp is not installed: pip install "llama-cpp-python[server]" (builds from source, '
            "~6-20 min on 2 cores) to run the real-server comparison"
        )
    d, g = llm.bundled_model_path()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            TOKEN_ID_SERVER,
            "--model",
            str(d / g),
            "--logits_all",
            "true",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"),
    )  # a file: a full pipe would block it
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180  # bounded wait for the server to come up
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"llama.cpp server exited: {log.read_text(errors='replace')[-2000:]}"
                )
            try:
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"llama.cpp server did not answer within 180 s: {log.read_text(errors='replace')[-1000:]}"
                    )
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def smol():
    return llm.TransformersScorer.from_pretrained("bundled", batch_size=3, cache=False)


ED = [
    "A 70-year-old man with crushing chest pain, heart rate 130, blood pressure 80/50. "
    "Does this patient need immediate emergency intervention?",
    "A 25-year-old with a sprained ankle, normal vital signs. Does this patient need immediate emergency intervention?",
    "Is the sky blue?",
]


def paper_prompts() -> list[str]:
    "Three ED-triage prompts in the paper's wording; its diagnosis block starts with ' \\n', which llama.cpp merges."
    from fairlib.mfarm.instrument import render_paper_prompt

    vitals = dict(temperature=102.4, heartrate=118.0, resprate=24.0, o2sat=94.0, sbp=96.0, dbp=58.0)
    fever = dict(age=48, chief_complaint="Fever", **vitals)
    fever["diagnoses"] = [
        "FEVER, UNSPECIFIED",
        "SEPSIS, UNSPECIFIED ORGANISM",
        "URINARY TRACT INFECTION",
    ]
    chest = dict(
        age=70, chief_complaint="Chest pain", diagnoses=["CHEST PAIN, UNSPECIFIED", "NSTEMI"]
    )
    chest |= dict(temperature=98.1, heartrate=130.0, resprate=22.0, o2sat=91.0, sbp=80.0, dbp=50.0)
    full = ["chief_complaint", "diagnoses", "vitals"]
    return [
        render_paper_prompt("ed_triage", "BASE", chest, full),
        render_paper_prompt("ed_triage", "Black_Female", fever, ["chief_complaint", "diagnoses"]),
        render_paper_prompt("ed_triage", "White_Male", fever, full),
    ]


# Measured (llama-cpp-python 0.3.36, 2 threads; bundled Q4_1 GGUF against transformers' dequantised fp32 weights;
# the paper system prompt) on the 6 prompts ED + paper_prompts(), |dP| served vs local:
#   token ids: 0.021 0.063 0.005 | 0.003 0.001 0.005   mean 0.016, max 0.063
#   text:      0.021 0.063 0.005 | 0.015 0.046 0.061   mean 0.035, max 0.063
# The first three are tokenised alike by both tokenizers (the max there is the quantised arithmetic); the last three
# are not, and sending text alone moves P(Yes) there by up to 0.055. On 12 prompts (ED + 9 paper prompts, 3 cases x
# 3 variants) token ids gave mean 0.015, max 0.063; text mean 0.025, max 0.063. Limits: the measured values + ~20%.
MEAN_TOL, MAX_TOL = 0.02, 0.075


@pytest.mark.slow
def test_real_llama_cpp_server_matches_transformers(llama_server, smol, tmp_path):
    from fairlib.mfarm.instrument import SYSTEM_PROMPT

    prompts = ED + paper_prompts()
    texts = [chat_prompt(smol.tokenizer, p, system=SYSTEM_PROMPT) for p in prompts]
    # which texts the server's own tokenizer splits as the local one does (llama-cpp-python's /extras/tokenize)
    base = llama_server.removesuffix("/v1")
    alike = np.array(
        [
            post_json(base + "/extras/tokenize", {"input": t})["tokens"] == smol.encode([t])[0]
            for t in texts
        ]
    )
    assert (
        alike.tolist() == [True] * 3 + [False] * 3
    )  # the paper prompts really exercise the difference

    sc = ServerScorer(llama_server, tokenizer=smol.tokenizer, n_jobs=2)
    assert sc.model.endswith(".gguf") and sc.prompt_format == "token_ids"
    local = smol.score(prompts, system=SYSTEM_PROMPT, cache=False, progress=False)
    served = sc.score(prompts, system=SYSTEM_PROMPT, cache=tmp_path / "c.sqlite", progress=False)
    dp = np.abs(local["p_yes"] - served["p_yes"]).to_numpy()
    assert dp.mean() < MEAN_TOL and dp.max() < MAX_TOL, dp.tolist()
    assert (dp > 0).any()  # really a different implementation
    # the top-20 covers (almost) all of the yes+no mass the full vocabulary has
    np.testing.assert_allclose(served["yes_no_mass"], local["yes_no_mass"], atol=0.05)

    # text mode on the same server: the server tokenises, so the answers move exactly where the tokens differ
    text = ServerScorer(llama_server, tokenizer=smol.tokenizer, n_jobs=2, prompt_format="text")
    as_text = text.score(prompts, system=SYSTEM_PROMPT, cache=tmp_path / "c.sqlite", progress=False)
    assert not as_text["from_cache"].any()  # token-id answers are not reused for text
    moved = np.abs(as_text["p_yes"] - served["p_yes"]).to_numpy()
    assert (moved[alike] < 1e-4).all() and (moved[~alike] > 1e-3).all(), moved.tolist()
    # the chat route (server-side template and tokenizer) reads what text mode sends: same answers
    chat = ServerScorer(llama_server, api="chat", n_jobs=2).score(
        prompts, system=SYSTEM_PROMPT, cache=False, progress=False
    )
    np.testing.assert_allclose(chat["p_yes"], as_text["p_yes"], atol=1e-4)
    again = sc.score(prompts, system=SYSTEM_PROMPT, cache=tmp_path / "c.sqlite", progress=False)
    assert again["from_cache"].all() and again["p_yes"].tolist() == served["p_yes"].tolist()
