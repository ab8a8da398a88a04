"""Stream parsers against every real capture in the shared wire fixtures, and their edge cases.

Expected values were read off the captures by hand: the concatenated text and thinking, each tool
call, every usage number and the finish reason. The same events must come out whichever way the
bytes are cut (hypothesis), with CRLF line ends, and through the `parse-stream` entry point.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import WIRE
from tokengauge.upstream.anthropic_stream import AnthropicStreamParser
from tokengauge.upstream.events import (
    Finish,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    UsageReport,
    event_json,
)
from tokengauge.upstream.openai_stream import RESPONSES_API, OpenAIStreamParser
from tokengauge.upstream.parse_stream import (
    StreamParser,
    main_parse_stream,
    make_parser,
    parse_stream_file,
)
from tokengauge.upstream.sse import aiter_events, iter_file_events, missing_terminator

# What the captures say, read off them by hand (long strings split only for line length).
OPENAI_TEXT = "The result of \\( 1231 \\times 2331 \\) is \\( 2,869,461 \\)."
PELICAN_TEXT = (
    '1. **Pouch** - references their iconic bill pouch\n2. **Pelé** - playful take on "pelican"'
)
DEEPSEEK_TEXT = "Hello there! 😊 How can I help you today?"
OVERLOADED_BODY = (
    '{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}'
    "        }"
)

DEEPSEEK_THINKING = (
    'Hmm, the user just said "Hello". It\'s a simple greeting but I wonder '
    "if there's more to it.  \n\nThe message is very brief, so I don't have "
    "much context to work with. Maybe they're just testing if I'm responsive, "
    "or perhaps they're new to chatting with AI.  \n\nI should keep my reply "
    "warm and inviting to encourage further conversation. A smiley face would "
    "help make it friendly. Since they didn't specify a need, I'll leave it "
    "open-ended by asking how I can help them today.  \n\nThe tone should "
    'be cheerful but professional - not too stiff, not too casual. "Hello '
    'there!" feels right for a start. Adding "What can I do for you today?" '
    "turns it into an invitation rather than just mirroring their greeting. "
    " \n\nI'll avoid assumptions about their gender, location, or intent since "
    "there's zero information. If they're just being polite, they might not "
    "reply further - and that's okay too."
)
GROK_TEXT = (
    "I'm Grok, an AI built by xAI. I'm designed to be helpful, maximally truthful, "
    "and a bit witty—think a mix of the Hitchhiker's Guide to the Galaxy and "
    "JARVIS from Iron Man. My goal is to help you understand the universe "
    "(and maybe crack a few jokes along the way). What's on your mind?"
)
LONG_THINKING = (
    "This is a straightforward question about pedestrian safety. I should "
    "provide clear, helpful advice about how to safely cross a street. This "
    "is basic safety information that could help prevent accidents."
)
LONG_TEXT = (
    "Here are the basic steps for safely crossing the street:\n\n**At intersections "
    'with traffic lights:**\n- Wait for the pedestrian "Walk" signal\n- Look '
    "both ways before stepping into the street\n- Make eye contact with drivers "
    "when possible\n- Stay alert for turning vehicles\n\n**At intersections "
    "without signals:**\n- Use crosswalks when available\n- Stop at the curb "
    "and look left, right, then left again\n- Wait for a clear gap in traffic\n- "
    "Walk briskly but don't run\n- Keep looking for traffic as you cross\n\n**General "
    "safety tips:**\n- Put away phones and remove headphones\n- Wear bright "
    "or reflective clothing in low light\n- Never assume drivers see you\n- "
    "Avoid crossing between parked cars\n- Walk facing traffic when there's "
    "no sidewalk\n\n**In busy urban areas:**\n- Follow pedestrian signals "
    "strictly\n- Be extra cautious of cyclists in bike lanes\n- Watch for "
    "buses and large vehicles with blind spots\n\nThe key is to be visible, "
    "alert, and predictable in your movements. Always prioritize safety over "
    "speed when crossing streets."
)
PELICAN_THINKING = (
    "The user wants two names for a pet pelican, and they want me to be brief. "
    "I'll suggest two names that would suit a pelican well.\n\nSome good options:\n- "
    "Pelé (play on pelican)\n- Pouch (referencing their bill pouch)\n- Captain "
    "Beak\n- Squirt\n- Scoop\n- Wing\n\nLet me give two brief, catchy names:"
)
VERSION_THINKING = (
    "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the "
    "version\n3. Make a short joke about it\n\nLet me first call the fixed_version "
    "tool to see what version it returns."
)
PELICAN_SIGNATURE = (
    "EuYDCmMIDBgCKkC05Zda4P+Cdk/LQKE+Aol4ZY3EY4wLDrf8XcApz2PiqrxiRjS7uY1kGtZ63vVlaVmtuIp"
    "dsHbkdfGHb9AsBYw+MhljbGF1ZGUtaGFpa3UtNC01LTIwMjUxMDAxOAASDAXGiw23anViCe75HBoMATySwg"
    "VJ0A405/0FIjDbVX0lAn7rEq/ejcuOZWDihLSbS9KGihD2QsWmXzp2Ly5ZD5vtKOcKvhEDQ0PCeVkqsALmn"
    "x7FhoJ7TQQyomwwFY+zA/Sft9n7u3lNE/RzbZMF4jmvo9i1vtNLETK18iSdCAhSy+NJLFRK/vcw6sVaDNrE"
    "MGgIadv5iZ0Jmx+iHyR8sXbasYDMbN07/ype7JGpKxHCdQOrNA7plS39Yy5l7hqJz4ueYoCpMxc+IkNY+TC"
    "yMpKwGxYqKSUdElyLr0Ko3vXtdLJBTJQuMtU+cz+UPHkpTbGRPntg/hBvNztCjlqqeM6PKoE8rsDJMx0+q1"
    "eOrFPC9SYgCZqSGHlSHoOexnfkrN2aTlZjcBcFblXq76bKF1YHINp3uL+jByhp91XFSkhF+b43BC9PDtRUY"
    "Kw3wT+IZlEI6V3GppKBDSa8L0Sgm8m1Bb2PYvi3oIv+LDpUImrMckjemNZmBeGcEZQ4FjZiGAE="
)
VERSION_SIGNATURE = (
    "EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1VIXCRHVnhDDzBQxNF1fl4QBXEKLxRItNJ2MwFdW9eeZP"
    "hsxSQIxD54cv3zs29MhljbGF1ZGUtaGFpa3UtNC01LTIwMjUxMDAxOABCCHRoaW5raW5nEgy/OWlwTmmqUj"
    "C6L70aDJ4P0R5NfuIe9U5zAiIwCxPduXS2UxCNxJCee3i91qK3cAyAgxCjL2wkQ5UD56iX1hXGOyuNaiH5k"
    "+dF5OCQKsQBxiAo+NjC61hV8nRYtaiP+C4inOcuMKuTG9Z1rysxTXkKBTl3oMiOlnEPHHPpKpg4sYF2G5Vo"
    "Tg8JTon20hdZw4GfTEVupnU1qAmnMqyAgke9SoV7HBW/PyA/FxL/q33xJ2gKFiD+BsgI9Z0koMmFKCvm2Mo"
    "YE6u+ONEwKdFQXL1FKRW6t/bYbJGrLJLwxilsL82h9j4xjggjMn8Npvpn+zsrDPW/8PuLd4Pu+/EsjoneYw"
    "yxQQtUVgzhVGhhANWRjSBwUxgB"
)
LONG_SIGNATURE = (
    "EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/ecn+VurRpNTwI4XNyM0vnNfGsc9OmE8YYHauwBZ/uaRpmlEn"
    "2I4/kszHlcpptO82JEgyRMSbPkJYaegxYF3AaDHZbSm9EzZ6CM+YtliIw3iNVP/ilYrfoneo8S2+ad/5xSC"
    "62nKbk6joLtKmqXgXwYFJRpjIUjM2V7EGReOPRKtoBKfNHVmdNf7SeMhHalX/ObSeJ1G/NjDyGQAsDjyHGd"
    "7uY1r5gAIn3Cpdv5r+gHYJmWT+w2uiKZsBDRoSf4O3Km0l752EhPD4InEhqpCKyqhbUZ3dt5+JVKQHk2iyT"
    "BhQMB/XBYgZTstIpRqQRXU5ypcrydgnqj3mD1G9C7YC0ZTCNvFluAx0OL8q+cQwufgfqKquLEf2+XMYzhx9"
    "jYkVFEpnf/s1nx6gNBATKfF3Dmrs2r4tWu2QJB+FjlRuDp/8dxUxgJbmyhGxb7XsYeb1vgb7wwzDvP/Uhjf"
    "QYAQ=="
)


@dataclass(frozen=True)
class Expected:
    """What a person reading a capture expects; `shape` is the event kinds, runs collapsed."""

    shape: tuple[str, ...]
    text: str = ""
    thinking: str = ""
    signatures: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    usage: UsageReport | None = None
    finish: str | None = None
    errors: tuple[str, ...] = ()
    ended: bool = True


# The Responses API is another API (`response.*` events): the Chat Completions parser says so
# with one error instead of returning an empty answer that would look like a success.
RESPONSES = Expected(shape=("error",), errors=(RESPONSES_API,), ended=False)

CASES = [
    pytest.param(
        "openai-chat-stream-usage-text.sse",
        "openai",
        Expected(
            shape=("text", "usage", "finish"),
            text=OPENAI_TEXT,
            usage=UsageReport(87, 26, total_input_tokens=87),
            finish="stop",
        ),
        id="openai-text",
    ),
    pytest.param(
        "openai-chat-stream-usage-toolcall.sse",
        "openai",
        Expected(
            shape=("tool", "usage", "finish"),
            tool_calls=(
                ToolCall("call_1EYWDzueHEp8OsB8jJSEp7WB", "multiply", {"a": 1231, "b": 2331}),
            ),
            usage=UsageReport(54, 20, total_input_tokens=54),
            finish="tool_calls",
        ),
        id="openai-toolcall",
    ),
    pytest.param(
        "openrouter-chat-stream-toolcall.sse",
        "openai",
        Expected(
            # No finish_reason ever arrives; none is invented. [DONE] flushes the call.
            shape=("tool", "usage"),
            tool_calls=(ToolCall("0", "llm_version", {}),),
            usage=UsageReport(57, 17, total_input_tokens=57),
        ),
        id="openrouter-toolcall-no-finish-reason",
    ),
    pytest.param(
        "openrouter-chat-stream-cached-reasoning-usage.sse",
        "openai",
        Expected(
            # Grok's reasoning is encrypted (reasoning_details only): no thinking text.
            shape=("text", "usage", "finish"),
            text=GROK_TEXT,
            usage=UsageReport(
                687, 187, cache_read_tokens=679, reasoning_tokens=118, total_input_tokens=687
            ),
            finish="stop",
        ),
        id="openrouter-cached-reasoning",
    ),
    pytest.param(
        "openrouter-chat-stream-midstream-error.sse",
        "openai",
        Expected(
            # finish_reason "length" came before the error: it is dropped, the error stands.
            shape=("thinking", "error", "usage"),
            thinking="We need to respond to a greeting. The user",
            usage=UsageReport(43, 10, reasoning_tokens=11, total_input_tokens=43),
            errors=("Token limit reached",),
        ),
        id="openrouter-midstream-error",
    ),
    pytest.param(
        "deepseek-chat-stream-reasoning-usage.sse",
        "openai",
        Expected(
            shape=("thinking", "text", "usage", "finish"),
            text=DEEPSEEK_TEXT,
            thinking=DEEPSEEK_THINKING,
            usage=UsageReport(6, 212, reasoning_tokens=198, total_input_tokens=6),
            finish="stop",
        ),
        id="deepseek-reasoning",
    ),
    pytest.param("openai-responses-stream-basic.sse", "openai", RESPONSES, id="responses-basic"),
    pytest.param(
        "openai-responses-stream-tooluse.sse", "openai", RESPONSES, id="responses-tooluse"
    ),
    pytest.param(
        "openai-responses-stream-reasoning-usage.sse", "openai", RESPONSES, id="responses-reasoning"
    ),
    pytest.param(
        "openai-responses-stream-cached-tokens.sse", "openai", RESPONSES, id="responses-cached"
    ),
    pytest.param(
        "anthropic-stream-text.sse",
        "anthropic",
        Expected(
            shape=("text", "usage", "finish"),
            text="Hello",
            usage=UsageReport(10, 4, total_input_tokens=10),
            finish="end_turn",
        ),
        id="anthropic-text",
    ),
    pytest.param(
        "anthropic-stream-thinking.sse",
        "anthropic",
        Expected(
            shape=("thinking", "signature", "text", "usage", "finish"),
            text=PELICAN_TEXT,
            thinking=PELICAN_THINKING,
            signatures=(PELICAN_SIGNATURE,),
            usage=UsageReport(46, 133, total_input_tokens=46),
            finish="end_turn",
        ),
        id="anthropic-thinking",
    ),
    pytest.param(
        "anthropic-stream-thinking-long.sse",
        "anthropic",
        Expected(
            shape=("thinking", "signature", "text", "usage", "finish"),
            text=LONG_TEXT,
            thinking=LONG_THINKING,
            signatures=(LONG_SIGNATURE,),
            usage=UsageReport(43, 282, total_input_tokens=43),
            finish="end_turn",
        ),
        id="anthropic-thinking-long",
    ),
    pytest.param(
        "anthropic-stream-thinking-tooluse.sse",
        "anthropic",
        Expected(
            shape=("thinking", "signature", "tool", "usage", "finish"),
            thinking=VERSION_THINKING,
            signatures=(VERSION_SIGNATURE,),
            tool_calls=(ToolCall("toolu_01825dXWLSoJwCst1qTsiWdb", "fixed_version", {}),),
            usage=UsageReport(598, 92, reasoning_tokens=53, total_input_tokens=598),
            finish="tool_use",
        ),
        id="anthropic-thinking-tooluse",
    ),
    pytest.param(
        "anthropic-stream-tooluse-empty-input.sse",
        "anthropic",
        Expected(
            shape=("tool", "usage", "finish"),
            tool_calls=(ToolCall("toolu_01CzN6riCPqw4pVSuTd9Dwn7", "pelican_name_generator", {}),),
            usage=UsageReport(543, 40, total_input_tokens=543),
            finish="tool_use",
        ),
        id="anthropic-tooluse-empty-input",
    ),
    pytest.param(
        "anthropic-stream-tooluse-parallel.sse",
        "anthropic",
        Expected(
            shape=("tool", "usage", "finish"),
            tool_calls=(
                ToolCall("toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", {}),
                ToolCall("toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", {}),
            ),
            usage=UsageReport(542, 62, total_input_tokens=542),
            finish="tool_use",
        ),
        id="anthropic-tooluse-parallel",
    ),
    pytest.param(
        "anthropic-stream-cache-read.sse",
        "anthropic",
        Expected(
            # Server-side compaction: message_delta's top level (181 input, 0 cached) describes
            # the compacted context; the first iteration read our prompt: 100 + 55096 cached.
            shape=("text", "usage", "finish"),
            text="Hello! 👋",
            usage=UsageReport(100, 8, cache_read_tokens=55096, total_input_tokens=55196),
            finish="end_turn",
        ),
        id="anthropic-cache-read-compaction",
    ),
    pytest.param(
        "error-anthropic-overloaded-stream-event.sse",
        "anthropic",
        Expected(shape=("error",), errors=("Overloaded",), ended=False),
        id="anthropic-overloaded-error",
    ),
]

EXACT = [
    pytest.param(
        "anthropic-stream-text.sse",
        "anthropic",
        [TextDelta("Hello"), UsageReport(10, 4, total_input_tokens=10), Finish("end_turn")],
        id="anthropic-text",
    ),
    pytest.param(
        "anthropic-stream-cache-read.sse",
        "anthropic",
        [
            TextDelta("Hello!"),
            TextDelta(" "),
            TextDelta("👋"),
            UsageReport(100, 8, cache_read_tokens=55096, total_input_tokens=55196),
            Finish("end_turn"),
        ],
        id="anthropic-cache-read",
    ),
    pytest.param(
        "error-anthropic-overloaded-stream-event.sse",
        "anthropic",
        [StreamError("Overloaded", body=OVERLOADED_BODY)],
        id="anthropic-overloaded",
    ),
    pytest.param(
        "openai-chat-stream-usage-toolcall.sse",
        "openai",
        [
            ToolCall("call_1EYWDzueHEp8OsB8jJSEp7WB", "multiply", {"a": 1231, "b": 2331}),
            UsageReport(54, 20, total_input_tokens=54),
            Finish("tool_calls"),
        ],
        id="openai-toolcall",
    ),
    pytest.param(
        "openrouter-chat-stream-toolcall.sse",
        "openai",
        [ToolCall("0", "llm_version", {}), UsageReport(57, 17, total_input_tokens=57)],
        id="openrouter-toolcall",
    ),
]

KINDS: dict[type, str] = {
    TextDelta: "text",
    ThinkingDelta: "thinking",
    ToolCall: "tool",
    UsageReport: "usage",
    StreamError: "error",
    Finish: "finish",
}


def kind(event: StreamEvent) -> str:
    if isinstance(event, ThinkingDelta) and event.signature is not None:
        return "signature"
    return KINDS[type(event)]


def shape(events: Sequence[StreamEvent]) -> tuple[str, ...]:
    kinds: list[str] = []
    for event in events:
        if not kinds or kinds[-1] != kind(event):
            kinds.append(kind(event))
    return tuple(kinds)


def read(name: str) -> bytes:
    return (WIRE / name).read_bytes()


def feed_all(parser: StreamParser, items: Sequence[Any], *, finish: bool = True) -> list[Any]:
    """Feed `(event, data)` pairs (a bare string is a `message` event's data)."""
    events: list[Any] = []
    for item in items:
        event, data = item if isinstance(item, tuple) else ("message", item)
        events += parser.feed(event, data)
    if finish:
        events += parser.finish()
    return events


def parse(dialect: Any, data: bytes) -> tuple[list[StreamEvent], bool]:
    parser = make_parser(dialect)
    events = feed_all(parser, [(sse.event, sse.data) for sse in iter_file_events(data)])
    return events, parser.ended


def assert_honest(events: Sequence[StreamEvent]) -> None:
    """One usage at most, one finish at most and last, and no finish at all after an error."""
    assert sum(isinstance(e, UsageReport) for e in events) <= 1
    finishes = [i for i, e in enumerate(events) if isinstance(e, Finish)]
    assert len(finishes) <= 1
    if finishes:
        assert finishes[0] == len(events) - 1
        assert not any(isinstance(e, StreamError) for e in events)


# --- every capture ---


def test_every_capture_has_a_case():
    covered = {case.values[0] for case in CASES}
    assert covered == {path.name for path in WIRE.glob("*.sse")}


@pytest.mark.parametrize(("name", "dialect", "expected"), CASES)
def test_capture(name: str, dialect: str, expected: Expected):
    events, ended = parse(dialect, read(name))
    assert shape(events) == expected.shape
    assert "".join(e.value for e in events if isinstance(e, TextDelta)) == expected.text
    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(e.value for e in thinking) == expected.thinking
    assert all(e.value for e in thinking if e.signature is None)
    assert tuple(e.signature for e in thinking if e.signature is not None) == expected.signatures
    assert tuple(e for e in events if isinstance(e, ToolCall)) == expected.tool_calls
    usage = [e for e in events if isinstance(e, UsageReport)]
    assert usage == ([expected.usage] if expected.usage else [])
    finish = [e.reason for e in events if isinstance(e, Finish)]
    assert finish == ([expected.finish] if expected.finish else [])
    assert tuple(e.message for e in events if isinstance(e, StreamError)) == expected.errors
    assert ended is expected.ended
    assert_honest(events)
    assert parse_stream_file(dialect, read(name)) == events  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "dialect", "events"), EXACT)
