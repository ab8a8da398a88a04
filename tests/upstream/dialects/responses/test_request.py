"""The OpenAI Responses request: wire messages as input items in the API's documented shapes
(messages, function calls and their outputs, reasoning items sent back), flat function tools, and
the body's options; the test upstream's checks of reasoning items, as strict as the API's."""

from __future__ import annotations

import pytest

from tests.harness.fake_upstream.responses import (
    NO_REASONING,
    NOT_STORED,
    NOT_VERIFIED,
    encrypted_of,
    input_error,
    reasoning_of,
)
from tests.upstream.dialects.request_parts import (
    CALL,
    EPHEMERAL,
    IMAGE,
    NO_OPTIONS,
    PNG,
    assistant,
    user,
)
from tokengauge.messages import Message, TextPart, ThinkingPart, Tool, ToolResultPart
from tokengauge.upstream.dialects.responses.request import build_responses_body, responses_input
from tokengauge.upstream.options import ChatOptions

REASONING = ThinkingPart("", id="rs_test000001", encrypted=encrypted_of("rs_test000001", "Plan."))
SHOWN = ThinkingPart("Plan.")
RESULT = ToolResultPart("call_1", [TextPart("x = 1")])
TOOL = Tool("read_file", "Read a file.", {"type": "object", "properties": {}})


def test_messages_calls_and_outputs_in_the_documented_shapes():
    messages = [
        Message("system", [TextPart("Be brief.")]),
        user(TextPart("Look: "), IMAGE, *EPHEMERAL),
        assistant(TextPart("Reading."), CALL),
        user(RESULT),
    ]
    assert responses_input(messages) == [
        {"role": "system", "content": [{"type": "input_text", "text": "Be brief."}]},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Look: "},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
            ],
        },
        {"role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path": "a.py"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "x = 1"},
    ]


def test_a_reasoning_item_goes_back_in_its_place_and_shown_thinking_does_not():
    items = responses_input(
        [user(TextPart("Go.")), assistant(SHOWN, REASONING, CALL), user(RESULT)]
    )
    assert [item.get("type", item.get("role")) for item in items] == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_test000001",
        "summary": [],
        "encrypted_content": REASONING.encrypted,
    }
    # A thinking part with encrypted content but no item id cannot be sent back.
    orphan = ThinkingPart("", encrypted="gAAAAB")
    assert [i.get("type") for i in responses_input([assistant(orphan, CALL)])] == ["function_call"]


def test_the_body_stores_nothing_and_asks_for_encrypted_reasoning_with_an_effort():
    body = build_responses_body(
        "gpt-5", [user(TextPart("hi"))], [TOOL], ChatOptions(reasoning_effort="high"), 512
    )
    assert body["store"] is False and body["stream"] is True
    assert body["max_output_tokens"] == 512
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        }
    ]
    plain = build_responses_body("gpt-4.1", [user(TextPart("hi"))], [], NO_OPTIONS, 512)
    assert "reasoning" not in plain and "include" not in plain and "tools" not in plain


def body_of(*messages: Message) -> dict[str, object]:
    return build_responses_body("gpt-5", list(messages), [TOOL], NO_OPTIONS, 100)


ISSUED = {"call_1": "rs_test000001"}  # the test upstream made call_1 after that reasoning


def test_the_test_upstream_takes_the_reasoning_sent_back_unchanged():
    sent = body_of(user(TextPart("Go.")), assistant(REASONING, CALL), user(RESULT))
    assert input_error(sent, ISSUED) is None
    assert reasoning_of("rs_test000001", REASONING.encrypted) == "Plan."


@pytest.mark.parametrize(
    ("thinking", "error"),
    [
        pytest.param(
            None,
            NO_REASONING.format(call_item="fc_test000001", item_id="rs_test000001"),
            id="missing",
        ),
        pytest.param(
            ThinkingPart(
                "", id="rs_test000001", encrypted=REASONING.encrypted.replace("g", "h", 2)
            ),  # type: ignore[union-attr]
            NOT_VERIFIED.format(item_id="rs_test000001"),
            id="altered",
        ),
        pytest.param(
            ThinkingPart("", id="rs_test000001", encrypted=encrypted_of("rs_test000002", "Plan.")),
            NOT_VERIFIED.format(item_id="rs_test000001"),
            id="another-items",
        ),
    ],
)
def test_the_test_upstream_refuses_what_the_api_refuses(thinking: ThinkingPart | None, error: str):
    answer = assistant(thinking, CALL) if thinking else assistant(CALL)
    assert input_error(body_of(user(TextPart("Go.")), answer, user(RESULT)), ISSUED) == error


def test_a_reasoning_item_without_its_content_is_not_stored_anywhere():
    body = {"input": [{"type": "reasoning", "id": "rs_x", "summary": []}]}
    assert input_error(body, {}) == NOT_STORED.format(item_id="rs_x")
