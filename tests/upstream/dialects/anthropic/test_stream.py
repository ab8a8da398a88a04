"""`AnthropicStreamParser`'s edge cases: usage merged from its two events, tool input
concatenated, blocks it does not show, thinking signatures, streams cut off, errors after the stop
reason and malformed data.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests.upstream.dialects.stream_cases import assert_honest, feed_all, shape
from tokengauge.messages import Usage
from tokengauge.upstream.dialects.anthropic.stream import AnthropicStreamParser
from tokengauge.upstream.dialects.events import (
    Finish,
    StreamError,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
)


def msg(kind: str, **fields: Any) -> tuple[str, str]:
    return kind, json.dumps({"type": kind, **fields})


START = msg(
    "message_start",
    message={
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 5,
            "cache_read_input_tokens": 20,
            "output_tokens": 1,
        }
    },
)
STOP = msg("message_stop")


def tool_start(index: int, **block: Any) -> tuple[str, str]:
    content = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": {}, **block}
    return msg("content_block_start", index=index, content_block=content)


def json_delta(index: int, partial: str) -> tuple[str, str]:
    delta = {"type": "input_json_delta", "partial_json": partial}
    return msg("content_block_delta", index=index, delta=delta)


def text_delta(index: int, text: str) -> tuple[str, str]:
    return msg("content_block_delta", index=index, delta={"type": "text_delta", "text": text})


def block_stop(index: int) -> tuple[str, str]:
    return msg("content_block_stop", index=index)


def stop_reason(reason: str, **usage: Any) -> tuple[str, str]:
    return msg("message_delta", delta={"stop_reason": reason}, usage=usage)


def test_anthropic_usage_merges_start_and_delta():
    events = feed_all(
        AnthropicStreamParser(), [START, stop_reason("end_turn", output_tokens=7), STOP]
    )
    assert events == [
        Usage(
            total_input_tokens=35,
            output_tokens=7,
            input_tokens=10,
            cache_read_tokens=20,
            cache_write_tokens=5,
            reasoning_tokens=0,
        ),
        Finish("end_turn"),
    ]


def test_anthropic_message_delta_input_fields_win():
    events = feed_all(
        AnthropicStreamParser(),
        [START, stop_reason("max_tokens", input_tokens=12, cache_read_input_tokens=0), STOP],
    )
    assert events == [
        Usage(
            total_input_tokens=17,
            output_tokens=1,
            input_tokens=12,
            cache_read_tokens=0,
            cache_write_tokens=5,
            reasoning_tokens=0,
        ),
        Finish("max_tokens"),
    ]


def test_anthropic_tool_input_is_concatenated():
    events = feed_all(
        AnthropicStreamParser(),
        [
            START,
            tool_start(0),
            json_delta(0, ""),
            json_delta(0, '{"city": "Par'),
            json_delta(0, 'is", "days": 3}'),
            block_stop(0),
            stop_reason("tool_use"),
            STOP,
        ],
    )
    assert events[0] == ToolCall("toolu_0", "f", {"city": "Paris", "days": 3})
    assert events[-1] == Finish("tool_use")


def test_anthropic_initial_input_is_used_without_deltas():
    events = feed_all(AnthropicStreamParser(), [tool_start(0, input={"a": 1}), block_stop(0), STOP])
    assert events == [ToolCall("toolu_0", "f", {"a": 1})]


def test_anthropic_tool_input_that_is_not_json_is_passed_on():
    events = feed_all(
        AnthropicStreamParser(), [tool_start(0), json_delta(0, "{bad"), block_stop(0)]
    )
    assert events == [ToolCall("toolu_0", "f", "{bad")]


def test_anthropic_tool_use_without_id_is_an_error():
    events = feed_all(
        AnthropicStreamParser(),
        [tool_start(0, id=None), block_stop(0), stop_reason("tool_use"), STOP],
    )
    assert [type(e) for e in events] == [StreamError]


def test_anthropic_keeps_redacted_thinking_and_skips_blocks_it_does_not_show(
    caplog: pytest.LogCaptureFixture,
):
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy"}
    server_tool = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}
    with caplog.at_level(logging.DEBUG, logger="tokengauge.upstream.dialects.anthropic.stream"):
        events = feed_all(
            AnthropicStreamParser(),
            [
                msg("content_block_start", index=0, content_block=redacted),
                block_stop(0),
                msg("content_block_start", index=1, content_block=server_tool),
                json_delta(1, '{"query": "x"}'),
                block_stop(1),
                msg("content_block_start", index=2, content_block={"type": "text", "text": ""}),
                text_delta(2, "Done."),
                msg("content_block_delta", index=2, delta={"type": "citations_delta"}),
                block_stop(2),
                msg("ping"),
                STOP,
            ],
        )
    # The redacted block goes back to the API as it came; the server tool's is the API's business.
    assert events == [ThinkingBlock(redacted="EmwKAhgBEgy"), TextDelta("Done.")]
    assert "server_tool_use" in caplog.text


def test_anthropic_thinking_signature_and_empty_deltas():
    thinking = {"type": "thinking", "thinking": "", "signature": ""}

    def delta(**fields: Any) -> tuple[str, str]:
        return msg("content_block_delta", index=0, delta=fields)

    events = feed_all(
        AnthropicStreamParser(),
        [
            msg("content_block_start", index=0, content_block=thinking),
            delta(type="thinking_delta", thinking="Hm"),
            delta(type="thinking_delta", thinking=""),
            delta(type="signature_delta", signature="c2ln"),
            block_stop(0),
            STOP,
        ],
    )
    # The signed block is the whole thinking, to be sent back as it was.
    assert events == [ThinkingDelta("Hm"), ThinkingBlock("Hm", signature="c2ln")]


def test_anthropic_cut_off_inside_a_tool_use(caplog: pytest.LogCaptureFixture):
    parser = AnthropicStreamParser()
    with caplog.at_level(logging.WARNING):
        events = feed_all(parser, [START, tool_start(0), json_delta(0, '{"a": ')])
    assert events == [
        Usage(
            total_input_tokens=35,
            output_tokens=1,
            input_tokens=10,
            cache_read_tokens=20,
            cache_write_tokens=5,
            reasoning_tokens=0,
        )
    ]  # what the API did read is still real
    assert parser.ended is False
    assert "cut off" in caplog.text


def test_anthropic_error_after_stop_reason_means_no_finish():
    events = feed_all(
        AnthropicStreamParser(),
        [
            START,
            text_delta(0, "Hi"),
            stop_reason("end_turn", output_tokens=2),
            msg("error", error={"type": "api_error", "message": "Internal server error"}),
        ],
    )
    assert shape(events) == ("text", "error", "usage")
    assert_honest(events)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param('{"type": "content_block_delta", "index": 0', id="truncated-json"),
        pytest.param("[1, 2]", id="array"),
    ],
)
def test_anthropic_malformed_data_is_an_error(data: str):
    events = feed_all(
        AnthropicStreamParser(),
        [text_delta(0, "a"), ("content_block_delta", data), text_delta(0, "b"), STOP],
    )
    assert events[0] == TextDelta("a")
    assert isinstance(events[1], StreamError)
    assert events[1].message.startswith("malformed stream data: ")
    assert events[2:] == [TextDelta("b")]


def test_anthropic_message_stop_ends_the_stream():
    parser = AnthropicStreamParser()
    assert feed_all(parser, [text_delta(0, "a"), STOP], finish=False) == [TextDelta("a")]
    assert parser.ended is True
    assert parser.feed(*text_delta(0, "late")) == []
    assert parser.finish() == []


def test_anthropic_tool_input_nested_too_deeply_is_passed_on_and_the_answer_ends():
    """A RecursionError in Python's parser failed the whole answer, its text with it."""
    partial = '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    events = feed_all(
        AnthropicStreamParser(),
        [
            START,
            tool_start(0),
            json_delta(0, partial),
            block_stop(0),
            stop_reason("tool_use"),
            STOP,
        ],
    )
    assert events[0] == ToolCall("toolu_0", "f", partial)
    assert events[-1] == Finish("tool_use")
