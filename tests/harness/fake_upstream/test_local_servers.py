"""Local servers over real loopback HTTP: Ollama, LM Studio and vLLM's own routes, the window
each serves a model with (load and reload), silent truncation and its record, vLLM's overflow."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.harness.fake_upstream.config import (
    ListedModel,
    ModelBehavior,
    Reply,
    Scripted,
    UpstreamConfig,
    from_json,
    to_json,
)
from tests.harness.fake_upstream.helpers import TOOLS, USER, chat, json_events
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tokengauge.calibration.classify import ErrorKind, classify_error

PS_KEYS = {"name", "model", "size", "digest", "details", "expires_at", "size_vram"}
PS_KEYS |= {"context_length"}
V0_KEYS = {"id", "object", "type", "publisher", "arch", "compatibility_type", "quantization"}
V0_KEYS |= {"state", "max_context_length"}
V1_KEYS = {"type", "publisher", "key", "display_name", "architecture", "quantization"}
V1_KEYS |= {"size_bytes", "params_string", "loaded_instances", "max_context_length", "format"}
V1_KEYS |= {"capabilities", "description"}


def models() -> list[ListedModel]:
    """A model loaded from the start (8192 of its native 131072) and one not loaded."""
    return [
        ListedModel(
            id="qwen3:8b", context_window=131072, architecture="qwen3", loaded_context=8192
        ),
        ListedModel(id="llama3.2:3b", context_window=131072),
    ]


@pytest.fixture
async def local(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[Upstream, httpx.AsyncClient]]:
    """An upstream of the listing shape the test is parametrized with (``indirect``)."""
    config = UpstreamConfig(listing=request.param, models=models(), default_context=4096)
    async with (
        running_upstream(config) as up,
        httpx.AsyncClient(base_url=up.base_url, timeout=10) as http,
    ):
        yield up, http


def asking(model: str, num_ctx: int | None = None, **extra: Any) -> dict[str, Any]:
    """A streaming chat request for ``model`` with usage, and Ollama's ``options.num_ctx``."""
    body = chat(model=model, stream_options={"include_usage": True}, **extra)
    return body if num_ctx is None else {**body, "options": {"num_ctx": num_ctx}}


def usage_of(response: httpx.Response) -> dict[str, Any]:
    usage: dict[str, Any] = json_events(response.text)[-1]["usage"]
    return usage


def ndjson(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.text.splitlines() if line]


def test_the_knobs_round_trip_through_json_and_refuse_nonsense() -> None:
    config = UpstreamConfig(
        listing="vllm",
        models=models(),
        model=ModelBehavior(context_window=8192, overflow="truncate", error_style="vllm"),
        default_context=2048,
    )
    data = json.loads(json.dumps(to_json(config)))
    assert data["models"][0]["loaded_context"] == 8192 and data["default_context"] == 2048
    assert from_json(UpstreamConfig, data) == config
    for bad in (
        {"model": {"overflow": "shrug"}},
        {"listing": "lmstudio", "models": [{"id": "m", "loaded_context": 0}]},
        {"models": [{"id": "m", "loaded": True}]},
    ):
        with pytest.raises(ValueError, match=r"overflow|loaded"):
            from_json(UpstreamConfig, bad)


@pytest.mark.parametrize("local", ["ollama"], indirect=True)
async def test_ollama_ps_lists_only_the_loaded_models(
    local: tuple[Upstream, httpx.AsyncClient],
) -> None:
    _, http = local
    running = (await http.get("/api/ps")).json()["models"]
    assert [m["name"] for m in running] == ["qwen3:8b"]
    assert set(running[0]) == PS_KEYS and running[0]["context_length"] == 8192
    assert running[0]["details"]["family"] == "qwen3" and running[0]["size_vram"] > 0
    show = (await http.post("/api/show", json={"model": "qwen3:8b"})).json()
    assert show["model_info"]["qwen3.context_length"] == 131072  # the native window stays


LOADS = [
    # num_ctx asked → (record.load, context in /api/ps afterwards)
    pytest.param([None], [("loaded", 4096)], id="first-request-loads-the-default"),
    pytest.param([16384], [("loaded", 16384)], id="num_ctx-loads-with-it"),
    pytest.param(
        [None, 16384, None, 16384, 2048],
        [("loaded", 4096), ("reloaded", 16384), (None, 16384), (None, 16384), ("reloaded", 2048)],
        id="num_ctx-reloads-and-its-absence-keeps-the-loaded-one",
    ),
]


