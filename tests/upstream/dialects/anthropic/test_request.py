"""The Anthropic Messages request: ARCHITECTURE §3 messages as its system prompt and turns, cache
marks, the body with its options and tools (a wire fixture's recorded request rebuilt), and the
headers; and neither dialect's body holds the API key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness.fake_upstream.thinking import redacted_data, signature_of, thinking_error
from tests.upstream.dialects.request_parts import (
    API_KEY,
    CACHE,
    CALL,
    EPHEMERAL,
    EPHEMERAL_MARK,
    IMAGE,
    IMAGE_BLOCK,
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
    Part,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    UnknownPart,
)
from tokengauge.upstream.dialects.anthropic.request import (
    anthropic_headers,
    anthropic_messages,
    build_anthropic_body,
)
from tokengauge.upstream.dialects.openai.request import build_openai_body
from tokengauge.upstream.options import ChatOptions, parse_model_options

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
    # The recorded request had no breakpoints; ours mark the tool and the last block.
    recorded["tools"][-1] |= EPHEMERAL_MARK
    recorded["messages"][-1]["content"][-1] |= EPHEMERAL_MARK
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
        {
            "name": "f",
            "description": "does f",
            "input_schema": {"type": "object", "properties": {}},
            **EPHEMERAL_MARK,
        }
    ]
    structural = {"model", "messages", "stream", "tools", "max_tokens"}
    assert {k: v for k, v in body.items() if k not in structural} == expected


def test_anthropic_body_without_tools() -> None:
    options = ChatOptions(tool_mode="required")
    body = build_anthropic_body("claude", [system(TextPart("s")), *FRESH], [], options, 100)
    assert "tools" not in body
    assert "tool_choice" not in body
    assert body["system"] == [text("s", **EPHEMERAL_MARK)]


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


THOUGHT = "The user wants a.py fixed; I should read it first."
SIGNED = ThinkingPart(THOUGHT, signature=signature_of(THOUGHT))
REDACTED = ThinkingPart("", redacted=redacted_data(1))


@pytest.mark.parametrize(
    ("parts", "first"),
    [
        pytest.param(
            [ThinkingPart("The user wants"), ThinkingPart(" a.py fixed"), SIGNED, CALL],
            {"type": "thinking", "thinking": THOUGHT, "signature": signature_of(THOUGHT)},
            id="signed",
        ),
        pytest.param(
            [REDACTED, CALL], {"type": "redacted_thinking", "data": redacted_data(1)}, id="redacted"
        ),
        pytest.param(
            [TextPart("Reading a.py."), SIGNED, CALL],
            {"type": "thinking", "thinking": THOUGHT, "signature": signature_of(THOUGHT)},
            id="moved-first",
        ),
    ],
)
def test_signed_thinking_goes_back_and_thinking_stays_on_in_a_tool_loop(
    parts: list[Part], first: dict[str, Any]
) -> None:
    """Thinking survives tool use: the tool-use turn starts with the block the API streamed, and
    the API's rules (the strict test upstream's) accept the body with thinking on."""
    messages = [
        user(TextPart("fix a.py")),
        assistant(*parts),
        user(result("call_1", TextPart("x"))),
    ]
    body = build_anthropic_body("claude", messages, [TOOL], ChatOptions(thinking_budget=2048), 8192)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    turn = body["messages"][1]["content"]
    assert turn[0] == first
    assert [block["type"] for block in turn].count("thinking") <= 1  # shown pieces are not sent
    assert thinking_error(body) is None


def test_without_its_thinking_a_tool_loop_goes_without_thinking() -> None:
    """What the strict upstream refuses is never sent: thinking off instead."""
    messages = [user(TextPart("fix a.py")), assistant(ThinkingPart("shown only"), CALL)]
    messages.append(user(result("call_1", TextPart("x"))))
    body = build_anthropic_body("claude", messages, [TOOL], ChatOptions(thinking_budget=2048), 8192)
    assert "thinking" not in body
    assert thinking_error(body) is None
    refused = {**body, "thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert "must start with a thinking block" in (thinking_error(refused) or "")


def test_an_altered_thinking_block_is_refused_by_the_strict_upstream() -> None:
    altered = ThinkingPart(THOUGHT + " (edited)", signature=signature_of(THOUGHT))
    messages = [user(TextPart("fix a.py")), assistant(altered, CALL)]
    messages.append(user(result("call_1", TextPart("x"))))
    body = build_anthropic_body("claude", messages, [TOOL], ChatOptions(thinking_budget=2048), 8192)
    assert "Invalid `signature`" in (thinking_error(body) or "")
