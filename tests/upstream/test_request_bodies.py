"""Tests for the request bodies: option parsing, OpenAI Chat Completions and Anthropic Messages.

The recorded request bodies in the wire fixtures are rebuilt from DESIGN §3 messages and compared.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tokengauge.messages import (
    DataPart,
    InvalidInput,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
)
from tokengauge.upstream.anthropic_request import (
    anthropic_headers,
    anthropic_messages,
    build_anthropic_body,
)
from tokengauge.upstream.openai_request import (
    build_openai_body,
    max_tokens_field_for,
    openai_headers,
    openai_messages,
)
from tokengauge.upstream.options import ChatOptions, parse_model_options

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
IMAGE = DataPart("image/png", PNG)
IMAGE_URL = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
IMAGE_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
}
CACHE = DataPart("cache_control", base64.b64encode(b"ephemeral").decode())
EPHEMERAL = [CACHE, DataPart("stateful_marker", "eHl6"), DataPart("usage", "e30=")]
EPHEMERAL_MARK = {"cache_control": {"type": "ephemeral"}}
CALL = ToolCallPart("call_1", "read_file", {"path": "a.py"})
NO_OPTIONS = ChatOptions()
API_KEY = "sk-test-secret-key"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def user(*parts: Part, name: str | None = None) -> Message:
    return Message("user", list(parts), name)


def assistant(*parts: Part) -> Message:
    return Message("assistant", list(parts))


def system(*parts: Part) -> Message:
    return Message("system", list(parts))


def result(call_id: str, *parts: Part) -> ToolResultPart:
    return ToolResultPart(call_id, list(parts))


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **extra}


# --- parse_model_options ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_mode", "model_options", "expected"),
    [
        pytest.param(None, None, ChatOptions(), id="defaults"),
        pytest.param("required", {}, ChatOptions(tool_mode="required"), id="tool-mode-string"),
        pytest.param(2, {}, ChatOptions(tool_mode="required"), id="tool-mode-enum-required"),
        pytest.param(1, {}, ChatOptions(tool_mode="auto"), id="tool-mode-enum-auto"),
        pytest.param(None, {"temperature": 0}, ChatOptions(temperature=0.0), id="temperature"),
        pytest.param(None, {"topP": 0.9}, ChatOptions(top_p=0.9), id="topP"),
        pytest.param(None, {"top_p": 0.9}, ChatOptions(top_p=0.9), id="top_p"),
        pytest.param(None, {"maxTokens": 500}, ChatOptions(max_tokens=500), id="maxTokens"),
        pytest.param(None, {"max_output_tokens": 500}, ChatOptions(max_tokens=500), id="max-out"),
        pytest.param(
            None, {"max_completion_tokens": 500}, ChatOptions(max_tokens=500), id="max-completion"
        ),
        pytest.param(None, {"max_tokens": 500.0}, ChatOptions(max_tokens=500), id="integral-float"),
        pytest.param(
            None, {"reasoningEffort": "low"}, ChatOptions(reasoning_effort="low"), id="effort"
        ),
        pytest.param(
            None, {"thinkingBudget": 2048}, ChatOptions(thinking_budget=2048), id="thinkingBudget"
        ),
        pytest.param(
            None, {"budget_tokens": 2048}, ChatOptions(thinking_budget=2048), id="budget_tokens"
        ),
        pytest.param(None, {"stop": "END"}, ChatOptions(stop=["END"]), id="stop-string"),
        pytest.param(None, {"stop_sequences": ["a"]}, ChatOptions(stop=["a"]), id="stop-list"),
        pytest.param(None, {"top_p": 0.5, "topP": 0.5}, ChatOptions(top_p=0.5), id="aliases-agree"),
        pytest.param(None, {"temperature": None}, ChatOptions(), id="null-is-absent"),
        pytest.param(
            None,
            {"top_k": 40, "provider": {"only": ["xai"]}},
            ChatOptions(extra={"top_k": 40, "provider": {"only": ["xai"]}}),
            id="unknown-keys-pass-through",
        ),
        pytest.param(
            None,
            {"_capturingTokenCorrelationId": "f00", "_otelTraceContext": None},
            ChatOptions(),
            id="copilot-private-keys-dropped",
        ),
    ],
)
def test_parse_model_options(tool_mode: Any, model_options: Any, expected: ChatOptions) -> None:
    assert parse_model_options(tool_mode, model_options) == expected


@pytest.mark.parametrize(
    ("tool_mode", "model_options", "message"),
    [
        pytest.param(3, {}, "toolMode", id="tool-mode-enum-unknown"),
        pytest.param("sometimes", {}, "toolMode", id="tool-mode-string-unknown"),
        pytest.param(True, {}, "toolMode", id="tool-mode-bool"),
        pytest.param(None, [1], "modelOptions: expected an object", id="options-not-object"),
        pytest.param(None, {"temperature": "hot"}, r"modelOptions\.temperature", id="temp-str"),
        pytest.param(None, {"temperature": True}, r"modelOptions\.temperature", id="temp-bool"),
        pytest.param(None, {"temperature": 5}, r"temperature: 5 is outside", id="temp-range"),
        pytest.param(None, {"topP": 1.5}, r"modelOptions\.topP", id="top-p-range"),
        pytest.param(None, {"max_tokens": 0}, r"max_tokens: must be at least 1", id="max-zero"),
        pytest.param(None, {"maxTokens": 1.5}, r"modelOptions\.maxTokens", id="max-fraction"),
        pytest.param(None, {"maxTokens": "100"}, r"modelOptions\.maxTokens", id="max-string"),
        pytest.param(None, {"reasoning_effort": "max"}, "reasoning_effort", id="effort-unknown"),
        pytest.param(None, {"thinkingBudget": -1}, "thinkingBudget", id="budget-negative"),
        pytest.param(None, {"stop": [1]}, r"modelOptions\.stop", id="stop-not-strings"),
        pytest.param(None, {"stream": False}, r"modelOptions\.stream", id="reserved-stream"),
        pytest.param(None, {"messages": []}, r"modelOptions\.messages", id="reserved-messages"),
        pytest.param(None, {"top_p": 0.5, "topP": 0.9}, "top_p, topP disagree", id="conflict"),
    ],
)
def test_parse_model_options_rejects(tool_mode: Any, model_options: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_model_options(tool_mode, model_options)


# --- OpenAI: messages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        pytest.param(
            [system(TextPart("Be "), TextPart("brief."))],
            [{"role": "system", "content": "Be brief."}],
            id="system-text-joined",
        ),
        pytest.param(
            [user(TextPart("hi"), TextPart(" there"))],
            [{"role": "user", "content": "hi there"}],
            id="user-text-is-a-string",
        ),
        pytest.param(
            [user(TextPart("hi"), name="alice")],
            [{"role": "user", "content": "hi", "name": "alice"}],
            id="name-kept",
        ),
        pytest.param(
            [user(TextPart("hi"), name=""), user(TextPart("yo"), name="a b")],
            [{"role": "user", "content": "hi"}, {"role": "user", "content": "yo"}],
            id="empty-or-invalid-name-dropped",
        ),
        pytest.param(
            [user(TextPart("look"), IMAGE)],
            [{"role": "user", "content": [text("look"), IMAGE_URL]}],
            id="user-image-makes-a-part-list",
        ),
        pytest.param(
            [user(DataPart("image/bmp", "Qk0="))],
            [
                {
                    "role": "user",
                    "content": "[image/bmp attachment omitted: this API cannot take it]",
                }
            ],
            id="unsupported-image-becomes-a-note",
        ),
        pytest.param(
            [user(TextPart("file: "), DataPart("text/plain", b64("x = 1")))],
            [{"role": "user", "content": "file: x = 1"}],
            id="text-data-decoded",
        ),
        pytest.param(
            [user(UnknownPart({"kind": "x"}))],
            [{"role": "user", "content": '{"kind": "x"}'}],
            id="unknown-part-as-json",
        ),
        pytest.param(
            [user(TextPart("a"), *EPHEMERAL, TextPart("b")), user(*EPHEMERAL)],
            [{"role": "user", "content": "ab"}],
            id="ephemeral-parts-dropped",
        ),
        pytest.param(
            [assistant(ThinkingPart("hmm"), TextPart("Done."))],
            [{"role": "assistant", "content": "Done."}],
            id="thinking-dropped",
        ),
        pytest.param([assistant(ThinkingPart("hmm"))], [], id="thinking-only-assistant-dropped"),
        pytest.param(
            [assistant(CALL)],
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                        }
                    ],
                }
            ],
            id="tool-call-without-text-has-null-content",
        ),
        pytest.param(
            [assistant(TextPart("Reading."), ToolCallPart("c2", "ls", None))],
            [
                {
                    "role": "assistant",
                    "content": "Reading.",
                    "tool_calls": [
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "ls", "arguments": "{}"},
                        }
                    ],
                }
            ],
            id="text-and-tool-call",
        ),
        pytest.param(
            [assistant(ToolCallPart("c3", "say", {"text": "空"}))],
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c3",
                            "type": "function",
                            "function": {"name": "say", "arguments": '{"text": "空"}'},
                        }
                    ],
                }
            ],
            id="arguments-keep-non-ascii",
        ),
        pytest.param(
            [user(result("call_1", TextPart("x = 1"), CACHE, UnknownPart([1])))],
            [{"role": "tool", "tool_call_id": "call_1", "content": "x = 1[1]"}],
            id="tool-result-is-a-tool-message",
        ),
        pytest.param(
            [user(TextPart("and now?"), result("call_1", TextPart("ok")))],
            [
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
                {"role": "user", "content": "and now?"},
            ],
            id="tool-messages-before-the-rest",
        ),
        pytest.param(
            [
                user(result("call_1", TextPart("shot:"), IMAGE)),
                user(result("call_2", TextPart("ok"))),
            ],
            [
                {
                    "role": "tool",
                    "tool_call_id": "call_1",
                    "content": "shot:[image: attached in the next user message]",
                },
                {"role": "tool", "tool_call_id": "call_2", "content": "ok"},
                {
                    "role": "user",
                    "content": [text("Images from the result of tool call call_1:"), IMAGE_URL],
                },
            ],
            id="tool-result-images-follow-all-tool-messages",
        ),
    ],
)
def test_openai_messages(messages: list[Message], expected: list[dict[str, Any]]) -> None:
    assert openai_messages(messages) == expected


def test_openai_tool_loop_order() -> None:
    """Copilot's shape: one user message per tool result, then the next user question."""
    messages = [
        system(TextPart("sys"), CACHE),
        user(TextPart("q")),
        assistant(ToolCallPart("a", "f", {}), ToolCallPart("b", "f", {})),
        user(result("a", TextPart("1"))),
        user(result("b", TextPart("2"))),
        assistant(TextPart("done")),
        user(TextPart("next")),
    ]
    roles = [m["role"] for m in openai_messages(messages)]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]