@pytest.mark.parametrize("local", ["ollama"], indirect=True)
@pytest.mark.parametrize(("asked", "expected"), LOADS)
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/api/chat"])
async def test_ollama_loads_and_reloads_as_num_ctx_asks(
    local: tuple[Upstream, httpx.AsyncClient],
    asked: list[int | None],
    expected: list[tuple[str | None, int]],
    path: str,
) -> None:
    up, http = local
    for num_ctx, (load, context) in zip(asked, expected, strict=True):
        assert (await http.post(path, json=asking("llama3.2:3b", num_ctx))).status_code == 200
        assert (up.last.num_ctx, up.last.load, up.last.served_window) == (num_ctx, load, context)
        running = {
            m["name"]: m["context_length"] for m in (await http.get("/api/ps")).json()["models"]
        }
        assert running == {"qwen3:8b": 8192, "llama3.2:3b": context}


@pytest.mark.parametrize("local", ["ollama"], indirect=True)
async def test_ollama_loads_with_the_modelfile_num_ctx_before_its_default(
    local: tuple[Upstream, httpx.AsyncClient],
) -> None:
    up, http = local
    up.config.models[1].num_ctx = 16384
    show = (await http.post("/api/show", json={"model": "llama3.2:3b"})).json()
    assert show["parameters"].split() == ["num_ctx", "16384"]
    await http.post("/api/chat", json=asking("llama3.2:3b"))
    assert (up.last.load, up.last.served_window) == ("loaded", 16384)


@pytest.mark.parametrize("local", ["ollama"], indirect=True)
async def test_ollama_truncates_silently_and_says_so_in_the_record(
    local: tuple[Upstream, httpx.AsyncClient],
) -> None:
    up, http = local
    up.config.model.overflow = "truncate"
    fits = await http.post("/v1/chat/completions", json=asking("llama3.2:3b", 4096))
    true = up.last.prompt_tokens
    assert true is not None and usage_of(fits)["prompt_tokens"] == true and not up.last.truncated
    cut = await http.post("/v1/chat/completions", json=asking("llama3.2:3b", 16))
    assert cut.status_code == 200 and usage_of(cut)["prompt_tokens"] == 16
    assert up.last.truncated == {"prompt": true, "evaluated": 16} and up.last.prompt_tokens == true
    native = await http.post("/api/chat", json=asking("llama3.2:3b", stream=False))
    assert native.json()["prompt_eval_count"] == 16  # no num_ctx: stays loaded with 16
    assert [r.id for r in up.truncated_requests] == [2, 3]
    stats = (await http.get("/_control/stats")).json()
    assert stats["truncated"] == 2 and stats["model_requests"] == 3
    assert stats["loaded"] == {"qwen3:8b": 8192, "llama3.2:3b": 16}
    listed = (await http.get("/_control/requests", params={"truncated": 1})).json()["requests"]
    assert [r["truncated"]["evaluated"] for r in listed] == [16, 16]
    await http.post("/_control/reset", json={})
    assert (await http.get("/_control/stats")).json()["loaded"] == {"qwen3:8b": 8192}


@pytest.mark.parametrize("local", ["ollama"], indirect=True)
async def test_ollama_errors_on_overflow_only_when_told_to(
    local: tuple[Upstream, httpx.AsyncClient],
) -> None:
    up, http = local
    up.config.model.context_window = 16  # overflow "error": today's 400, whatever is loaded
    refused = await http.post("/v1/chat/completions", json=asking("qwen3:8b"))
    assert refused.status_code == 400 and up.last.truncated is None
    assert classify_error(400, refused.text).kind is ErrorKind.OVERFLOW


async def test_truncation_falls_back_to_the_enforced_window() -> None:
    behavior = ModelBehavior(context_window=20, overflow="truncate")
    async with (
        running_upstream(UpstreamConfig(model=behavior)) as up,
        httpx.AsyncClient(base_url=up.base_url) as http,
    ):
        answer = await http.post("/v1/chat/completions", json=asking("gpt-test", max_tokens=500))
        assert answer.status_code == 200 and usage_of(answer)["prompt_tokens"] == 20
        assert up.last.truncated == {"prompt": up.last.prompt_tokens, "evaluated": 20}
        assert up.last.load is None and up.last.served_window is None  # not a local server


