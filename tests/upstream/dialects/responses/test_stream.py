"""OpenAI Responses API streams, on the real captures of `tests/data/wire/`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokengauge.calibration.classify import ErrorKind, classify_error
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
from tokengauge.upstream.dialects.responses.stream import ResponsesStreamParser


def deltas(wire: Path, name: str, kind: str) -> str:
    """The capture's own `delta`s of one event type, read straight from its `data:` lines."""
    lines = (wire / name).read_text().splitlines()
    payloads = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
    return "".join(p["delta"] for p in payloads if p.get("type") == kind)


@pytest.mark.parametrize(
    ("name", "usage", "finish"),
    [
        pytest.param(
            "openai-responses-stream-basic.sse",
            Usage(total_input_tokens=11, input_tokens=11, output_tokens=5),
            "stop",
            id="basic",
        ),
        pytest.param(
            "openai-responses-stream-cached-tokens.sse",
            Usage(
                total_input_tokens=9463,
                input_tokens=9463,
                output_tokens=582,
                cache_read_tokens=8320,
                reasoning_tokens=512,
            ),
            "stop",
            id="cached-and-reasoning",
        ),
    ],
)
def test_text_usage_and_finish(wire: Path, name: str, usage: Usage, finish: str):
    events = parse_stream_file("responses", (wire / name).read_bytes())
    text = "".join(e.value for e in events if isinstance(e, TextDelta))
    assert text == deltas(wire, name, "response.output_text.delta") and text
    assert events[-2:] == [usage, Finish(finish)]
    assert not [e for e in events if isinstance(e, (StreamError, ToolCall))]


@pytest.mark.parametrize(
    ("name", "call", "usage"),
    [
        pytest.param(
            "openai-responses-stream-tooluse.sse",
            ToolCall("call_sVidsfFJ6zlzRpelrPkTPlpd", "multiply", {"a": 1231, "b": 2331}),
            Usage(total_input_tokens=58, input_tokens=58, output_tokens=23),
            id="tooluse",
        ),
        pytest.param(
            "openai-responses-stream-reasoning-usage.sse",
            ToolCall("call_CWXgs68YprAjp6t0371hiPOI", "final_result", {"result": 6666}),
            Usage(total_input_tokens=53, input_tokens=53, output_tokens=469, reasoning_tokens=448),
            id="reasoning-model",
        ),
    ],
)
def test_function_calls(wire: Path, name: str, call: ToolCall, usage: Usage):
    events = parse_stream_file("responses", (wire / name).read_bytes())
    assert [e for e in events if not isinstance(e, ThinkingBlock)] == [
        call,
        usage,
        Finish("tool_calls"),
    ]
    arguments = deltas(wire, name, "response.function_call_arguments.delta")
    assert json.loads(arguments) == call.input


def reasoning_items(wire: Path, name: str) -> list[dict[str, object]]:
    """The capture's finished reasoning items, read straight from its `data:` lines."""
    lines = (wire / name).read_text().splitlines()
    payloads = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
    return [
        p["item"]
        for p in payloads
        if p.get("type") == "response.output_item.done" and p["item"]["type"] == "reasoning"
    ]


@pytest.mark.parametrize(
    "name",
    ["openai-responses-stream-reasoning-usage.sse", "openai-responses-stream-cached-tokens.sse"],
)
def test_encrypted_reasoning_items_are_blocks_to_send_back_in_order(wire: Path, name: str):
    events = parse_stream_file("responses", (wire / name).read_bytes())
    blocks = [e for e in events if isinstance(e, ThinkingBlock)]
    items = reasoning_items(wire, name)
    assert blocks == [
        ThinkingBlock(item_id=i["id"], encrypted=i["encrypted_content"]) for i in items
    ]
    assert blocks and all(b.encrypted and b.encrypted.startswith("gAAAA") for b in blocks)
    # Each comes before what the model did after its reasoning (a call, or the answer's text).
    first_block = events.index(blocks[0])
    after = [e for e in events if isinstance(e, (ToolCall, TextDelta))]
    assert after and first_block < events.index(after[0])


def test_reasoning_without_encrypted_content_is_not_sent_back():
    parser = ResponsesStreamParser()
    item = {"type": "reasoning", "id": "rs_1", "summary": []}
    done = {"type": "response.output_item.done", "item": item}
    assert parser.feed("", json.dumps(done)) == []


def test_the_overflow_error_event_is_an_error_that_teaches(wire: Path):
    body = (wire / "error-openai-responses-context-length-exceeded-stream-event.json").read_text()
    parser = ResponsesStreamParser()
    [error] = parser.feed("error", body)
    assert isinstance(error, StreamError)
    assert error.message.startswith("Your input exceeds the context window of this model")
    assert classify_error(None, error.body or "").kind is ErrorKind.OVERFLOW
    assert parser.finish() == []  # no success-looking finish after it


def test_reasoning_summary_is_thinking_and_a_cut_off_stream_says_so():
    parser = ResponsesStreamParser()
    added = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}
    events = [
        *parser.feed(
            "", json.dumps({"type": "response.reasoning_summary_text.delta", "delta": "Hm"})
        ),
        *parser.feed("", json.dumps({"type": "response.output_item.added", "item": added})),
        *parser.feed(
            "",
            json.dumps(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": "fc_1",
                    "delta": '{"a": ',
                }
            ),
        ),
    ]
    assert events == [ThinkingDelta("Hm")]
    assert parser.finish() == [] and not parser.ended  # the half call is dropped
    cut = parse_stream_file(
        "responses", b'data: {"type": "response.output_text.delta", "delta": "x"}\n\n'
    )
    assert isinstance(cut[-1], StreamError) and "response.completed" in cut[-1].message


def test_an_incomplete_response_ends_with_its_reason():
    parser = ResponsesStreamParser()
    done = {
        "type": "response.incomplete",
        "response": {"incomplete_details": {"reason": "max_output_tokens"}},
    }
    assert parser.feed("", json.dumps(done)) == [] and parser.ended
    assert parser.finish() == [Finish("length")]