# --- OpenAI: body and headers -------------------------------------------------------------------

MULTIPLY_SCHEMA = {
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "type": "object",
}


def openai_body(options: ChatOptions = NO_OPTIONS, **kwargs: Any) -> dict[str, Any]:
    tools = kwargs.pop("tools", [Tool("f", "does f", {"type": "object", "properties": {}})])
    max_tokens = kwargs.pop("max_tokens", None)
    return build_openai_body("m", [user(TextPart("hi"))], tools, options, max_tokens, **kwargs)


def test_openai_fixture_toolcall(wire: Path) -> None:
    recorded = json.loads((wire / "openai-chat-stream-usage-toolcall.request.json").read_text())
    tools = [Tool("multiply", "Multiply two numbers.", MULTIPLY_SCHEMA)]
    messages = [user(TextPart("What is 1231 * 2331?"))]
    assert build_openai_body("gpt-4o-mini", messages, tools, NO_OPTIONS, None) == recorded


def test_openrouter_fixture_passthrough(wire: Path) -> None:
    recorded = json.loads(
        (wire / "openrouter-chat-stream-cached-reasoning-usage.request.json").read_text()
    )
    knobs = {key: recorded[key] for key in ("models", "provider", "transforms")}
    options = parse_model_options(None, {**knobs, "_capturingTokenCorrelationId": "x"})
    messages = [user(TextPart("Who are you"))]
    assert build_openai_body(recorded["model"], messages, [], options, None) == recorded


