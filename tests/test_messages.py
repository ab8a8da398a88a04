"""Tests for tokengauge.messages: ARCHITECTURE §3 JSON in camelCase, both ways, and readable input
errors."""

from __future__ import annotations

import json
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
    camel,
    structure,
    unstructure,
)
from tokengauge.protocol import CountTokensParams

# Each part as ARCHITECTURE §3 writes it on the wire, and as the Python object.
PARTS: list[Any] = [
    pytest.param({"type": "text", "value": "hello"}, TextPart("hello"), id="text"),
    pytest.param({"type": "thinking", "value": "hmm…"}, ThinkingPart("hmm…"), id="thinking"),
    pytest.param(
        {"type": "toolCall", "callId": "call_1", "name": "read", "input": {"path": "a.py"}},
        ToolCallPart("call_1", "read", {"path": "a.py"}),
        id="tool-call",
    ),
    pytest.param(
        {"type": "data", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        DataPart("image/png", "iVBORw0KGgo="),
        id="data",
    ),
    pytest.param(
        {"type": "unknown", "json": {"kind": "x", "n": [1, 2]}},
        UnknownPart({"kind": "x", "n": [1, 2]}),
        id="unknown",
    ),
    pytest.param(
        {
            "type": "toolResult",
            "callId": "call_1",
            "content": [
                {"type": "text", "value": "result"},
                {"type": "data", "mimeType": "cache_control", "data": ""},
                {
                    "type": "toolResult",
                    "callId": "inner",
                    "content": [{"type": "thinking", "value": "deep"}],
                },
            ],
        },
        ToolResultPart(
            "call_1",
            [
                TextPart("result"),
                DataPart("cache_control", ""),
                ToolResultPart("inner", [ThinkingPart("deep")]),
            ],
        ),
        id="tool-result-nested",
    ),
]


@pytest.mark.parametrize(("wire", "part"), PARTS)
def test_part_round_trip(wire: dict[str, Any], part: Part) -> None:
    message_json = {"role": "user", "content": [wire]}
    message = structure(message_json, Message, "message")
    assert message == Message(role="user", content=[part])

    written = unstructure(message)
    assert written["role"] == "user"
    assert written["content"] == [wire]
    assert structure(written, Message, "message") == message
    # What goes out is plain JSON.
    assert json.loads(json.dumps(written)) == written


def test_message_round_trip_with_name() -> None:
    message = Message(
        role="assistant",
        name="bot",
        content=[ThinkingPart("plan"), TextPart("ok"), ToolCallPart("c1", "run", {"cmd": "ls"})],
    )
    written = unstructure(message)
    assert written["name"] == "bot"
    assert [p["type"] for p in written["content"]] == ["thinking", "text", "toolCall"]
    assert structure(written, Message, "message") == message


def test_defaults_for_optional_fields() -> None:
    message = structure(
        {
            "role": "user",
            "content": [
                {"type": "toolCall", "callId": "c1", "name": "now"},
                {"type": "toolResult", "callId": "c1"},
                {"type": "data", "mimeType": "image/png"},
                {"type": "unknown"},
            ],
        },
        Message,
        "message",
    )
    assert message == Message(
        role="user",
        content=[
            ToolCallPart("c1", "now", {}),
            ToolResultPart("c1", []),
            DataPart("image/png", ""),
            UnknownPart(None),
        ],
    )
    assert message.name is None
    assert structure({"role": "system"}, Message, "message") == Message(role="system")


def test_extra_keys_are_ignored() -> None:
    message = structure(
        {"role": "user", "content": [{"type": "text", "value": "x", "extra": 1}], "id": 7},
        Message,
        "message",
    )
    assert message == Message(role="user", content=[TextPart("x")])


def test_tool_round_trip() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tool = Tool("sq", "Square.", schema)
    written = unstructure(tool)
    assert written == {"name": "sq", "description": "Square.", "inputSchema": schema}
    assert structure(written, Tool, "tool") == tool
    assert structure({"name": "sq"}, Tool, "tool") == Tool("sq", "", None)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("call_id", "callId", id="call_id"),
        pytest.param("mime_type", "mimeType", id="mime_type"),
        pytest.param("max_input_tokens", "maxInputTokens", id="three-words"),
        pytest.param("input_per_m_tok", "inputPerMTok", id="single-letter-word"),
        pytest.param("name", "name", id="one-word"),
    ],
)
def test_camel(name: str, expected: str) -> None:
    assert camel(name) == expected


# --- errors -------------------------------------------------------------------------------------


def count_params(second_input: Any) -> dict[str, Any]:
    return {"modelId": "gpt-4o", "inputs": ["fine", second_input]}


@pytest.mark.parametrize(
    ("params", "fragments"),
    [
        pytest.param(
            count_params({"role": "robot", "content": []}),
            ["inputs[1]", "role"],
            id="bad-role",
        ),
        pytest.param(count_params({"content": []}), ["inputs[1]", "role"], id="missing-role"),
        pytest.param(
            count_params({"role": "user", "content": [{"type": "toolCall", "name": "x"}]}),
            ["inputs[1].content[0]", "callId"],
            id="missing-field",
        ),
        pytest.param(
            count_params({"role": "user", "content": [{"type": "picture", "value": "x"}]}),
            ["inputs[1].content[0]"],
            id="unknown-part-type",
        ),
        pytest.param(
            count_params({"role": "user", "content": [{"value": "x"}]}),
            ["inputs[1].content[0]"],
            id="part-without-type",
        ),
        pytest.param(
            count_params(
                {
                    "role": "user",
                    "content": [
                        {"type": "toolResult", "callId": "c", "content": [{"type": "text"}]}
                    ],
                }
            ),
            ["inputs[1].content[0].content[0]", "value"],
            id="nested-missing-field",
        ),
        pytest.param(count_params(42), ["inputs[1]", "string", "message"], id="number-input"),
        pytest.param(count_params(None), ["inputs[1]", "string", "message"], id="null-input"),
        pytest.param(count_params([1]), ["inputs[1]", "string", "message"], id="list-input"),
        pytest.param({"inputs": []}, ["modelId"], id="missing-model-id"),
    ],
)
def test_invalid_input_names_the_path(params: dict[str, Any], fragments: list[str]) -> None:
    with pytest.raises(InvalidInput) as caught:
        structure(params, CountTokensParams, "params")
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, message


def test_invalid_input_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="params"):
        structure({"modelId": "m", "inputs": [3.5]}, CountTokensParams, "params")


def test_invalid_input_uses_the_given_name() -> None:
    with pytest.raises(InvalidInput, match=r"messages\[3\]"):
        structure({"role": "nobody"}, Message, "messages[3]")


def test_numbers_json_cannot_carry_go_out_as_null(caplog: pytest.LogCaptureFixture) -> None:
    """Python writes NaN and infinity as `NaN`/`Infinity`, which VS Code's client cannot parse (it
    then stops the server): whatever the source, a payload goes out as JSON."""
    inf, nan = float("inf"), float("nan")
    payload = {"cost": inf, "history": [{"costUsd": -inf, "ratios": {"text": nan}}], "ok": 1.5}
    out = unstructure(payload)
    history = [{"costUsd": None, "ratios": {"text": None}}]
    assert out == {"cost": None, "history": history, "ok": 1.5}
    json.dumps(out, allow_nan=False)
    assert unstructure(ToolCallPart("c", "t", {"x": inf}))["input"] == {"x": None}
    assert "inf is not a JSON number" in caplog.text
