"""fairlib.llm_server: the OpenAI-compatible backend.

Part 1 runs against stub HTTP servers on 127.0.0.1 (retries, backoff, timeouts, malformed answers,
bounded concurrency, the answer cache). Part 2 starts a REAL llama.cpp server process on 127.0.0.1
serving the bundled GGUF and compares its P(Yes) with the local transformers scorer on the same
prompts. Part 2 skips only when `llama_cpp` (pip install "llama-cpp-python[server]") is missing.
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

import fairlib.llm as llm
from fairlib.core import FairlibInputError
from fairlib.llm.server import LLMServerError, ServerScorer, first_top_logprobs, p_yes_from_top, post_json

TMPL = "{% for m in messages %}<{{m.role}}>{{m.content}}{% endfor %}<assistant>"
SYSTEM = "Answer only Yes or No."


def completion(top: dict) -> dict:
    return {"choices": [{"text": "x", "logprobs": {"tokens": ["x"], "top_logprobs": [top]}}]}


class Stub:
    """A loopback HTTP server whose POST behaviour is `mode`: 'ok', 'fail:N' (N x 503 then ok), 'always503',
    'slow' (sleeps past the client's timeout), 'badjson', 'nologprobs', '400'. Records requests and peak concurrency."""

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
                text = req.get("prompt", "")
                p = 0.8 if "pain" in text else 0.3
                self._send(
                    200,
                    json.dumps(
                        completion({"Yes": math.log(0.9 * p), " no": math.log(0.9 * (1 - p)), "Maybe": math.log(0.05)})
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
    assert req["max_tokens"] == 1 and req["temperature"] == 0 and req["logprobs"] == 20 and req["model"] == "stub-model"
    assert req["prompt"].startswith("<system>" + SYSTEM) and req["prompt"].endswith("<assistant>")


def test_retries_then_succeeds_with_backoff(stub):
    s = stub("fail:2")
    waits = []
    out = post_json(s.url + "/completions", {"prompt": "pain"}, max_retries=3, backoff=0.25, sleep=waits.append)
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
        f"http://127.0.0.1:{port}/v1", model="m", chat_template=TMPL, max_retries=1, backoff=0.01, timeout=2
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


# ---------------------------------------------------------------- a real llama.cpp server

HAVE_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None
ED = [
    "A 70-year-old man with crushing chest pain, heart rate 130, blood pressure 80/50. "
    "Does this patient need immediate emergency intervention?",
    "A 25-year-old with a sprained ankle, normal vital signs. Does this patient need immediate emergency intervention?",
    "Is the sky blue?",
]
# measured on the bundled Q4_1 model (llama.cpp's quantised kernels vs transformers' dequantised fp32 weights):
# mean |dP| 0.022, max 0.063 over 10 prompts (8 ED-triage prompts from fairlib.prompts + 2 short ones);
# on the 3 prompts below |dP| = 0.050, 0.063, 0.009 (mean 0.041). Tolerances: ~1.5x the largest measured.
MEAN_TOL, MAX_TOL = 0.06, 0.10


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
            "-m",
            "llama_cpp.server",
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
                raise RuntimeError(f"llama.cpp server exited: {log.read_text(errors='replace')[-2000:]}")
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


@pytest.mark.slow
def test_real_llama_cpp_server_matches_transformers(llama_server, smol, tmp_path):
    from fairlib.mfarm.instrument import SYSTEM_PROMPT

    sc = ServerScorer(llama_server, tokenizer=smol.tokenizer, n_jobs=2)
    assert sc.model.endswith(".gguf")
    local = smol.score(ED, system=SYSTEM_PROMPT, cache=False, progress=False)
    served = sc.score(ED, system=SYSTEM_PROMPT, cache=tmp_path / "c.sqlite", progress=False)
    dp = np.abs(local["p_yes"] - served["p_yes"])
    assert dp.mean() < MEAN_TOL and dp.max() < MAX_TOL, dp.tolist()
    assert (dp > 0).any()  # really a different implementation
    # the top-20 covers (almost) all of the yes+no mass the full vocabulary has
    np.testing.assert_allclose(served["yes_no_mass"], local["yes_no_mass"], atol=0.05)
    # the chat route (server-side template) reads the same text: same answers
    chat = ServerScorer(llama_server, api="chat", n_jobs=2).score(ED, system=SYSTEM_PROMPT, cache=False, progress=False)
    np.testing.assert_allclose(chat["p_yes"], served["p_yes"], atol=1e-4)
    again = sc.score(ED, system=SYSTEM_PROMPT, cache=tmp_path / "c.sqlite", progress=False)
    assert again["from_cache"].all() and again["p_yes"].tolist() == served["p_yes"].tolist()
