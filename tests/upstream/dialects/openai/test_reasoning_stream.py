"""upstream.dialects.openai.reasoning_stream: a message's reasoning gathered as it came, in every
field a server streams it in (the captures cover each field once; these, the edges)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.upstream.dialects.stream_cases import feed_all
from tokengauge.upstream.dialects.events import (
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
)
from tokengauge.upstream.dialects.openai.reasoning_stream import ThinkTags
from tokengauge.upstream.dialects.openai.stream import OpenAIStreamParser


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def block(events: list[StreamEvent]) -> ThinkingBlock:
    (found,) = [e for e in events if isinstance(e, ThinkingBlock)]
    return found


def test_details_pieces_of_one_type_and_index_merge_and_show_once():
    # As OpenRouter streams Claude: the same text in `reasoning` and in the details, the
    # signature in a last piece with an empty text.
    pieces = [
        {"reasoning": "Two ", "reasoning_details": [{"type": "reasoning.text", "text": "Two "}]},
        {
            "reasoning": "steps.",
            "reasoning_details": [{"type": "reasoning.text", "text": "steps."}],
        },
        {"reasoning_details": [{"type": "reasoning.text", "text": "", "signature": "c2ln"}]},
        {"reasoning_details": [{"type": "reasoning.encrypted", "data": "gAAA", "index": 1}]},
        {"reasoning_details": [{"type": "reasoning.encrypted", "data": "BBB=", "index": 1}]},
        {"content": "Done."},
    ]
    events = feed_all(OpenAIStreamParser(), [*map(chunk, pieces), "[DONE]"])
    shown = [e.value for e in events if isinstance(e, ThinkingDelta)]
    assert shown == ["Two ", "steps."]
    assert block(events) == ThinkingBlock(
        "Two steps.",
        field="reasoning",
        details=[
            {"type": "reasoning.text", "text": "Two steps.", "signature": "c2ln"},
            {"type": "reasoning.encrypted", "data": "gAAABBB=", "index": 1},
        ],
    )


def test_details_alone_are_shown_from_their_text_and_summary():
    # MiniMax with `reasoning_split` in some builds, OpenAI's summaries through OpenRouter: no
    # `reasoning` field beside the details.
    pieces = [
        {"reasoning_details": [{"type": "reasoning.summary", "summary": "**Plan**", "index": 0}]},
        {"reasoning_details": [{"type": "reasoning.text", "text": "Read it.", "index": 1}]},
    ]
    events = feed_all(OpenAIStreamParser(), [*map(chunk, pieces), "[DONE]"])
    assert [e.value for e in events if isinstance(e, ThinkingDelta)] == ["**Plan**", "Read it."]
    assert block(events).thinking == "**Plan**Read it."
    assert block(events).field is None  # nothing came in a text field: the details go back


def test_gemini_signatures_ride_with_their_calls_and_the_message():
    call = {
        "index": 0,
        "id": "function-call-1",
        "type": "function",
        "function": {"name": "check_flight", "arguments": '{"flight":"AA100"}'},
        "extra_content": {"google": {"thought_signature": "<Signature A>"}},
    }
    second = {"index": 1, "id": "function-call-2", "function": {"name": "book", "arguments": "{}"}}
    message = {"extra_content": {"google": {"thought_signature": "<Signature T>"}}}
    items = [chunk(message), chunk({"tool_calls": [call, second]}, "tool_calls"), "[DONE]"]
    events = feed_all(OpenAIStreamParser(), items)
    assert [e.call_id for e in events if isinstance(e, ToolCall)] == [
        "function-call-1",
        "function-call-2",
    ]
    assert block(events) == ThinkingBlock(
        calls={"function-call-1": {"google": {"thought_signature": "<Signature A>"}}},
        extra={"google": {"thought_signature": "<Signature T>"}},
    )
    # The block comes before the calls it signs, all once the stream is over: the Agents window's
    # runtime keeps an answer's items in that order, and a block after a call goes back with the
    # next call's message.
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ThinkingBlock", "ToolCall", "ToolCall", "Finish"]


def test_a_message_without_reasoning_has_no_block():
    events = feed_all(OpenAIStreamParser(), [chunk({"content": "Hi."}, "stop"), "[DONE]"])
    assert not any(isinstance(e, ThinkingBlock) for e in events)


def test_deepseek_keeps_reasoning_content_over_a_copy_in_reasoning():
    both = {"reasoning_content": "Plan.", "reasoning": "Plan."}
    events = feed_all(OpenAIStreamParser(), [chunk(both), chunk({"content": "Ok"}), "[DONE]"])
    assert [e.value for e in events if isinstance(e, ThinkingDelta)] == ["Plan."]
    assert block(events) == ThinkingBlock("Plan.", field="reasoning_content")


def split_everywhere(text: str) -> list[list[str]]:
    """`text` cut in two at every place, and in single characters."""
    return [[text[:i], text[i:]] for i in range(1, len(text))] + [list(text)]


def run_tags(pieces: list[str]) -> list[StreamEvent]:
    tags = ThinkTags()
    events = [e for piece in pieces for e in tags.feed(piece)]
    return events + tags.finish()


def joined(events: list[StreamEvent], kind: type) -> str:
    return "".join(e.value for e in events if isinstance(e, kind))  # type: ignore[attr-defined]


@pytest.mark.parametrize("pieces", split_everywhere("\n<think>\nWeigh it.\n</think>\n\nAnswer."))
def test_think_tags_split_anywhere_give_the_same_reasoning_and_answer(pieces: list[str]):
    events = run_tags(pieces)
    assert joined(events, ThinkingDelta) == "\nWeigh it.\n"
    assert joined(events, TextDelta) == "\n\nAnswer."
    assert all(e.value for e in events)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "thinking", "answer"),
    [
        pytest.param("Plain <think> later.", "", "Plain <think> later.", id="not-at-the-start"),
        pytest.param("<thi", "", "<thi", id="a-tag-never-finished"),
        pytest.param("<think>cut off", "cut off", "", id="never-closed"),
        pytest.param("<think></think>Hi", "", "Hi", id="empty-reasoning"),
        pytest.param("", "", "", id="nothing"),
    ],
)
def test_think_tags_only_open_the_content(text: str, thinking: str, answer: str):
    events = run_tags([text])
    assert joined(events, ThinkingDelta) == thinking
    assert joined(events, TextDelta) == answer


def test_think_tags_in_a_stream_go_back_as_think():
    pieces = [chunk({"content": "<think>"}), chunk({"content": "Hm.</think>Yes."}), "[DONE]"]
    events = feed_all(OpenAIStreamParser(), pieces)
    assert joined(events, TextDelta) == "Yes."
    assert block(events) == ThinkingBlock("Hm.", field="think")
