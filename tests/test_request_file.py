"""Tests for tokengauge.request_file: Chat Completions and wire requests alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tokengauge.messages import (
    DataPart,
    InvalidInput,
    Message,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
)
from tokengauge.request_file import read_request

PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
)


def one(message: dict[str, Any]) -> Message:
    messages, tools = read_request({"messages": [message]})
    assert tools == []
    assert len(messages) == 1
    return messages[0]


# --- the OpenAI shape ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param(
            {"role": "user", "content": "What is 2 + 2?"},
            Message(role="user", content=[TextPart("What is 2 + 2?")]),
            id="string-content",
        ),
        pytest.param(
            {"role": "system", "content": "Be brief."},
            Message(role="system", content=[TextPart("Be brief.")]),
            id="system",
        ),
        pytest.param(
            {"role": "developer", "content": "Be brief."},
            Message(role="system", content=[TextPart("Be brief.")]),
            id="developer-is-system",
        ),
        pytest.param(
            {"role": "user", "content": "hi", "name": "alice"},
            Message(role="user", content=[TextPart("hi")], name="alice"),
            id="name-kept",
        ),
        pytest.param(
            {"role": "assistant", "content": None},
            Message(role="assistant", content=[]),
            id="null-content",
        ),
        pytest.param(
            {"role": "user", "content": ""},
            Message(role="user", content=[TextPart("")]),
            id="empty-string",
        ),
        pytest.param(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this image?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
                    {"type": "text", "text": "And this one?"},
                    {
                        "type": "image_url",
                        "image_url": {"url": f"data:image/jpeg;base64,{PNG_B64}", "detail": "high"},
                    },
                ],
            },
            Message(
                role="user",
                content=[
                    TextPart("What is in this image?"),
                    DataPart("image/png", PNG_B64),
                    TextPart("And this one?"),
                    DataPart("image/jpeg", PNG_B64),
                ],
            ),
            id="text-and-data-url-images",
        ),
        pytest.param(
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
                ],
            },
            Message(
                role="user",
                content=[
                    UnknownPart(
                        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
                    )
                ],
            ),
            id="remote-image-url-unknown",
        ),
        pytest.param(
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AA"}}]},
            Message(
                role="user",
                content=[UnknownPart({"type": "input_audio", "input_audio": {"data": "AA"}})],
            ),
            id="other-part-unknown",
        ),
        pytest.param(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_abc",
                        "type": "function",
                        "function": {"name": "multiply", "arguments": '{"a": 1231, "b": 2331}'},
                    },
                    {
                        "id": "call_def",
                        "type": "function",
                        "function": {"name": "now", "arguments": ""},
                    },
                ],
            },
            Message(
                role="assistant",
                content=[
                    ToolCallPart("call_abc", "multiply", {"a": 1231, "b": 2331}),
                    ToolCallPart("call_def", "now", {}),
                ],
            ),
            id="tool-calls",
        ),
        pytest.param(
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"a": 1'},
                    }
                ],
            },
            Message(
                role="assistant",
                content=[TextPart("Let me check."), ToolCallPart("call_1", "f", '{"a": 1')],
            ),
            id="invalid-json-arguments-kept-as-string",
        ),
        pytest.param(
            {"role": "tool", "tool_call_id": "call_abc", "content": "2869461"},
            Message(role="user", content=[ToolResultPart("call_abc", [TextPart("2869461")])]),
            id="tool-result",
        ),
        pytest.param(
            {
                "role": "tool",
                "tool_call_id": "call_abc",
                "content": [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}],
            },
            Message(
                role="user",
                content=[ToolResultPart("call_abc", [TextPart("line 1"), TextPart("line 2")])],
            ),
            id="tool-result-parts",
        ),
    ],
)
def test_openai_messages(message: dict[str, Any], expected: Message) -> None:
    assert one(message) == expected


def test_a_whole_conversation() -> None:
    messages, tools = read_request(
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "Use tools."},
                {"role": "user", "content": "What is 1231 * 2331?"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "multiply", "arguments": '{"a":1231,"b":2331}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "2869461"},
                {"role": "assistant", "content": "2,869,461"},
            ],
        }
    )
    assert [m.role for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert messages[2].content == [ToolCallPart("c1", "multiply", {"a": 1231, "b": 2331})]
    assert messages[3].content == [ToolResultPart("c1", [TextPart("2869461")])]
    assert tools == []


# --- the wire shape (ARCHITECTURE §3) ---------------------------------------------------------

WIRE_MESSAGE = {
    "role": "assistant",
    "name": "bot",
    "content": [
        {"type": "thinking", "value": "need the file"},
        {"type": "text", "value": "Reading it."},
        {"type": "toolCall", "callId": "c9", "name": "read", "input": {"path": "a.py"}},
        {"type": "data", "mimeType": "cache_control", "data": ""},
    ],
}


def test_design_message_passes_through() -> None:
    assert one(WIRE_MESSAGE) == Message(
        role="assistant",
        name="bot",
        content=[
            ThinkingPart("need the file"),
            TextPart("Reading it."),
            ToolCallPart("c9", "read", {"path": "a.py"}),
            DataPart("cache_control", ""),
        ],
    )


def test_design_tool_result_passes_through() -> None:
    message = {
        "role": "user",
        "content": [
            {
                "type": "toolResult",
                "callId": "c9",
                "content": [
                    {"type": "text", "value": "print('hi')"},
                    {"type": "data", "mimeType": "image/png", "data": PNG_B64},
                ],
            },
            {"type": "unknown", "json": {"x": 1}},
        ],
    }
    assert one(message) == Message(
        role="user",
        content=[
            ToolResultPart("c9", [TextPart("print('hi')"), DataPart("image/png", PNG_B64)]),
            UnknownPart({"x": 1}),
        ],
    )


def test_shapes_can_mix_per_message() -> None:
    messages, _ = read_request({"messages": [{"role": "user", "content": "plain"}, WIRE_MESSAGE]})
    assert messages[0] == Message(role="user", content=[TextPart("plain")])
    assert messages[1].content[2] == ToolCallPart("c9", "read", {"path": "a.py"})


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"role": "developer", "content": []}, id="developer"),
        pytest.param({"role": "tool", "tool_call_id": "c1", "content": []}, id="tool"),
    ],
)
def test_openai_roles_with_empty_part_list(message: dict[str, Any]) -> None:
    # An empty part list is valid OpenAI input; it must not be mistaken for the wire's shape.
    converted = one(message)
    assert converted.role in ("system", "user")


# --- tools --------------------------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        pytest.param(
            {
                "type": "function",
                "function": {"name": "sq", "description": "Square a number.", "parameters": SCHEMA},
            },
            Tool("sq", "Square a number.", SCHEMA),
            id="openai",
        ),
        pytest.param(
            {"type": "function", "function": {"name": "now"}},
            Tool("now", "", None),
            id="openai-minimal",
        ),
        pytest.param(
            {"type": "function", "function": {"name": "now", "description": None}},
            Tool("now", "", None),
            id="openai-null-description",
        ),
        pytest.param(
            {"name": "sq", "description": "Square a number.", "inputSchema": SCHEMA},
            Tool("sq", "Square a number.", SCHEMA),
            id="design",
        ),
        pytest.param({"name": "sq"}, Tool("sq", "", None), id="design-minimal"),
    ],
)
def test_tools(tool: dict[str, Any], expected: Tool) -> None:
    messages, tools = read_request({"messages": [], "tools": [tool]})
    assert messages == []
    assert tools == [expected]


def test_null_tools_are_no_tools() -> None:
    assert read_request({"messages": [], "tools": None}) == ([], [])


# --- real captured request bodies ---------------------------------------------------------------


def test_openai_fixture_request(wire: Path) -> None:
    body = json.loads((wire / "openai-chat-stream-usage-toolcall.request.json").read_text())
    messages, tools = read_request(body)
    assert len(messages) == len(body["messages"]) == 1
    assert messages[0] == Message(role="user", content=[TextPart("What is 1231 * 2331?")])
    assert len(tools) == 1
    function = body["tools"][0]["function"]
    assert tools[0] == Tool(function["name"], function["description"], function["parameters"])
    assert tools[0].name == "multiply"


def test_openrouter_fixture_request(wire: Path) -> None:
    body = json.loads(
        (wire / "openrouter-chat-stream-cached-reasoning-usage.request.json").read_text()
    )
    messages, tools = read_request(body)
    assert messages == [Message(role="user", content=[TextPart("Who are you")])]
    assert tools == []


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        pytest.param([], "object with a `messages` list", id="not-an-object"),
        pytest.param("messages", "object with a `messages` list", id="a-string"),
        pytest.param({}, "`messages`", id="missing-messages"),
        pytest.param({"messages": "hi"}, "`messages`", id="messages-not-a-list"),
        pytest.param({"messages": [5]}, "messages[0]", id="message-not-an-object"),
        pytest.param(
            {"messages": [{"role": "user", "content": "a"}, {"role": "robot", "content": "x"}]},
            "messages[1].role",
            id="bad-role",
        ),
        pytest.param({"messages": [{"content": "x"}]}, "messages[0].role", id="missing-role"),
        pytest.param(
            {"messages": [{"role": "robot", "content": [{"type": "text", "value": "x"}]}]},
            "messages[0]",
            id="bad-role-design-shape",
        ),
        pytest.param(
            {"messages": [{"role": "user", "content": 42}]},
            "content must be a string or a list",
            id="bad-content",
        ),
        pytest.param(
            {"messages": [{"role": "user", "content": {"text": "hi"}}]},
            "content must be a string or a list",
            id="content-object",
        ),
        pytest.param(
            {"messages": [{"role": "user", "content": [{"type": "toolCall", "name": "x"}]}]},
            "messages[0].content[0]",
            id="design-part-missing-field",
        ),
        pytest.param({"messages": [], "tools": [5]}, "tools[0]", id="tool-not-an-object"),
        pytest.param({"messages": [], "tools": [{}]}, "tools[0]", id="tool-without-name"),
    ],
)
def test_bad_input_is_invalid_input(data: Any, fragment: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        read_request(data)
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    "tool_calls",
    [
        pytest.param(["call_1"], id="call-not-an-object"),
        pytest.param([{"id": "c1", "function": "multiply"}], id="function-not-an-object"),
        pytest.param("call_1", id="not-a-list"),
    ],
)
def test_bad_tool_calls_are_invalid_input(tool_calls: Any) -> None:
    data = {"messages": [{"role": "assistant", "content": None, "tool_calls": tool_calls}]}
    with pytest.raises(InvalidInput) as caught:
        read_request(data)
    assert "messages[0]" in str(caught.value)