@pytest.mark.parametrize(
    ("options", "kwargs", "expected"),
    [
        pytest.param(NO_OPTIONS, {"tools": []}, {}, id="no-tools-no-tool-keys"),
        pytest.param(NO_OPTIONS, {"max_tokens": 900}, {"max_tokens": 900}, id="max-tokens"),
        pytest.param(
            NO_OPTIONS,
            {"max_tokens": 900, "max_tokens_field": "max_completion_tokens"},
            {"max_completion_tokens": 900},
            id="max-completion-tokens",
        ),
        pytest.param(
            ChatOptions(tool_mode="required"), {}, {"tool_choice": "required"}, id="tool-required"
        ),
        pytest.param(
            ChatOptions(tool_mode="required"), {"tools": []}, {}, id="required-without-tools"
        ),
        pytest.param(
            ChatOptions(temperature=0.2, top_p=0.9, stop=["END"], reasoning_effort="high"),
            {},
            {"temperature": 0.2, "top_p": 0.9, "stop": ["END"], "reasoning_effort": "high"},
            id="sampling-options",
        ),
        pytest.param(ChatOptions(thinking_budget=4096), {}, {}, id="thinking-budget-not-sent"),
        pytest.param(
            ChatOptions(temperature=0.2, extra={"temperature": 0.7, "seed": 1, "stream": False}),
            {},
            {"temperature": 0.7, "seed": 1},
            id="extra-merged-last-but-not-over-structure",
        ),
    ],
)
def test_openai_body_options(
    options: ChatOptions, kwargs: dict[str, Any], expected: dict[str, Any]
) -> None:
    body = openai_body(options, **kwargs)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    structural = {"model", "messages", "stream", "stream_options", "tools"}
    assert {k: v for k, v in body.items() if k not in structural} == expected
    assert ("tools" in body) == bool(kwargs.get("tools", True))


