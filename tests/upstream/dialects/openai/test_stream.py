"""`OpenAIStreamParser`'s edge cases: tool-call deltas in every order and shape, streams cut
off, malformed data, usage reported once at the end, other choices, error events and the Responses
API.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests.upstream.dialects.stream_cases import feed_all, read
from tokengauge.messages import Usage
from tokengauge.upstream.dialects.dialect import parse_stream_file
from tokengauge.upstream.dialects.events import (
    Finish,
    StreamError,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
)
from tokengauge.upstream.dialects.openai.stream import RESPONSES_API, OpenAIStreamParser
from tokengauge.upstream.sse import iter_file_events


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> str:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return json.dumps({"choices": [choice], **top})


def calls(*deltas: dict[str, Any]) -> str:
    return chunk({"tool_calls": list(deltas)})


def test_parallel_tool_calls_interleave_by_index():
    events = feed_all(
        OpenAIStreamParser(),
        [
            calls({"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x":'}}),
            calls({"index": 1, "id": "b", "function": {"name": "g", "arguments": ""}}),
            calls({"index": 1, "function": {"arguments": '{"y": 2}'}}),
            calls({"index": 0, "function": {"arguments": "1}"}}),
            chunk(finish="tool_calls"),
            "[DONE]",
        ],
    )
    assert events == [
        ToolCall("a", "f", {"x": 1}),
        ToolCall("b", "g", {"y": 2}),
        Finish("tool_calls"),
    ]


def test_tool_call_deltas_may_lack_any_key():
    events = feed_all(
        OpenAIStreamParser(),
        [
            calls({"index": 0, "id": "c1", "type": "function", "function": {"name": "find"}}),
            calls({"index": 0}),
            calls({"index": 0, "function": {}}),
            calls({"index": 0, "function": {"arguments": None}}),
            calls({"index": 0, "function": {"arguments": '{"q": '}}),
            calls({"index": 0, "id": "c1", "function": {"name": "find", "arguments": '"x"}'}}),
            chunk(finish="tool_calls"),
            "[DONE]",
        ],
    )
    assert events == [ToolCall("c1", "find", {"q": "x"}), Finish("tool_calls")]


def test_a_new_id_at_a_used_index_is_a_new_call():
    events = feed_all(
        OpenAIStreamParser(),
        [
            calls({"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}),
            calls({"index": 0, "id": "b", "function": {"name": "g", "arguments": '{"k": 1}'}}),
            chunk(finish="tool_calls"),
            "[DONE]",
        ],
    )
    assert events == [ToolCall("a", "f", {}), ToolCall("b", "g", {"k": 1}), Finish("tool_calls")]


def test_tool_calls_without_index_are_told_apart_by_id():
    events = feed_all(
        OpenAIStreamParser(),
        [
            calls({"id": "a", "function": {"name": "f", "arguments": '{"n":'}}),
            calls({"function": {"arguments": "1}"}}),
            calls({"id": "b", "function": {"name": "g", "arguments": "{}"}}),
            "[DONE]",
        ],
    )
    assert events == [ToolCall("a", "f", {"n": 1}), ToolCall("b", "g", {})]


def test_arguments_that_are_not_json_are_passed_on(caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.WARNING):
        events = feed_all(
            OpenAIStreamParser(),
            [
                calls({"index": 0, "id": "a", "function": {"name": "f", "arguments": "{oops"}}),
                chunk(finish="tool_calls"),
                "[DONE]",
            ],
        )
    assert events == [ToolCall("a", "f", "{oops"), Finish("tool_calls")]
    assert "not JSON" in caplog.text


def test_a_tool_call_without_a_name_is_an_error():
    events = feed_all(
        OpenAIStreamParser(),
        [
            calls({"index": 0, "id": "a", "function": {"arguments": "{}"}}),
            chunk(finish="tool_calls"),
        ],
    )
    assert [type(e) for e in events] == [StreamError]
    assert "without a function name" in events[0].message


def test_cut_off_inside_a_tool_call_drops_it(caplog: pytest.LogCaptureFixture):
    sse = list(iter_file_events(read("openai-chat-stream-usage-toolcall.sse")))
    parser = OpenAIStreamParser()
    with caplog.at_level(logging.WARNING):
        events = feed_all(parser, [(e.event, e.data) for e in sse[:6]])  # arguments '{"a":1231'
    assert events == []
    assert parser.ended is False
    assert "cut off" in caplog.text


def test_cut_off_after_complete_arguments_keeps_the_call():
    parser = OpenAIStreamParser()
    events = feed_all(
        parser, [calls({"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}})]
    )
    assert events == [ToolCall("a", "f", {})]
    assert parser.ended is False


def test_a_cut_off_capture_gets_a_closing_error():
    raw = read("openai-chat-stream-usage-text.sse")
    cut_at = raw.index(b"\n\n", len(raw) // 2) + 2  # between two events
    events = parse_stream_file("openai", raw[:cut_at])
    assert isinstance(events[-1], StreamError)
    assert "ended before data: [DONE]" in events[-1].message
    assert not any(isinstance(e, Finish) for e in events)


def test_a_capture_cut_mid_line_ends_with_malformed_data():
    raw = read("openai-chat-stream-usage-text.sse")
    events = parse_stream_file("openai", raw[: len(raw) // 2])
    errors = [e for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1
    assert errors[0].message.startswith("malformed stream data: ")
    assert events[-1] is errors[0]


@pytest.mark.parametrize(
    "data",
    [
        pytest.param('{"choices": [', id="truncated-json"),
        pytest.param("not json at all", id="text"),
        pytest.param("42", id="number"),
        pytest.param('["a"]', id="array"),
    ],
)
def test_openai_malformed_data_is_an_error(data: str):
    events = feed_all(
        OpenAIStreamParser(),
        [chunk({"content": "Hi"}), data, chunk({"content": "!"}), chunk(finish="stop"), "[DONE]"],
    )
    assert events[0] == TextDelta("Hi")
    assert isinstance(events[1], StreamError)
    assert events[1].message.startswith("malformed stream data: ")
    assert events[1].body == data
    assert events[2:] == [TextDelta("!")]  # parsing goes on; no success-looking finish


def test_done_ends_the_stream():
    parser = OpenAIStreamParser()
    events = feed_all(parser, [chunk({"content": "a"}, "stop"), "[DONE]"], finish=False)
    assert events == [TextDelta("a"), Finish("stop")]
    assert parser.ended is True
    assert parser.feed("message", chunk({"content": "late"})) == []
    assert parser.finish() == []


def test_a_repeated_finish_reason_finishes_once():
    events = feed_all(
        OpenAIStreamParser(), [chunk(finish="length"), chunk(finish="length"), "[DONE]"]
    )
    assert events == [Finish("length")]


@pytest.mark.parametrize(
    ("chunks", "usage"),
    [
        pytest.param(
            [chunk(usage=None), json.dumps({"choices": [], "usage": {"prompt_tokens": 5}})],
            Usage(total_input_tokens=5, output_tokens=0, input_tokens=5),
            id="null-then-empty-choices",
        ),
        pytest.param(
            [chunk(finish="stop", usage={"prompt_tokens": 9, "completion_tokens": 3})],
            Usage(total_input_tokens=9, output_tokens=3, input_tokens=9),
            id="with-finish-reason",
        ),
        pytest.param(
            [
                chunk(usage={"prompt_tokens": 9, "completion_tokens": 1}),
                chunk(usage={"prompt_tokens": 9, "completion_tokens": 4}),
            ],
            Usage(total_input_tokens=9, output_tokens=4, input_tokens=9),
            id="cumulative-latest-wins",
        ),
        pytest.param(
            [chunk(usage={"prompt_tokens": 10, "prompt_cache_hit_tokens": 8})],
            Usage(total_input_tokens=10, output_tokens=0, input_tokens=10, cache_read_tokens=8),
            id="deepseek-cache-hit",
        ),
        pytest.param(
            [
                chunk(
                    usage={
                        "prompt_tokens": 10,
                        "completion_tokens": 7,
                        "prompt_tokens_details": {"cached_tokens": 6, "cache_write_tokens": 2},
                        "completion_tokens_details": {"reasoning_tokens": 5},
                    }
                )
            ],
            Usage(
                total_input_tokens=10,
                output_tokens=7,
                input_tokens=10,
                cache_read_tokens=6,
                cache_write_tokens=2,
                reasoning_tokens=5,
            ),
            id="details",
        ),
        # No float holds 10^400: the answer it ended failed with an internal error.
        pytest.param(
            [chunk(usage={"prompt_tokens": 10**400, "completion_tokens": -3})],
            Usage(total_input_tokens=0, output_tokens=0, input_tokens=0),
            id="counts-that-are-none",
        ),
        pytest.param(
            [chunk(usage={"prompt_tokens": 2**53 - 1, "completion_tokens": 2**53})],
            Usage(total_input_tokens=2**53 - 1, output_tokens=0, input_tokens=2**53 - 1),
            id="the-largest-count",
        ),
    ],
)
def test_openai_usage_is_reported_once_at_the_end(chunks: list[str], usage: Usage):
    events = feed_all(OpenAIStreamParser(), [*chunks, "[DONE]"])
    assert [e for e in events if isinstance(e, Usage)] == [usage]
    assert isinstance(events[-1], (Usage, Finish))


def test_openai_reasoning_refusal_and_other_choices():
    two_choices = json.dumps(
        {
            "choices": [
                {"index": 1, "delta": {"content": "other"}},
                {"index": 0, "delta": {"reasoning": "think", "content": "say"}},
            ]
        }
    )
    events = feed_all(OpenAIStreamParser(), [two_choices, chunk({"refusal": "No."}), "[DONE]"])
    assert events == [
        ThinkingDelta("think"),
        TextDelta("say"),
        TextDelta("No."),
        ThinkingBlock("think", field="reasoning"),
    ]


def test_openai_error_event_and_unknown_events(caplog: pytest.LogCaptureFixture):
    parser = OpenAIStreamParser()
    with caplog.at_level(logging.DEBUG, logger="tokengauge.upstream.dialects.openai.stream"):
        assert parser.feed("keepalive", "{}") == []
    assert "keepalive" in caplog.text
    data = '{"error": {"message": "Rate limit exceeded", "code": 429}}'
    assert parser.feed("error", data) == [StreamError("Rate limit exceeded", body=data)]
    assert parser.feed("error", "boom") == [StreamError("boom", body="boom")]


def test_responses_api_events_are_reported_once():
    parser = OpenAIStreamParser()
    events = feed_all(
        parser,
        [("response.created", '{"type": "response.created"}'), ("response.in_progress", "{}")],
    )
    assert events == [StreamError(RESPONSES_API)]
    assert parser.ended is False


NESTED = [
    pytest.param("[" * 40 + "]" * 40, "nested more than 32 levels deep", id="40-levels"),
    # Past what Python's parser follows: a RecursionError failed the whole answer.
    pytest.param("[" * 100_000 + "]" * 100_000, "nests objects or arrays too deeply", id="100k"),
    pytest.param('{"n": NaN}', "arguments.path.n: NaN is not a JSON number", id="nan"),
]


@pytest.mark.parametrize(("value", "said"), NESTED)
def test_arguments_nested_too_deeply_are_passed_on_and_the_answer_ends(
    value: str, said: str, caplog: pytest.LogCaptureFixture
):
    """Sent back in the conversation's next request, such a call was refused (nested beyond
    what requests may): the tool gets the string and says what is wrong with it."""
    arguments = '{"path": ' + value + "}"
    with caplog.at_level(logging.WARNING):
        events = feed_all(
            OpenAIStreamParser(),
            [
                chunk({"content": "Here it is."}),
                calls({"index": 0, "id": "a", "function": {"name": "f", "arguments": arguments}}),
                chunk(finish="tool_calls"),
                "[DONE]",
            ],
        )
    assert events == [TextDelta("Here it is."), ToolCall("a", "f", arguments), Finish("tool_calls")]
    assert "tool call 'f': its arguments are not JSON we can take (" in caplog.text
    assert said in caplog.text
