"""The test upstream over real loopback HTTP: replay, scripting, listings, the model, overflows."""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics
from typing import Any

import httpx
import pytest

from tests.harness.fake_upstream.config import (
    Chunking,
    ListedModel,
    ModelBehavior,
    Reply,
    ScaleRule,
    Scripted,
    UpstreamConfig,
    from_json,
    to_json,
)
from tests.harness.fake_upstream.faults import cut
from tests.harness.fake_upstream.helpers import (
    TOOLS,
    USER,
    chat,
    json_events,
    messages_body,
    parse_sse,
)
from tests.harness.fake_upstream.model import documented
from tests.harness.fake_upstream.respond import rendered
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.fake_upstream.wire import WIRE_DIR, resolve, split_events
from tokengauge.calibration.classify import ErrorKind, classify_error
from tokengauge.counting.encodings import EncodingRegistry

ENC = EncodingRegistry().get("cl100k_base")


async def test_replay_streams_fixture_bytes_in_chunks(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    upstream.config.chunking.max_bytes = 40
    data = (WIRE_DIR / "openai-chat-stream-usage-toolcall.sse").read_bytes()
    response = await http.post("/replay/openai-chat-stream-usage-toolcall.sse/chat/completions")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.content == data
    assert upstream.last.route == "replay"
    assert upstream.last.chunks_sent >= len(data) // 40


@pytest.mark.parametrize(
    ("name", "status", "ctype"),
    [
        ("error-anthropic-prompt-too-long", 400, "application/json"),
        ("error-anthropic-401-invalid-api-key.json", 401, "application/json"),
        ("error-openai-429-request-too-large-tpm", 429, "text/plain"),
        ("error-openai-429-rate-limit-reached.message.txt", 429, "text/plain"),
    ],
)
async def test_replay_error_bodies(
    http: httpx.AsyncClient, name: str, status: int, ctype: str
) -> None:
    response = await http.post(f"/replay/{name}/v1/messages")
    assert response.status_code == status
    assert response.headers["content-type"].startswith(ctype)
    assert response.content == resolve(name).read_bytes()


async def test_replay_status_override_and_unknown(http: httpx.AsyncClient) -> None:
    assert (
        await http.post("/replay/error-anthropic-prompt-too-long?status=413")
    ).status_code == 413
    assert (await http.get("/replay/no-such-fixture")).status_code == 404


async def test_script_queue_by_route(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(
        Scripted(route="chat", fixture="openai-chat-stream-usage-text", times=2),
        Scripted(route="messages", fixture="anthropic-stream-text", headers={"x-extra": "1"}),
    )
    text = (WIRE_DIR / "openai-chat-stream-usage-text.sse").read_bytes()
    first = await http.post("/v1/chat/completions", json=chat())
    anthropic = await http.post("/v1/messages", json=messages_body())
    second = await http.post("/v1/chat/completions", json=chat())
    third = await http.post("/v1/chat/completions", json=chat())
    assert first.content == text and second.content == text
    assert anthropic.headers["x-extra"] == "1"
    assert anthropic.content == (WIRE_DIR / "anthropic-stream-text.sse").read_bytes()
    assert b"chatcmpl-test" in third.content and not upstream.pending_script
    assert [r.scripted for r in upstream.model_requests] == [True, True, True, False]


async def test_records_headers_and_body(upstream: Upstream, http: httpx.AsyncClient) -> None:
    await http.post("/v1/messages", json=messages_body(), headers={"x-api-key": "sk-ant-123"})
    await http.post(
        "/v1/chat/completions", json=chat(max_tokens=77), headers={"Authorization": "Bearer k1"}
    )
    anthropic, openai = upstream.model_requests
    assert anthropic.header("X-Api-Key") == "sk-ant-123" and anthropic.json["max_tokens"] == 100
    assert openai.headers["authorization"] == "Bearer k1" and openai.json["max_tokens"] == 77
    assert openai.outcome == "completed" and openai.finished.is_set()


def expected_total(texts: list[str], overhead: int, scale: float, extra: int) -> int:
    raw = sum(len(ENC.encode(t)) for t in texts)
    return math.ceil(scale * raw) + overhead * len(texts) + extra


async def test_openai_stream_shape_and_true_usage(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    model = upstream.config.model
    model.scale, model.per_message_overhead, model.fixed_overhead = 1.3, 7, 11
    body = chat(stream_options={"include_usage": True})
    response = await http.post("/v1/chat/completions", json=body)
    events = parse_sse(response.text)
    assert events[-1].data == "[DONE]"
    chunks = json_events(response.text)
    assert all(c["object"] == "chat.completion.chunk" and "usage" in c for c in chunks)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "ok: " + USER[:40]
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    usage = chunks[-1]["usage"]
    assert chunks[-1]["choices"] == []
    expected = expected_total(["Be brief.", USER], 7, 1.3, 11)
    assert usage["prompt_tokens"] == expected == upstream.last.prompt_tokens
    assert usage["completion_tokens"] == len(ENC.encode(text))
    assert usage["total_tokens"] == expected + usage["completion_tokens"]


async def test_openai_stream_without_usage_option(http: httpx.AsyncClient) -> None:
    chunks = json_events((await http.post("/v1/chat/completions", json=chat())).text)
    assert all("usage" not in c and c["choices"] for c in chunks)


async def test_openai_tool_call_args_split(upstream: Upstream, http: httpx.AsyncClient) -> None:
    args = {"a": 1231, "b": 2331}
    upstream.script(Scripted(reply=Reply(tool_call=True, tool_arguments=args)))
    response = await http.post("/v1/chat/completions", json=chat(tools=TOOLS))
    deltas = [c["choices"][0] for c in json_events(response.text)]
    calls = [d["delta"]["tool_calls"][0] for d in deltas if "tool_calls" in d["delta"]]
    assert calls[0]["function"]["name"] == "multiply" and calls[0]["id"].startswith("call_")
    pieces = [c["function"]["arguments"] for c in calls]
    assert len([p for p in pieces if p]) >= 3 and json.loads("".join(pieces)) == args
    assert deltas[-1]["finish_reason"] == "tool_calls"
    schema_tokens = len(ENC.encode(json.dumps(TOOLS[0]["function"])))
    assert (
        upstream.last.prompt_tokens
        == expected_total(["Be brief.", USER], 5, 1.0, 3) + schema_tokens
    )


async def test_tool_scale_applies_to_the_tools_json(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    model = upstream.config.model
    model.scale, model.tool_scale, model.per_tool_overhead = 1.0, 1.45, 2
    await http.post("/v1/chat/completions", json=chat(tools=TOOLS))
    schema_tokens = len(ENC.encode(json.dumps(TOOLS[0]["function"])))
    assert (
        upstream.last.prompt_tokens
        == expected_total(["Be brief.", USER], 5, 1.0, 3) + math.ceil(1.45 * schema_tokens) + 2
    )


CODE = "def pouch(capacity: int) -> int:\n    return capacity * 3"
CJK = "鹈鹕的喉囊可以装下很多鱼。"


async def test_scale_rules_scale_each_message_by_its_text(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    model = upstream.config.model
    model.scale, model.per_message_overhead, model.fixed_overhead = 1.1, 7, 3
    model.scale_rules = [ScaleRule(r"^def \w+\(", 1.4), ScaleRule("[\u4e00-\u9fff]", 0.9)]
    body = chat(messages=[{"role": "user", "content": t} for t in ("Hi.", CODE, CJK)])
    await http.post("/v1/chat/completions", json=body)
    raw = [len(ENC.encode(t)) for t in ("Hi.", CODE, CJK)]
    scaled = 1.1 * raw[0] + 1.4 * raw[1] + 0.9 * raw[2]
    record = upstream.last
    assert record.prompt_tokens == math.ceil(scaled) + 3 * 7 + 3
    scales = (1.1, 1.4, 0.9)
    assert record.prompt_messages == [round(s * n) + 7 for s, n in zip(scales, raw, strict=True)]
    assert record.prompt_encoded == sum(raw)
    assert record.prompt_text_ratio == pytest.approx(math.ceil(scaled) / sum(raw))


async def test_without_a_matching_rule_the_scale_is_the_models(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    model = upstream.config.model
    model.scale = 1.3
    await http.post("/v1/chat/completions", json=chat())
    plain = upstream.last.prompt_tokens
    model.scale_rules = [ScaleRule("no such text", 2.0)]
    await http.post("/v1/chat/completions", json=chat())
    assert upstream.last.prompt_tokens == plain == expected_total(["Be brief.", USER], 5, 1.3, 3)


def test_scale_rules_round_trip_through_json_and_refuse_nonsense() -> None:
    data = {"scale": 1.2, "scale_rules": [{"pattern": "```(python|log)", "scale": 1.4}]}
    behavior = from_json(ModelBehavior, data)
    assert behavior.scale_rules == [ScaleRule("```(python|log)", 1.4)]
    assert from_json(ModelBehavior, json.loads(json.dumps(to_json(behavior)))) == behavior
    for bad in (
        {"pattern": "(unclosed", "scale": 1.4},
        {"pattern": "x", "scale": 0},
        {"pattern": "x", "scale": "1.4"},
        {"pattern": "x", "scale": 1.4, "flags": "i"},
        {"pattern": "x"},
    ):
        with pytest.raises((ValueError, TypeError)):
            from_json(ModelBehavior, {"scale_rules": [bad]})


async def test_scale_rules_set_over_the_control_api(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    rules = [{"pattern": "^def ", "scale": 1.5}]
    response = await http.post("/_control/config", json={"model": {"scale_rules": rules}})
    assert response.json()["model"]["scale_rules"] == rules
    assert upstream.config.model.scale_rules == [ScaleRule("^def ", 1.5)]
    bad = {"model": {"scale_rules": [{"pattern": "[", "scale": 1.5}]}}
    assert (await http.post("/_control/config", json=bad)).status_code == 400


SCRIPT = [
    {"name": "multiply", "arguments": {"a": 6}},
    {"name": "multiply", "arguments": {"a": 7}},
]


def scripted_turn(done: int, dialect: str) -> list[dict[str, Any]]:
    """A user turn scripting SCRIPT, followed by `done` tool-call rounds in `dialect`'s shape."""
    user = f"Multiply please.\n<tg-tool-calls>{json.dumps(SCRIPT)}</tg-tool-calls>"
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for i in range(done):
        if dialect == "openai":
            call = {"id": f"c{i}", "type": "function", "function": {"name": "multiply"}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "42"})
        else:
            use = {"type": "tool_use", "id": f"c{i}", "name": "multiply", "input": {}}
            result = {"type": "tool_result", "tool_use_id": f"c{i}", "content": "42"}
            messages.append({"role": "assistant", "content": [use]})
            messages.append({"role": "user", "content": [result]})
    return messages


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
async def test_scripted_tool_call_rounds(
    upstream: Upstream, http: httpx.AsyncClient, dialect: str
) -> None:
    upstream.config.reply = Reply(text="done", scripted_calls=True)
    made = []
    for done in range(3):
        messages = scripted_turn(done, dialect)
        if dialect == "openai":
            body = chat(messages=messages, tools=TOOLS)
            response = await http.post("/v1/chat/completions", json=body)
            pieces = [
                c["choices"][0]["delta"].get("tool_calls", [{}])[0].get("function", {})
                for c in json_events(response.text)
                if c["choices"]
            ]
            arguments = "".join(p.get("arguments", "") for p in pieces)
        else:
            tools = [{"name": "multiply", "description": "d", "input_schema": {"type": "object"}}]
            body = messages_body(messages=messages, tools=tools)
            response = await http.post("/v1/messages", json=body)
            arguments = "".join(
                e.json()["delta"]["partial_json"]
                for e in parse_sse(response.text)
                if e.json().get("delta", {}).get("type") == "input_json_delta"
            )
        made.append(json.loads(arguments) if arguments else None)
    assert made == [{"a": 6}, {"a": 7}, None]
    # A later user message of another kind (here: a summarization instruction) ends the script.
    messages = [*scripted_turn(0, "openai"), {"role": "user", "content": "Summarize."}]
    response = await http.post("/v1/chat/completions", json=chat(messages=messages, tools=TOOLS))
    assert "done" in response.text and "tool_calls" not in response.text


async def test_two_upstreams_never_answer_with_the_same_tool_call_id(upstream: Upstream) -> None:
    # The APIs' ids are random: a client may tell its conversations apart by them.
    body = chat(messages=[{"role": "user", "content": "Multiply."}], tools=TOOLS)
    upstream.config.reply = Reply(text="", tool_call=True)
    config = UpstreamConfig(reply=Reply(text="", tool_call=True))
    async with running_upstream(config) as other:
        ids = []
        for up in (upstream, other, upstream):
            async with httpx.AsyncClient(base_url=up.base_url, timeout=10) as client:
                response = await client.post("/v1/chat/completions", json=body)
            calls = [c["choices"][0]["delta"].get("tool_calls") for c in json_events(response.text)]
            ids += [call[0]["id"] for call in calls if call and "id" in call[0]]
    assert len(ids) == 3 and len(set(ids)) == 3, ids


async def test_anthropic_stream_shape_usage_and_tool(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    upstream.config.model.cached_prompt_tokens = 6
    tools = [{"name": "lookup", "description": "d", "input_schema": {"type": "object"}}]
    reply = Reply(
        text="Let me check.",
        thinking="Hmm, a lookup.",
        tool_call=True,
        tool_arguments={"q": "pelican"},
    )
    upstream.script(Scripted(reply=reply))
    response = await http.post("/v1/messages", json=messages_body(tools=tools))
    events = parse_sse(response.text)
    assert all(e.name == e.json()["type"] for e in events)
    names = [e.name for e in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    data = [e.json() for e in events]
    usage = data[0]["message"]["usage"]
    total = upstream.last.prompt_tokens
    assert usage["input_tokens"] + usage["cache_read_input_tokens"] == total
    assert usage["cache_read_input_tokens"] == 6
    blocks = [d["content_block"]["type"] for d in data if d["type"] == "content_block_start"]
    assert blocks == ["thinking", "text", "tool_use"]
    partial = [
        d["delta"]["partial_json"]
        for d in data
        if d.get("delta", {}).get("type") == "input_json_delta"
    ]
    assert len(partial) >= 3 and json.loads("".join(partial)) == {"q": "pelican"}
    assert data[-2]["delta"]["stop_reason"] == "tool_use"
    output = upstream.last.output_tokens
    assert output and data[-2]["usage"]["output_tokens"] == output


async def test_non_streaming_and_count_tokens(upstream: Upstream, http: httpx.AsyncClient) -> None:
    message = (await http.post("/v1/messages", json=messages_body(stream=False))).json()
    assert message["content"][0]["text"].startswith("ok: Please")
    completion = (await http.post("/v1/chat/completions", json=chat(stream=False))).json()
    assert completion["choices"][0]["message"]["content"].startswith("ok: Please")
    counted = (await http.post("/v1/messages/count_tokens", json=messages_body())).json()
    assert counted["input_tokens"] == message["usage"]["input_tokens"]


OVERFLOWS = [
    # style, check_max_tokens, max_tokens, window -> (input, limit, output)
    ("anthropic", True, 10, 20),
    ("anthropic", True, 500, 50),
    ("openai", False, None, 20),
    ("openai", True, 500, 50),
    ("openrouter", True, 500, 50),
    ("llamacpp", True, 500, 20),
    ("gemini", True, 500, 20),
]


@pytest.mark.parametrize(("style", "check", "max_tokens", "window"), OVERFLOWS)
async def test_overflow_bodies_carry_true_numbers(
    style: str, check: bool, max_tokens: int | None, window: int
) -> None:
    async with (
        running_upstream(UpstreamConfig()) as up,
        httpx.AsyncClient(base_url=up.base_url) as http,
    ):
        model = up.config.model
        model.context_window, model.check_max_tokens, model.error_style = window, check, style
        body = chat() if max_tokens is None else chat(max_tokens=max_tokens)
        response = await http.post("/v1/chat/completions", json=body)
        assert response.status_code == 400
        assert response.headers["content-type"].startswith("application/json")
        parsed = classify_error(400, response.text)
        true = up.last.prompt_tokens
        assert true is not None
        assert parsed.kind is ErrorKind.OVERFLOW
        assert (parsed.input_tokens, parsed.limit_tokens) == (true, window)
        if true <= window:  # only prompt + max_tokens overflowed
            assert parsed.output_tokens == max_tokens


async def test_output_cap_and_api_key(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.config.model.max_output_tokens = 64
    capped = await http.post("/v1/messages", json=messages_body())
    assert classify_error(capped.status_code, capped.text).kind is ErrorKind.OUTPUT_LIMIT
    upstream.config.model.max_output_tokens = None
    upstream.config.model.require_api_key = "sk-good"
    bad = await http.post("/v1/messages", json=messages_body(), headers={"x-api-key": "sk-bad"})
    assert bad.status_code == 401 and "invalid x-api-key" in bad.text
    good = await http.post("/v1/messages", json=messages_body(), headers={"x-api-key": "sk-good"})
    openai = await http.post(
        "/v1/chat/completions", json=chat(), headers={"Authorization": "Bearer x"}
    )
    assert good.status_code == 200 and openai.status_code == 401
    assert classify_error(401, openai.text).kind is ErrorKind.AUTH


MODELS = [
    ListedModel(
        id="vendor/big", context_window=200000, max_output_tokens=32000, architecture="qwen3"
    )
]


@pytest.mark.parametrize(
    ("shape", "method", "path", "check"),
    [
        (
            "openai",
            "GET",
            "/v1/models",
            lambda j: j["data"][0]["object"] == "model" and j["object"] == "list",
        ),
        ("anthropic", "GET", "/v1/models", lambda j: j["data"][0]["type"] == "model"),
        (
            "openrouter",
            "GET",
            "/api/v1/models",
            lambda j: (
                j["data"][0]["top_provider"]["max_completion_tokens"] == 32000
                and j["data"][0]["context_length"] == 200000
            ),
        ),
        (
            "vercel",
            "GET",
            "/v1/models",
            lambda j: (
                j["data"][0]["context_window"] == 200000 and j["data"][0]["max_tokens"] == 32000
            ),
        ),
        ("ollama", "GET", "/api/tags", lambda j: j["models"][0]["name"] == "vendor/big"),
        (
            "ollama",
            "POST",
            "/api/show",
            lambda j: (
                j["model_info"]["qwen3.context_length"] == 200000
                and j["model_info"]["general.architecture"] == "qwen3"
            ),
        ),
        (
            "litellm",
            "GET",
            "/model/info",
            lambda j: (
                j["data"][0]["model_info"]["max_input_tokens"] == 200000
                and j["data"][0]["model_name"] == "vendor/big"
            ),
        ),
    ],
)
async def test_listings(shape: str, method: str, path: str, check: Any) -> None:
    config = UpstreamConfig(listing=shape, models=MODELS)
    async with running_upstream(config) as up, httpx.AsyncClient(base_url=up.base_url) as http:
        response = await http.request(
            method, path, json={"model": "vendor/big"} if method == "POST" else None
        )
        assert response.status_code == 200 and check(response.json())
        if shape == "ollama":
            missing = await http.post("/api/show", json={"model": "nope"})
            assert missing.status_code == 404


def test_chunking_is_seeded_and_lossless() -> None:
    data = (WIRE_DIR / "anthropic-stream-text.sse").read_bytes()
    chunking = Chunking(min_bytes=3, max_bytes=9)
    first = cut(data, chunking, random.Random("0:1"))
    assert first == cut(data, chunking, random.Random("0:1"))
    assert first != cut(data, chunking, random.Random("1:1"))
    assert b"".join(first) == data and all(len(c) <= 9 for c in first)
    assert all(len(c) >= 3 for c in first[:-1])


def test_per_event_chunking_writes_whole_events() -> None:
    data = (WIRE_DIR / "anthropic-stream-text.sse").read_bytes()
    events = cut(data, Chunking(per_event=True), random.Random(0))
    assert events == split_events(data) and all(e.endswith(b"\n\n") for e in events)


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
async def test_a_rendered_answer_streams_event_by_event(
    upstream: Upstream, http: httpx.AsyncClient, dialect: str
) -> None:
    upstream.config.chunking = Chunking(per_event=True, min_delay=0.002, max_delay=0.002)
    item = rendered(dialect, Reply(text=" w1 w2 w3"), 12, "test-model")
    upstream.script(item)
    path, body = (
        ("/v1/chat/completions", chat())
        if dialect == "openai"
        else ("/v1/messages", messages_body())
    )
    response = await http.post(path, json=body)
    record = upstream.last
    assert response.content == item.body.encode()  # type: ignore[union-attr]
    assert record.chunks_sent == len(split_events(response.content))
    assert record.write_times == sorted(record.write_times)
    gaps = [b - a for a, b in itertools.pairwise(record.write_times)]
    assert statistics.fmean(gaps) >= 0.0019
    assert record.prompt_tokens is None  # nothing was counted
    events = json_events(response.text)
    if dialect == "openai":
        text = "".join(
            e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"]
        )
        assert text == " w1 w2 w3" and events[-1]["usage"]["prompt_tokens"] == 12
    else:
        deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
        assert "".join(d["text"] for d in deltas) == " w1 w2 w3"
        assert events[0]["message"]["usage"]["input_tokens"] == 12


async def test_connection_close_is_honoured(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.script(Scripted(fixture="openai-chat-stream-usage-text"))
    upstream.script(
        Scripted(fixture="openai-chat-stream-usage-text", headers={"Connection": "close"})
    )
    for _ in range(3):
        assert (await http.post("/v1/chat/completions", json=chat())).status_code == 200
    first, second, third = (r.peer for r in upstream.model_requests)
    assert first == second != third and third


async def test_api_root_answers_only_under_it(upstream: Upstream, http: httpx.AsyncClient) -> None:
    upstream.config.api_root = "/v1"
    outside = await http.post("/chat/completions", json=chat())
    listed = await http.get("/models")
    assert (outside.status_code, listed.status_code) == (404, 404)
    assert outside.json()["error"]["message"] == "Invalid URL (POST /chat/completions)"
    assert (await http.post("/v1/chat/completions", json=chat())).status_code == 200
    assert (await http.get("/v1/models")).status_code == 200


async def test_an_unknown_path_is_openais_invalid_url(http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/model/info")  # only a LiteLLM proxy serves this
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "message": "Invalid URL (GET /v1/model/info)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }


@pytest.mark.parametrize(
    ("shape", "headers", "status", "needle"),
    [
        pytest.param("openai", {}, 401, "You didn't provide an API key.", id="openai-no-key"),
        pytest.param(
            "openai", {"Authorization": "Bearer sk-bad00"}, 401, "sk-*ad00.", id="openai-bad-key"
        ),
        pytest.param(
            "openai", {"Authorization": "Bearer sk-good"}, 200, '"object": "list"', id="openai"
        ),
        pytest.param(
            "anthropic", {"x-api-key": "sk-bad"}, 401, "invalid x-api-key", id="anthropic"
        ),
        pytest.param("openrouter", {}, 200, "top_provider", id="openrouter-public-list"),
    ],
)
async def test_listings_ask_for_the_key_as_the_real_ones_do(
    shape: str, headers: dict[str, str], status: int, needle: str
) -> None:
    config = UpstreamConfig(listing=shape, models=MODELS)
    config.model.require_api_key = "sk-good"
    async with running_upstream(config) as up, httpx.AsyncClient(base_url=up.base_url) as http:
        response = await http.get("/v1/models", headers=headers)
    assert response.status_code == status and needle in response.text


@pytest.mark.parametrize(
    ("required", "presented", "status", "needle"),
    [
        pytest.param(None, None, 401, "No auth credentials found", id="no-key"),
        pytest.param("sk-or-v1-good0000", "sk-or-v1-bad00000", 401, "User not found.", id="bad"),
        pytest.param(None, "sk-or-v1-any000000", 200, '"label": "sk-or-v1-any...000"', id="any"),
    ],
)
async def test_openrouter_key_record(
    required: str | None, presented: str | None, status: int, needle: str
) -> None:
    config = UpstreamConfig(listing="openrouter", models=MODELS)
    config.model.require_api_key = required
    headers = {"Authorization": f"Bearer {presented}"} if presented else {}
    async with running_upstream(config) as up, httpx.AsyncClient(base_url=up.base_url) as http:
        response = await http.get("/api/v1/key", headers=headers)
        assert up.last.route == "key"
    assert response.status_code == status and needle in json.dumps(response.json())


async def test_listing_headers_go_with_listings_only(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    upstream.config.listing_headers = {"x-litellm-version": "1.74.0"}
    assert (await http.get("/v1/models")).headers["x-litellm-version"] == "1.74.0"
    chat_answer = await http.post("/v1/chat/completions", json=chat())
    assert "x-litellm-version" not in chat_answer.headers


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        pytest.param(
            "/v1/chat/completions",
            chat(model="gpt-9"),
            "The model `gpt-9` does not exist",
            id="openai",
        ),
        pytest.param(
            "/v1/messages",
            messages_body(model="claude-9"),
            '"message": "model: claude-9"',
            id="anthropic",
        ),
    ],
)
async def test_a_model_not_listed_is_not_found_when_asked(
    upstream: Upstream, http: httpx.AsyncClient, path: str, body: dict[str, Any], needle: str
) -> None:
    upstream.config.model.listed_only = True
    response = await http.post(path, json=body)
    assert response.status_code == 404 and needle in json.dumps(response.json())
    listed = {**body, "model": "test-model"}
    assert (await http.post(path, json=listed)).status_code == 200


def test_a_documented_only_model_leaves_out_the_optional_arguments_it_was_not_told_of() -> None:
    tool = {
        "name": "file_search",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "maxResults": {"type": "number"},
                "cursor": {"type": "string", "description": "Where to go on from."},
            },
            "required": ["query"],
        },
    }
    arguments = {"query": "*.py", "maxResults": 3, "cursor": "c1"}
    assert documented(arguments, tool) == {"query": "*.py", "cursor": "c1"}
    anthropic = {"name": "file_search", "input_schema": tool["parameters"]}
    assert documented(arguments, anthropic) == {"query": "*.py", "cursor": "c1"}