@pytest.mark.parametrize(
    ("schema", "parameters"),
    [
        pytest.param(None, {"type": "object", "properties": {}}, id="none"),
        pytest.param({}, {"type": "object", "properties": {}}, id="empty"),
        pytest.param(
            {"properties": {"a": {}}}, {"type": "object", "properties": {"a": {}}}, id="untyped"
        ),
        pytest.param(MULTIPLY_SCHEMA, MULTIPLY_SCHEMA, id="kept"),
    ],
)
def test_openai_tool_schema(schema: Any, parameters: dict[str, Any]) -> None:
    (tool,) = openai_body(tools=[Tool("f", "d", schema)])["tools"]
    assert tool == {
        "type": "function",
        "function": {"name": "f", "description": "d", "parameters": parameters},
    }


@pytest.mark.parametrize(
    ("family", "base_url", "expected"),
    [
        pytest.param("gpt-4o", "https://api.openai.com/v1", "max_completion_tokens", id="openai"),
        pytest.param(
            "o3-mini", "https://api.openai.com/v1", "max_completion_tokens", id="openai-o"
        ),
        pytest.param(
            "gpt-5", "https://x.openai.azure.com/openai/v1", "max_completion_tokens", id="az-5"
        ),
        pytest.param("o4-mini", "https://x.openai.azure.com/", "max_completion_tokens", id="az-o"),
        pytest.param(
            "gpt-4.1", "https://x.cognitiveservices.azure.com/", "max_completion_tokens", id="az-41"
        ),
        pytest.param("gpt-4o", "https://x.openai.azure.com/", "max_tokens", id="az-4o"),
        pytest.param("gpt-5", "https://openrouter.ai/api/v1", "max_tokens", id="openrouter"),
        pytest.param("o3", "http://localhost:11434/v1", "max_tokens", id="ollama"),
        pytest.param("deepseek", "https://api.deepseek.com", "max_tokens", id="deepseek"),
    ],
)
def test_max_tokens_field_for(family: str, base_url: str, expected: str) -> None:
    assert max_tokens_field_for(family, base_url) == expected