@pytest.mark.parametrize("local", ["ollama"], indirect=True)
async def test_ollama_native_chat_streams_ndjson(local: tuple[Upstream, httpx.AsyncClient]) -> None:
    up, http = local
    compat = await http.post("/v1/chat/completions", json=asking("qwen3:8b"))
    response = await http.post("/api/chat", json={**asking("qwen3:8b"), "stream": True})
    assert response.headers["content-type"].startswith("application/x-ndjson")
    *chunks, final = ndjson(response)
    assert all(set(c) == {"model", "created_at", "message", "done"} for c in chunks)
    assert all(c["message"]["role"] == "assistant" and c["done"] is False for c in chunks)
    assert "".join(c["message"]["content"] for c in chunks) == "ok: " + USER[:40]
    assert (final["done"], final["done_reason"], final["message"]["content"]) == (True, "stop", "")
    assert final["prompt_eval_count"] == usage_of(compat)["prompt_tokens"] == up.last.prompt_tokens
    assert final["eval_count"] == up.last.output_tokens and final["total_duration"] > 0
    assert up.last.route == "ollama_chat" and up.last in up.model_requests


@pytest.mark.parametrize("local", ["ollama"], indirect=True)
async def test_ollama_native_chat_answers_tool_calls_and_unknown_models(
    local: tuple[Upstream, httpx.AsyncClient],
) -> None:
    up, http = local
    up.script(Scripted(route="ollama_chat", reply=Reply(tool_call=True, tool_arguments={"a": 2})))
    called = await http.post("/api/chat", json=asking("qwen3:8b", tools=TOOLS, stream=False))
    call = called.json()["message"]["tool_calls"][0]["function"]
    assert (call["name"], call["arguments"]) == ("multiply", {"a": 2})
    up.config.model.listed_only = True
    missing = await http.post("/api/chat", json=asking("nope"))
    assert missing.status_code == 404 and "not found" in missing.json()["error"]


@pytest.mark.parametrize("local", ["lmstudio"], indirect=True)
async def test_lmstudio_lists_its_models_with_the_loaded_context(
    local: tuple[Upstream, httpx.AsyncClient],
) -> None:
    _, http = local
    v0 = (await http.get("/api/v0/models")).json()
    assert v0["object"] == "list"
    loaded, idle = v0["data"]
    assert set(loaded) == V0_KEYS | {"loaded_context_length"} and set(idle) == V0_KEYS
    assert (loaded["state"], loaded["loaded_context_length"]) == ("loaded", 8192)
    assert (idle["state"], idle["max_context_length"]) == ("not-loaded", 131072)
    assert (await http.get("/api/v0/models/qwen3:8b")).json() == loaded
    assert (await http.get("/api/v0/models/nope")).status_code == 404
    v1 = (await http.get("/api/v1/models")).json()["models"]
    assert all(set(m) == V1_KEYS for m in v1)
    assert v1[0]["loaded_instances"] == [
        {
            "id": "qwen3:8b",
            "config": {
                "context_length": 8192,
                "eval_batch_size": 512,
                "flash_attention": False,
                "offload_kv_cache_to_gpu": True,
            },
        }
    ]
    assert v1[1]["loaded_instances"] == [] and v1[1]["max_context_length"] == 131072
    openai = (await http.get("/v1/models")).json()
    assert [m["id"] for m in openai["data"]] == ["qwen3:8b", "llama3.2:3b"]


@pytest.mark.parametrize("local", ["lmstudio"], indirect=True)
async def test_lmstudio_loads_just_in_time_and_truncates_silently(
    local: tuple[Upstream, httpx.AsyncClient],
) -> None:
    up, http = local
    up.config.api_root = "/v1"  # its own /api/v0 and /api/v1 still live at the root
    up.config.model.overflow = "truncate"
    up.config.default_context = 24
    answer = await http.post("/v1/chat/completions", json=asking("llama3.2:3b", 4096))
    assert up.last.load == "loaded" and up.last.num_ctx == 4096  # asked for, and ignored
    assert usage_of(answer)["prompt_tokens"] == 24 and up.last.truncated is not None
    assert up.last.truncated["evaluated"] == 24 < up.last.truncated["prompt"]
    idle = (await http.get("/api/v0/models/llama3.2:3b")).json()
    assert (idle["state"], idle["loaded_context_length"]) == ("loaded", 24)
    await http.post("/v1/chat/completions", json=asking("qwen3:8b"))
    assert up.last.load is None and up.last.truncated is None  # fits its 8192


VLLM = UpstreamConfig(
    listing="vllm",
    models=[ListedModel(id="Qwen/Qwen3-8B", context_window=40960)],
    model=ModelBehavior(context_window=64, error_style="vllm", scale=1.2, per_tool_overhead=9),
)


@pytest.fixture
async def vllm() -> AsyncIterator[tuple[Upstream, httpx.AsyncClient]]:
    async with (
        running_upstream(from_json(UpstreamConfig, to_json(VLLM))) as up,
        httpx.AsyncClient(base_url=up.base_url, timeout=10) as http,
    ):
        yield up, http


