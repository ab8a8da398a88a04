"""llama.cpp's server as tokengauge relies on it, asked for real (xllamacpp and SmolLM2-135M).

What a client can learn of the window (``/props``, ``/v1/models``), how it can count a request
before sending it (``/apply-template`` then ``/tokenize``: exactly ``usage.prompt_tokens``), what
the stream's last chunk reports, and what an over-long request gets back.
"""

from __future__ import annotations

import copy
import json
import select
from collections.abc import Iterator
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from tests.harness.llama_cpp import (
    CONVERSATION,
    MODEL_ENV,
    TOKENIZE_FLAGS,
    TOOL_TEMPLATE,
    TOOLS,
    LlamaCpp,
    count_prompt,
    require_llama_cpp,
    running_llama_cpp,
    supported_platform,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "llamacpp"
CTX, PARALLEL = 512, 2
SLOT_CTX = CTX // PARALLEL
SIMPLE = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi"}]
CONVERSATION_BODY = {"messages": CONVERSATION}
JSON_HEADERS = {"Content-Type": "application/json"}


def _client(server: LlamaCpp) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=120)


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaCpp]:
    """The default server: Jinja on, the model's own template, 2 slots of 256 tokens."""
    with running_llama_cpp(CTX, PARALLEL) as server:
        yield server


@pytest.fixture(scope="module")
def legacy() -> Iterator[LlamaCpp]:
    """Jinja off (``--no-jinja``): llama.cpp's built-in ChatML formatter."""
    with running_llama_cpp(CTX, PARALLEL, jinja=False) as server:
        yield server


@pytest.fixture(scope="module")
def with_tools() -> Iterator[LlamaCpp]:
    """Jinja on with ``TOOL_TEMPLATE``, a template that puts tools in the prompt."""
    with running_llama_cpp(CTX, 1, chat_template=TOOL_TEMPLATE) as server:
        yield server


@pytest.fixture
def http(llama: LlamaCpp) -> Iterator[httpx.Client]:
    """A client per test: a streamed request leaves its pooled connection closed under it."""
    with _client(llama) as client:
        yield client