@pytest.mark.parametrize(
    ("api_key", "extra", "expected"),
    [
        pytest.param(None, {}, {"Content-Type": "application/json"}, id="local-no-key"),
        pytest.param("", {}, {"Content-Type": "application/json"}, id="empty-key"),
        pytest.param(
            API_KEY,
            {"HTTP-Referer": "x"},
            {
                "Content-Type": "application/json",
                "HTTP-Referer": "x",
                "Authorization": f"Bearer {API_KEY}",
            },
            id="bearer-and-extra",
        ),
        pytest.param(
            None,
            {"authorization": "Bearer proxy", "content-type": "application/json; charset=utf-8"},
            {"authorization": "Bearer proxy", "content-type": "application/json; charset=utf-8"},
            id="configured-headers-replace-ours-whatever-the-case",
        ),
    ],
)
def test_openai_headers(
    api_key: str | None, extra: dict[str, str], expected: dict[str, str]
) -> None:
    assert openai_headers(api_key, extra) == expected


# --- Anthropic: messages ------------------------------------------------------------------------

CONTINUED = {"role": "user", "content": [text("(continued)")]}
TOOL_USE = {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a.py"}}


@pytest.mark.parametrize(
    ("messages", "expected_system", "expected_turns"),
    [
        pytest.param(
            [system(TextPart("Be brief.")), user(TextPart("hi")), system(TextPart("Late."))],
            [text("Be brief."), text("Late.")],
            [{"role": "user", "content": [text("hi")]}],
            id="system-messages-go-to-the-top",
        ),
        pytest.param(
            [system(TextPart(" ")), user(TextPart("hi"), TextPart(""), TextPart("\n"))],
            [],
            [{"role": "user", "content": [text("hi")]}],
            id="blank-text-dropped",
        ),
        pytest.param(
            [user(TextPart("a")), user(TextPart("b")), assistant(TextPart("c"))],
            [],
            [
                {"role": "user", "content": [text("a"), text("b")]},
                {"role": "assistant", "content": [text("c")]},
            ],
            id="same-role-merged",
        ),
        pytest.param(
            [assistant(TextPart("earlier answer")), user(TextPart("q"))],
            [],
            [
                CONTINUED,
                {"role": "assistant", "content": [text("earlier answer")]},
                {"role": "user", "content": [text("q")]},
            ],
            id="first-turn-made-user",
        ),
        pytest.param([system(TextPart("s"))], [text("s")], [CONTINUED], id="no-turns"),
        pytest.param(
            [
                user(
                    TextPart("see"),
                    IMAGE,
                    DataPart("application/pdf", "JVBERi0="),
                    DataPart("image/bmp", "Qk0="),
                    DataPart("application/json", b64('{"a": 1}')),
                    UnknownPart({"k": 1}),
                    *EPHEMERAL[1:],
                )
            ],
            [],
            [
                {
                    "role": "user",
                    "content": [
                        text("see"),
                        IMAGE_BLOCK,
                        {
                            "type": "document",
                            "source": {
                                "type": "base64",
                                "media_type": "application/pdf",
                                "data": "JVBERi0=",
                            },
                        },
                        text("[image/bmp attachment omitted: this API cannot take it]"),
                        text('{"a": 1}'),
                        text('{"k": 1}'),
                    ],
                }
            ],
            id="user-content-blocks",
        ),
        pytest.param(
            [user(TextPart("q")), assistant(ThinkingPart("hmm"), TextPart("ok"), CALL)],
            [],
            [
                {"role": "user", "content": [text("q")]},
                {"role": "assistant", "content": [text("ok"), TOOL_USE]},
            ],
            id="thinking-dropped-tool-use-kept",
        ),
        pytest.param(
            [
                user(TextPart("q")),
                assistant(ToolCallPart("call.1:x", "f", None), ToolCallPart("c2", "g", [1])),
                user(TextPart("also this"), result("call.1:x", TextPart("one"), IMAGE)),
                user(result("c2")),
            ],
            [],
            [
                {"role": "user", "content": [text("q")]},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "call_1_x", "name": "f", "input": {}},
                        {"type": "tool_use", "id": "c2", "name": "g", "input": {"value": [1]}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "call_1_x",
                            "content": [text("one"), IMAGE_BLOCK],
                        },
                        {"type": "tool_result", "tool_use_id": "c2"},
                        text("also this"),
                    ],
                },
            ],
            id="tool-results-merged-and-first",
        ),
    ],
)
def test_anthropic_messages(
    messages: list[Message],
    expected_system: list[dict[str, Any]],
    expected_turns: list[dict[str, Any]],
) -> None:
    assert anthropic_messages(messages) == (expected_system, expected_turns)