async def test_vllm_models_carry_max_model_len(vllm: tuple[Upstream, httpx.AsyncClient]) -> None:
    up, http = vllm
    listing = (await http.get("/v1/models")).json()
    entry = listing["data"][0]
    assert listing["object"] == "list" and entry["owned_by"] == "vllm"
    assert (entry["id"], entry["root"], entry["parent"]) == ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B", None)
    assert entry["max_model_len"] == 64  # the served window, not the native 40960
    assert entry["permission"][0]["object"] == "model_permission"
    up.config.models[0].loaded_context = 32768
    assert (await http.get("/v1/models")).json()["data"][0]["max_model_len"] == 32768


TOKENIZED = [
    pytest.param({}, id="messages"),
    pytest.param({"tools": TOOLS}, id="messages-and-tools"),
    pytest.param({"add_generation_prompt": True, "return_token_strs": True}, id="options"),
]


@pytest.mark.parametrize("extra", TOKENIZED)
async def test_vllm_tokenize_counts_as_the_chat_route_reports(
    vllm: tuple[Upstream, httpx.AsyncClient], extra: dict[str, Any]
) -> None:
    up, http = vllm
    up.config.model.context_window = None
    body = {**asking("Qwen/Qwen3-8B"), **extra}
    answer = await http.post("/v1/chat/completions", json=body)
    messages = {k: v for k, v in body.items() if k in ("model", "messages", "tools")}
    counted = (await http.post("/tokenize", json={**messages, **extra})).json()
    assert (
        counted["count"] == usage_of(answer)["prompt_tokens"] == up.model_requests[0].prompt_tokens
    )
    assert counted["max_model_len"] == 40960 and len(counted["tokens"]) == counted["count"]
    strs = counted["token_strs"]
    assert strs is None if "return_token_strs" not in extra else len(strs) == counted["count"]
    assert up.last.route == "tokenize"


async def test_vllm_tokenize_a_prompt(vllm: tuple[Upstream, httpx.AsyncClient]) -> None:
    _, http = vllm
    counted = (
        await http.post("/tokenize", json={"model": "Qwen/Qwen3-8B", "prompt": "Hi there"})
    ).json()
    assert counted == {**counted, "count": 3, "max_model_len": 64, "token_strs": None}  # ⌈1.2 × 2⌉
    assert (await http.post("/tokenize", json={"model": "Qwen/Qwen3-8B"})).status_code == 400
    assert (await http.post("/v1/tokenize", json={"prompt": "x"})).status_code == 404


OVERFLOWED = [
    # max_tokens → (output named, the lower bound named)
    pytest.param(None, 0, 65, id="prompt-alone"),
    pytest.param(40, 40, 25, id="prompt-and-max_tokens"),
]


@pytest.mark.parametrize(("max_tokens", "out", "seen"), OVERFLOWED)
async def test_vllm_overflow_is_its_400(
    vllm: tuple[Upstream, httpx.AsyncClient], max_tokens: int | None, out: int, seen: int
) -> None:
    up, http = vllm
    body = chat(model="Qwen/Qwen3-8B", messages=[{"role": "user", "content": "pelican " * 80}])
    response = await http.post("/v1/chat/completions", json={**body, "max_tokens": max_tokens})
    assert response.status_code == 400 and up.last.prompt_tokens is not None
    assert up.last.prompt_tokens > 64
    message = (
        f"This model's maximum context length is 64 tokens. However, you requested {out} output "
        f"tokens and your prompt contains at least {seen} input tokens, for a total of at least "
        f"{seen + out} tokens. Please reduce the length of the input prompt or the number of "
        f"requested output tokens. (parameter=input_tokens, value={seen})"
    )
    error = {"message": message, "type": "BadRequestError", "param": "input_tokens", "code": 400}
    assert response.json() == {"error": error}
    parsed = classify_error(400, response.text)
    assert (parsed.kind, parsed.limit_tokens) == (ErrorKind.OVERFLOW, 64)


async def test_vllm_a_prompt_that_fits_with_its_output_is_answered(
    vllm: tuple[Upstream, httpx.AsyncClient],
) -> None:
    up, http = vllm
    response = await http.post("/v1/chat/completions", json=asking("Qwen/Qwen3-8B", max_tokens=8))
    assert response.status_code == 200 and up.last.prompt_tokens is not None
    assert up.last.prompt_tokens + 8 <= 64 and up.last.served_window == 64