def chat(client: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    """A short, deterministic, non-streamed chat completion."""
    return client.post("/v1/chat/completions", json={"max_tokens": 1, "temperature": 0, **body})


def test_props_n_ctx_is_per_slot(http: httpx.Client, llama: LlamaCpp) -> None:
    props = http.get("/props").json()
    assert props["default_generation_settings"]["n_ctx"] == SLOT_CTX == llama.slot_ctx
    assert props["total_slots"] == PARALLEL
    assert props["model_path"] == props["model_alias"] == str(llama.model_path)
    assert props["bos_token"] == "<|im_start|>"
    assert props["eos_token"] == "<|im_end|>"
    # SmolLM2's template knows nothing of tools, and /props says so.
    assert props["chat_template_caps"]["supports_tools"] is False


def test_props_cannot_tell_jinja(http: httpx.Client, legacy: LlamaCpp) -> None:
    """Nothing in /props says whether Jinja is on; only a request with ``tools`` tells."""
    with _client(legacy) as other:
        theirs = other.get("/props").json()
    ours = http.get("/props").json()
    for props in (ours, theirs):
        del props["media_marker"]  # random per start
    assert ours == theirs


def test_v1_models(http: httpx.Client, llama: LlamaCpp) -> None:
    listing = http.get("/v1/models").json()
    assert listing["object"] == "list"
    (model,) = listing["data"]
    assert model["id"] == str(llama.model_path)  # the --model path when there is no --alias
    assert model["owned_by"] == "llamacpp"
    meta = model["meta"]
    assert meta["n_ctx"] == SLOT_CTX  # one slot's, like /props
    assert meta["n_ctx_train"] == 8192
    assert meta["n_vocab"] == 49152
    assert meta["n_params"] == 134515008
    # An Ollama-style listing rides along.
    assert [m["model"] for m in listing["models"]] == [model["id"]]


def test_apply_template_renders_chatml(http: httpx.Client) -> None:
    answer = http.post("/apply-template", json={"messages": SIMPLE})
    assert answer.status_code == 200
    assert answer.json() == {
        "prompt": "<|im_start|>system\nYou are terse.<|im_end|>\n"
        "<|im_start|>user\nSay hi<|im_end|>\n<|im_start|>assistant\n"
    }


def test_model_template_drops_tools_and_tool_calls(http: httpx.Client) -> None:
    """SmolLM2's template renders neither the tools nor the assistant's tool call: they cost 0."""
    plain = http.post("/apply-template", json={"messages": CONVERSATION}).json()["prompt"]
    body = {"messages": CONVERSATION, "tools": TOOLS}
    tooled = http.post("/apply-template", json=body).json()["prompt"]
    assert tooled == plain
    assert "get_weather" not in plain
    assert "<|im_start|>assistant\n<|im_end|>\n<|im_start|>tool\n18C, cloudy<|im_end|>" in plain
    assert chat(http, body).json()["usage"]["prompt_tokens"] == count_prompt(
        http, CONVERSATION_BODY
    )


def test_tool_template_puts_tools_in_the_prompt(with_tools: LlamaCpp) -> None:
    with _client(with_tools) as client:
        body = {"messages": CONVERSATION, "tools": TOOLS}
        prompt = client.post("/apply-template", json=body).json()["prompt"]
        assert '<tools>{"type": "function", "function": {"name": "get_weather"' in prompt
        assert '{"name": "get_weather", "arguments": {"city": "Paris"}}' in prompt
        with_, without = count_prompt(client, body), count_prompt(client, CONVERSATION_BODY)
    assert with_ - without > 100


@pytest.mark.parametrize(
    "server",
    [pytest.param("legacy", id="no-jinja"), pytest.param("llama", id="jinja")],
)
def test_tools_without_jinja_are_refused(server: str, request: pytest.FixtureRequest) -> None:
    """Without Jinja, ``tools`` is a 500 on both endpoints; with it, a 200."""
    jinja = server == "llama"
    with _client(request.getfixturevalue(server)) as client:
        body = {"messages": SIMPLE, "tools": TOOLS}
        for answer in (client.post("/apply-template", json=body), chat(client, body)):
            if jinja:
                assert answer.status_code == 200
            else:
                assert answer.status_code == 500
                assert answer.json() == {
                    "error": {
                        "code": 500,
                        "message": "tools param requires --jinja flag",
                        "type": "server_error",
                    }
                }


def test_tokenize_flags(http: httpx.Client) -> None:
    """``parse_special`` makes ``<|im_start|>`` one token; ``add_special`` adds nothing here."""

    def tokens(**body: Any) -> list[Any]:
        found: list[Any] = http.post(
            "/tokenize", json={"content": "<|im_start|>hi", **body}
        ).json()["tokens"]
        return found

    assert tokens(parse_special=True) == [1, 6004]
    assert len(tokens(parse_special=False)) > 2
    assert tokens() == [1, 6004]  # parse_special defaults to true
    # SmolLM2's GGUF says add_bos_token = false: add_special cannot change its count.
    assert tokens(add_special=True) == tokens(add_special=False)
    assert tokens(with_pieces=True) == [
        {"id": 1, "piece": "<|im_start|>"},
        {"id": 6004, "piece": "hi"},
    ]


RECIPE_CASES = [
    pytest.param("llama", SIMPLE, None, id="jinja-simple"),
    pytest.param("llama", CONVERSATION, None, id="jinja-conversation"),
    pytest.param("llama", CONVERSATION, TOOLS, id="jinja-conversation-tools"),
    pytest.param("legacy", SIMPLE, None, id="no-jinja-simple"),
    pytest.param("legacy", CONVERSATION, None, id="no-jinja-conversation"),
    pytest.param("with_tools", SIMPLE, TOOLS, id="tool-template-simple-tools"),
    pytest.param("with_tools", CONVERSATION, None, id="tool-template-conversation"),
    pytest.param("with_tools", CONVERSATION, TOOLS, id="tool-template-conversation-tools"),
]


@pytest.mark.parametrize(("server", "messages", "tools"), RECIPE_CASES)
def test_recipe_counts_prompt_tokens_exactly(
    server: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    request: pytest.FixtureRequest,
) -> None:
    """The chat request to /apply-template, its prompt to /tokenize with both flags on."""
    body: dict[str, Any] = {"messages": copy.deepcopy(messages)}
    if tools is not None:
        body["tools"] = tools
    with _client(request.getfixturevalue(server)) as client:
        counted = count_prompt(client, body)
        answer = chat(client, body)
        assert answer.status_code == 200, answer.text
        assert answer.json()["usage"]["prompt_tokens"] == counted
        # Without parse_special the markers are spelled out in pieces: far off.
        prompt = client.post("/apply-template", json=body).json()["prompt"]
        literal = {"content": prompt, **TOKENIZE_FLAGS, "parse_special": False}
        assert len(client.post("/tokenize", json=literal).json()["tokens"]) > counted + 10


def test_stream_final_chunk_reports_usage_and_timings(http: httpx.Client) -> None:
    body = {
        "messages": CONVERSATION,
        "tools": TOOLS,
        "max_tokens": 4,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    counted = count_prompt(http, body)  # /apply-template takes the whole chat request
    with connect_sse(http, "POST", "/v1/chat/completions", json=body) as source:
        assert source.response.status_code == 200
        data = [event.data for event in source.iter_sse()]
    assert data[-1] == "[DONE]"
    *chunks, last = [json.loads(item) for item in data[:-1]]
    assert chunks[-1]["choices"][0]["finish_reason"] in ("length", "stop")
    assert last["choices"] == []
    usage, timings = last["usage"], last["timings"]
    assert usage["prompt_tokens"] == counted
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    # timings count what was evaluated: the prompt minus what the slot's cache already held.
    assert timings["prompt_n"] + timings["cache_n"] == usage["prompt_tokens"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == timings["cache_n"]
    assert timings["predicted_n"] == usage["completion_tokens"]


@pytest.mark.parametrize(
    ("stream", "closed"),
    [pytest.param(False, False, id="plain"), pytest.param(True, True, id="stream")],
)
def test_a_streamed_request_closes_its_connection(
    llama: LlamaCpp, stream: bool, closed: bool
) -> None:
    """After any ``stream: true`` request the server hangs up, though its headers promised
    keep-alive: a pooled client that sends on that connection again gets a disconnect (httpx:
    ``RemoteProtocolError: Server disconnected without sending a response``)."""
    address = httpx.URL(llama.url)
    connection = HTTPConnection(address.host, address.port, timeout=30)
    body = {"messages": SIMPLE, "max_tokens": 2, "stream": stream}
    connection.request("POST", "/v1/chat/completions", json.dumps(body), JSON_HEADERS)
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 200
    assert answer.getheader("Keep-Alive") == "timeout=5, max=100"
    assert not answer.will_close  # no "Connection: close"
    assert connection.sock is not None
    readable, _, _ = select.select([connection.sock], [], [], 1.0)
    assert bool(readable and connection.sock.recv(1) == b"") is closed
    connection.close()


def _user_prompt_of(client: httpx.Client, tokens: int) -> list[dict[str, Any]]:
    """Messages whose prompt is exactly ``tokens`` long (`` a`` is one token)."""
    empty = count_prompt(client, {"messages": [{"role": "user", "content": ""}]})
    messages = [{"role": "user", "content": " a" * (tokens - empty)}]
    assert count_prompt(client, {"messages": messages}) == tokens
    return messages


@pytest.mark.parametrize(
    "stream", [pytest.param(False, id="plain"), pytest.param(True, id="stream")]
)
def test_prompt_over_the_slot_is_a_400(http: httpx.Client, stream: bool) -> None:
    """Over ``n_ctx`` (one slot's), the answer is a JSON 400 even to a streamed request."""
    messages = _user_prompt_of(http, SLOT_CTX + 40)
    answer = chat(http, {"messages": messages, "stream": stream})
    assert answer.status_code == 400
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == {
        "error": {
            "code": 400,
            "message": f"request ({SLOT_CTX + 40} tokens) exceeds the available context size "
            f"({SLOT_CTX} tokens), try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": SLOT_CTX + 40,
            "n_ctx": SLOT_CTX,
        }
    }


def test_a_prompt_must_leave_one_token(http: httpx.Client) -> None:
    """``n_ctx - 1`` prompt tokens are served, ``n_ctx`` are refused."""
    assert chat(http, {"messages": _user_prompt_of(http, SLOT_CTX - 1)}).status_code == 200
    refused = chat(http, {"messages": _user_prompt_of(http, SLOT_CTX)})
    assert refused.status_code == 400
    assert refused.json()["error"]["n_prompt_tokens"] == SLOT_CTX


def test_generation_past_the_slot_stops_at_length(http: httpx.Client) -> None:
    """A prompt that fits with ``max_tokens`` that does not: a 200 cut at the slot's end."""
    messages = _user_prompt_of(http, SLOT_CTX - 16)
    answer = chat(http, {"messages": messages, "max_tokens": 64, "ignore_eos": True})
    assert answer.status_code == 200
    result = answer.json()
    assert result["choices"][0]["finish_reason"] == "length"
    assert result["usage"]["prompt_tokens"] == SLOT_CTX - 16
    assert result["usage"]["total_tokens"] == SLOT_CTX


@pytest.mark.parametrize(
    ("name", "path"),
    [
        pytest.param("props.json", "/props", id="props"),
        pytest.param("v1-models.json", "/v1/models", id="models"),
    ],
)
def test_captures_have_the_live_shape(http: httpx.Client, name: str, path: str) -> None:
    """The saved answers (tests/harness/capture_llama_cpp.py) still have the live keys."""
    saved = json.loads((DATA / name).read_text())
    assert sorted(saved) == sorted(http.get(path).json())


@pytest.mark.skipif(not supported_platform(), reason="the llama.cpp tests run on Linux x86_64")
def test_a_missing_model_fails_and_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "absent.gguf"))
    with pytest.raises(pytest.fail.Exception, match=r"is not a file\. Run scripts/setup\.sh"):
        require_llama_cpp()


def test_a_server_that_cannot_start_shows_its_output(tmp_path: Path) -> None:
    not_a_model = tmp_path / "garbage.gguf"
    not_a_model.write_text("garbage")
    with (
        pytest.raises(RuntimeError, match=r"(?s)exited with 1 before printing LISTENING.*GGUF"),
        running_llama_cpp(CTX, model=not_a_model),
    ):
        pass