@pytest.mark.parametrize(
    ("messages", "expected_system", "expected_turns"),
    [
        pytest.param(
            [system(TextPart("sys"), CACHE), user(TextPart("a"), CACHE, TextPart("b"))],
            [text("sys", **EPHEMERAL_MARK)],
            [{"role": "user", "content": [text("a", **EPHEMERAL_MARK), text("b")]}],
            id="marks-the-previous-block",
        ),
        pytest.param(
            [user(TextPart("a")), assistant(CACHE, TextPart("b"))],
            [],
            [
                {"role": "user", "content": [text("a", **EPHEMERAL_MARK)]},
                {"role": "assistant", "content": [text("b")]},
            ],
            id="at-message-start-marks-the-previous-message",
        ),
        pytest.param(
            [assistant(CALL), user(result("call_1", TextPart("x"), CACHE))],
            [],
            [
                CONTINUED,
                {"role": "assistant", "content": [TOOL_USE]},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "call_1",
                            "content": [text("x")],
                            **EPHEMERAL_MARK,
                        }
                    ],
                },
            ],
            id="inside-a-tool-result-marks-the-result",
        ),
        pytest.param(
            [user(CACHE, TextPart("a"), CACHE, CACHE)],
            [],
            [{"role": "user", "content": [text("a", **EPHEMERAL_MARK)]}],
            id="nothing-before-or-twice",
        ),
        pytest.param(
            [user(*(p for n in range(6) for p in (TextPart(str(n)), CACHE)))],
            [],
            [
                {
                    "role": "user",
                    "content": [
                        text(str(n), **(EPHEMERAL_MARK if n >= 2 else {})) for n in range(6)
                    ],
                }
            ],
            id="only-the-last-four-kept",
        ),
    ],
)
def test_anthropic_cache_control(
    messages: list[Message],
    expected_system: list[dict[str, Any]],
    expected_turns: list[dict[str, Any]],
) -> None:
    assert anthropic_messages(messages) == (expected_system, expected_turns)


# --- Anthropic: body and headers ----------------------------------------------------------------

TOOL = Tool("f", "does f", {"type": "object", "properties": {}})
FRESH = [user(TextPart("hi"))]
TOOL_LOOP = [user(TextPart("hi")), assistant(CALL), user(result("call_1", TextPart("x")))]
ANSWERED = [*TOOL_LOOP, assistant(TextPart("done")), user(TextPart("next"))]


def test_anthropic_fixture_tooluse(wire: Path) -> None:
    recorded = json.loads((wire / "anthropic-stream-tooluse-empty-input.request.json").read_text())
    tools = [Tool("pelican_name_generator", "", {"properties": {}, "type": "object"})]
    messages = [user(TextPart("Generate one name for a pet pelican"))]
    options = parse_model_options(1, {"temperature": 1.0})
    body = build_anthropic_body("claude-haiku-4-5-20251001", messages, tools, options, 8192)
    assert body == recorded