def test_capture_exact_sequence(name: str, dialect: str, events: list[StreamEvent]):
    assert parse(dialect, read(name))[0] == events


def test_midstream_error_keeps_the_raw_chunk():
    raw = read("openrouter-chat-stream-midstream-error.sse").decode()
    line = next(line for line in raw.splitlines() if '"error":{' in line)
    error = next(e for e in parse("openai", raw.encode())[0] if isinstance(e, StreamError))
    assert error.body == line.removeprefix("data: ")
    assert json.loads(error.body)["error"] == {"code": 400, "message": "Token limit reached"}


@pytest.mark.parametrize(("name", "dialect", "expected"), CASES)
def test_crlf_line_ends_give_the_same_events(name: str, dialect: str, expected: Expected):
    raw = read(name)
    assert parse(dialect, raw.replace(b"\n", b"\r\n")) == parse(dialect, raw)


# --- the live path: httpx streaming response, any chunking ---


class Chunks(httpx.AsyncByteStream):
    """A response body that arrives in the given pieces."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = chunks
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


async def stream(dialect: Any, chunks: Sequence[bytes]) -> list[StreamEvent]:
    body = Chunks(chunks)
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    parser = make_parser(dialect)
    events: list[StreamEvent] = []
    try:
        async for sse in aiter_events(response):
            events += parser.feed(sse.event, sse.data)
    finally:
        await response.aclose()
    assert body.closed
    return events + parser.finish()


def cut(data: bytes, points: Sequence[int]) -> list[bytes]:
    bounds = [0, *sorted(set(points)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


ALL = [(str(case.values[0]), str(case.values[1])) for case in CASES]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_chunking_gives_the_same_events(data: st.DataObject):
    name, dialect = data.draw(st.sampled_from(ALL), label="capture")
    raw = read(name)
    points = data.draw(st.lists(st.integers(0, len(raw)), max_size=60), label="cuts")
    assert asyncio.run(stream(dialect, cut(raw, points))) == parse(dialect, raw)[0]


@pytest.mark.parametrize(("name", "dialect", "expected"), CASES)
def test_byte_by_byte_gives_the_same_events(name: str, dialect: str, expected: Expected):
    raw = read(name)
    chunks = [raw[i : i + 1] for i in range(len(raw))]
    assert asyncio.run(stream(dialect, chunks)) == parse(dialect, raw)[0]


@pytest.mark.parametrize(
    "end",
    [
        pytest.param(b"", id="none"),
        pytest.param(b"\n", id="lf"),
        pytest.param(b"\r", id="cr"),
        pytest.param(b"\r\n", id="crlf"),
        pytest.param(b"\n\n", id="lf-lf"),
        pytest.param(b"\r\r", id="cr-cr"),
        pytest.param(b"\r\n\r\n", id="crlf-crlf"),
        pytest.param(b"\n\r\n", id="lf-crlf"),
    ],
)
def test_last_event_delivered_however_the_stream_ends(end: bytes):
    data = b'event: error\ndata: {"a": 1}   ' + end
    expected = [("error", '{"a": 1}   ')]
    assert [(e.event, e.data) for e in iter_file_events(data)] == expected

    async def live() -> list[tuple[str, str]]:
        body = Chunks([data[i : i + 1] for i in range(len(data))])
        response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
        return [(e.event, e.data) async for e in aiter_events(response)]

    assert asyncio.run(live()) == expected


@pytest.mark.parametrize(
    ("tail", "end"),
    [
        pytest.param(b"", b"", id="empty"),
        pytest.param(b"}  ", b"\n\n", id="unterminated"),
        pytest.param(b"}\n", b"\n", id="one-lf"),
        pytest.param(b"}\r", b"\r", id="one-cr"),
        pytest.param(b"}\r\n", b"\n", id="one-crlf"),
        pytest.param(b"}\n\n", b"", id="done-lf"),
        pytest.param(b"\r\n\r\n", b"", id="done-crlf"),
    ],
)
def test_missing_terminator(tail: bytes, end: bytes):
    assert missing_terminator(tail) == end


def test_a_response_that_is_not_an_event_stream_is_refused():
    from httpx_sse import SSEError

    async def run() -> None:
        response = httpx.Response(200, headers={"content-type": "application/json"}, content=b"{}")
        async for _ in aiter_events(response):
            pass

    with pytest.raises(SSEError):
        asyncio.run(run())


# --- OpenAI edge cases ---


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
            UsageReport(5, 0, total_input_tokens=5),
            id="null-then-empty-choices",
        ),
        pytest.param(
            [chunk(finish="stop", usage={"prompt_tokens": 9, "completion_tokens": 3})],
            UsageReport(9, 3, total_input_tokens=9),
            id="with-finish-reason",
        ),
        pytest.param(
            [
                chunk(usage={"prompt_tokens": 9, "completion_tokens": 1}),
                chunk(usage={"prompt_tokens": 9, "completion_tokens": 4}),
            ],
            UsageReport(9, 4, total_input_tokens=9),
            id="cumulative-latest-wins",
        ),
        pytest.param(
            [chunk(usage={"prompt_tokens": 10, "prompt_cache_hit_tokens": 8})],
            UsageReport(10, 0, cache_read_tokens=8, total_input_tokens=10),
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
            UsageReport(10, 7, 6, 2, 5, 10),
            id="details",
        ),
    ],
)
def test_openai_usage_is_reported_once_at_the_end(chunks: list[str], usage: UsageReport):
    events = feed_all(OpenAIStreamParser(), [*chunks, "[DONE]"])
    assert [e for e in events if isinstance(e, UsageReport)] == [usage]
    assert isinstance(events[-1], (UsageReport, Finish))


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
    assert events == [ThinkingDelta("think"), TextDelta("say"), TextDelta("No.")]


def test_openai_error_event_and_unknown_events(caplog: pytest.LogCaptureFixture):
    parser = OpenAIStreamParser()
    with caplog.at_level(logging.DEBUG, logger="tokengauge.upstream.openai_stream"):
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


# --- Anthropic edge cases ---


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
    assert events == [UsageReport(10, 7, 20, 5, 0, 35), Finish("end_turn")]


def test_anthropic_message_delta_input_fields_win():
    events = feed_all(
        AnthropicStreamParser(),
        [START, stop_reason("max_tokens", input_tokens=12, cache_read_input_tokens=0), STOP],
    )
    assert events == [UsageReport(12, 1, 0, 5, 0, 17), Finish("max_tokens")]


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


def test_anthropic_skips_blocks_it_does_not_show(caplog: pytest.LogCaptureFixture):
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy"}
    server_tool = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}
    with caplog.at_level(logging.DEBUG, logger="tokengauge.upstream.anthropic_stream"):
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
    assert events == [TextDelta("Done.")]
    assert "redacted_thinking" in caplog.text
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
    assert events == [ThinkingDelta("Hm"), ThinkingDelta("", signature="c2ln")]


def test_anthropic_cut_off_inside_a_tool_use(caplog: pytest.LogCaptureFixture):
    parser = AnthropicStreamParser()
    with caplog.at_level(logging.WARNING):
        events = feed_all(parser, [START, tool_start(0), json_delta(0, '{"a": ')])
    assert events == [UsageReport(10, 1, 20, 5, 0, 35)]  # what the API did read is still real
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


# --- parse-stream ---


def test_parse_stream_prints_json_lines(capsys: pytest.CaptureFixture[str]):
    assert main_parse_stream("anthropic", WIRE / "anthropic-stream-text.sse") == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        {"type": "text", "value": "Hello"},
        event_json(UsageReport(10, 4, total_input_tokens=10)),
    ]


def test_parse_stream_exits_1_on_an_error(capsys: pytest.CaptureFixture[str]):
    assert main_parse_stream("anthropic", WIRE / "error-anthropic-overloaded-stream-event.sse") == 1
    assert json.loads(capsys.readouterr().out) == {"type": "error", "message": "Overloaded"}


def test_parse_stream_exits_1_on_a_cut_off_capture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    raw = read("anthropic-stream-thinking.sse")
    path = tmp_path / "cut.sse"
    path.write_bytes(raw[: raw.index(b"\n\n", len(raw) // 2) + 2])
    assert main_parse_stream("anthropic", path) == 1
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["type"] == "error"
    assert "message_stop" in last["message"]


def test_parse_stream_exits_2_when_the_file_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    assert main_parse_stream("openai", tmp_path / "missing.sse") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot read" in captured.err


def test_make_parser_rejects_an_unknown_dialect():
    with pytest.raises(ValueError, match="unknown stream dialect"):
        make_parser("gemini")  # type: ignore[arg-type]
