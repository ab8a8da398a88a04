"""The OpenAI Chat Completions request: ARCHITECTURE §3 messages as its messages, the body with
its options and tools (a wire fixture's recorded request rebuilt), the `max_tokens` field, and the
headers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.upstream.dialects.request_parts import (
    API_KEY,
    CACHE,
    CALL,
    EPHEMERAL,
    IMAGE,
    IMAGE_URL,
    NO_OPTIONS,
    assistant,
    b64,
    result,
    system,
    text,
    user,
)
from tokengauge.messages import (
    DataPart,
    Message,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    UnknownPart,
)
from tokengauge.upstream.dialects.openai.request import (
    build_openai_body,
    max_tokens_field_for,
    openai_headers,
    openai_messages,
)
from tokengauge.upstream.options import ChatOptions, parse_model_options

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
            [{"role": "assistant", "content": "Done.", "reasoning_content": "hmm"}],
            id="thinking-in-the-usual-field",
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