@pytest.mark.parametrize(
    ("options", "messages", "max_tokens", "expected"),
    [
        pytest.param(NO_OPTIONS, FRESH, 4096, {}, id="defaults"),
        pytest.param(
            ChatOptions(tool_mode="required"),
            FRESH,
            4096,
            {"tool_choice": {"type": "any"}},
            id="any",
        ),
        pytest.param(
            ChatOptions(temperature=1.5, top_p=0.9, stop=["END"]),
            FRESH,
            4096,
            {"temperature": 1.0, "stop_sequences": ["END"]},
            id="temperature-clamped-and-wins-over-top-p",
        ),
        pytest.param(ChatOptions(top_p=0.9), FRESH, 4096, {"top_p": 0.9}, id="top-p"),
        pytest.param(
            ChatOptions(thinking_budget=2048, temperature=0.5, top_p=0.5),
            FRESH,
            8192,
            {"thinking": {"type": "enabled", "budget_tokens": 2048}},
            id="thinking-omits-sampling",
        ),
        pytest.param(
            ChatOptions(thinking_budget=100),
            ANSWERED,
            8192,
            {"thinking": {"type": "enabled", "budget_tokens": 1024}},
            id="thinking-raised-to-minimum",
        ),
        pytest.param(
            ChatOptions(thinking_budget=32000),
            FRESH,
            8192,
            {"thinking": {"type": "enabled", "budget_tokens": 8192 - 1024}},
            id="thinking-leaves-room-for-the-answer",
        ),
        pytest.param(
            ChatOptions(thinking_budget=1024, temperature=0.3),
            FRESH,
            2047,
            {"temperature": 0.3},
            id="no-room-for-thinking",
        ),
        pytest.param(
            ChatOptions(thinking_budget=2048), TOOL_LOOP, 8192, {}, id="no-thinking-in-tool-loop"
        ),
        pytest.param(
            ChatOptions(thinking_budget=2048),
            [user(TextPart("q")), assistant(TextPart("prefill"))],
            8192,
            {},
            id="no-thinking-after-final-assistant",
        ),
        pytest.param(
            ChatOptions(thinking_budget=2048, tool_mode="required"),
            FRESH,
            8192,
            {"tool_choice": {"type": "any"}},
            id="forced-tool-wins-over-thinking",
        ),
        pytest.param(
            ChatOptions(extra={"top_k": 5, "metadata": {"user_id": "u"}, "model": "x"}),
            FRESH,
            4096,
            {"top_k": 5, "metadata": {"user_id": "u"}},
            id="extra-merged-but-not-over-structure",
        ),
    ],
)
def test_anthropic_body_options(
    options: ChatOptions, messages: list[Message], max_tokens: int, expected: dict[str, Any]
) -> None:
    body = build_anthropic_body("claude", messages, [TOOL], options, max_tokens)
    assert body["stream"] is True
    assert body["max_tokens"] == max_tokens
    assert body["model"] == "claude"
    assert body["tools"] == [
        {"name": "f", "description": "does f", "input_schema": {"type": "object", "properties": {}}}
    ]
    structural = {"model", "messages", "stream", "tools", "max_tokens"}
    assert {k: v for k, v in body.items() if k not in structural} == expected


def test_anthropic_body_without_tools() -> None:
    options = ChatOptions(tool_mode="required")
    body = build_anthropic_body("claude", [system(TextPart("s")), *FRESH], [], options, 100)
    assert "tools" not in body
    assert "tool_choice" not in body
    assert body["system"] == [text("s")]


@pytest.mark.parametrize(
    ("api_key", "extra", "expected"),
    [
        pytest.param(
            API_KEY,
            {},
            {
                "content-type": "application/json",
                "anthropic-version": "2023-06-01",
                "x-api-key": API_KEY,
            },
            id="key",
        ),
        pytest.param(
            API_KEY,
            {"anthropic-beta": "b", "Anthropic-Version": "2099-01-01", "X-Api-Key": "other"},
            {
                "content-type": "application/json",
                "anthropic-beta": "b",
                "Anthropic-Version": "2099-01-01",
                "x-api-key": API_KEY,
            },
            id="extra-headers-but-the-key-is-ours",
        ),
        pytest.param(
            "",
            {},
            {"content-type": "application/json", "anthropic-version": "2023-06-01"},
            id="no-key",
        ),
    ],
)
def test_anthropic_headers(api_key: str, extra: dict[str, str], expected: dict[str, str]) -> None:
    assert anthropic_headers(api_key, extra) == expected


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            build_openai_body("m", TOOL_LOOP, [TOOL], ChatOptions(extra={"seed": 1}), 100),
            id="openai",
        ),
        pytest.param(
            build_anthropic_body("m", TOOL_LOOP, [TOOL], ChatOptions(thinking_budget=2048), 4096),
            id="anthropic",
        ),
    ],
)
def test_bodies_are_json_and_hold_no_key(body: dict[str, Any]) -> None:
    assert API_KEY not in json.dumps(body)
    assert json.loads(json.dumps(body)) == body
