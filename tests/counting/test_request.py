"""Tests for tokengauge.counting.request: digests, and raw counts of parts, messages, tools and
requests.

Expected counts are computed here from tiktoken (`encode_ordinary`), following ARCHITECTURE §4.
"""

from __future__ import annotations

import base64
import json
import math
import struct
import sys
import zlib
from collections.abc import Callable
from typing import Any

import pytest
import tiktoken

from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.images import WORST_CASE, ImageRule
from tokengauge.counting.request import (
    CJK_CACHE_BYTES,
    RequestCounter,
    TextCount,
    ToolWalk,
    message_digest,
    walk_strings,
)
from tokengauge.counting.text import TextCounter
from tokengauge.messages import (
    DataPart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
    countable_parts,
    is_ephemeral,
)


@pytest.fixture(scope="module")
def registry() -> EncodingRegistry:
    return EncodingRegistry()


@pytest.fixture(scope="module", params=["cl100k_base", "o200k_base"])
def enc(request: pytest.FixtureRequest, registry: EncodingRegistry) -> tiktoken.Encoding:
    return registry.get(request.param)


@pytest.fixture
def counter(enc: tiktoken.Encoding) -> RequestCounter:
    return RequestCounter(TextCounter(enc), ImageRule.OPENAI)


def n(enc: tiktoken.Encoding, text: str) -> int:
    """Exact tiktoken count."""
    return len(enc.encode_ordinary(text))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def png(width: int, height: int) -> bytes:
    """A complete 1-bit greyscale PNG."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    idat = zlib.compress((b"\x00" * (1 + math.ceil(width / 8))) * height)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


PNG_1024 = b64(png(1024, 1024))
EPHEMERAL = ("cache_control", "stateful_marker", "usage")
USAGE_JSON = b64(json.dumps({"prompt_tokens": 1200, "completion_tokens": 80}).encode())


# --- digests ------------------------------------------------------------------------------------


def user(*parts: Part, role: Any = "user") -> Message:
    return Message(role=role, content=list(parts))


@pytest.mark.parametrize("mime", EPHEMERAL)
def test_digest_ignores_ephemeral_parts(mime: str) -> None:
    plain = user(TextPart("hello"), ToolCallPart("c1", "read", {"path": "a.py"}))
    marked = user(
        DataPart(mime, USAGE_JSON),
        TextPart("hello"),
        DataPart(mime, b64(b"ephemeral")),
        ToolCallPart("c1", "read", {"path": "a.py"}),
        DataPart(mime, ""),
    )
    assert message_digest(marked) == message_digest(plain)


@pytest.mark.parametrize("mime", EPHEMERAL)
def test_digest_ignores_ephemeral_parts_inside_tool_results(mime: str) -> None:
    plain = user(ToolResultPart("c1", [TextPart("file contents")]))
    marked = user(ToolResultPart("c1", [TextPart("file contents"), DataPart(mime, USAGE_JSON)]))
    assert message_digest(marked) == message_digest(plain)


def test_digest_is_stable_and_hex_sha256() -> None:
    def build() -> Message:
        return user(
            TextPart("héllo 世界 🎉"),
            ToolResultPart("c1", [TextPart("ok"), DataPart("image/png", PNG_1024)]),
            ThinkingPart("hmm"),
            UnknownPart({"k": [1, 2]}),
        )

    first = message_digest(build())
    assert first == message_digest(build())
    assert first == message_digest(build())
    assert len(first) == 64
    int(first, 16)


BASE = user(TextPart("hello"), ToolCallPart("c1", "read", {"path": "a.py"}))


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param(user(*BASE.content, role="assistant"), id="role"),
        pytest.param(user(TextPart("hello!"), BASE.content[1]), id="text"),
        pytest.param(user(BASE.content[1], TextPart("hello")), id="order"),
        pytest.param(
            user(TextPart("hello"), ToolCallPart("c1", "read", {"path": "b.py"})), id="arg"
        ),
        pytest.param(
            user(TextPart("hello"), ToolCallPart("c1", "grep", {"path": "a.py"})), id="name"
        ),
        pytest.param(user(ThinkingPart("hello"), BASE.content[1]), id="text-vs-thinking"),
        pytest.param(user(TextPart("hello"), BASE.content[1], TextPart("")), id="extra-part"),
        pytest.param(user(*BASE.content, DataPart("image/png", PNG_1024)), id="non-ephemeral-data"),
    ],
)
def test_digest_changes_with_content(changed: Message) -> None:
    assert message_digest(changed) != message_digest(BASE)


def test_digest_ignores_tool_call_ids() -> None:
    """Copilot counts a message with its internal call id (`…__vscode-N`) and sends it without."""
    counted = user(
        ToolCallPart("call_1__vscode-17", "read", {}), ToolResultPart("call_1__vscode-17", [])
    )
    sent = user(ToolCallPart("call_1", "read", {}), ToolResultPart("call_1", []))
    assert message_digest(counted) == message_digest(sent)


def test_countable_parts_drops_ephemeral_everywhere() -> None:
    image = DataPart("image/png", PNG_1024)
    parts: list[Part] = [
        DataPart("cache_control", ""),
        TextPart("a"),
        ToolResultPart("c1", [DataPart("stateful_marker", "eA=="), TextPart("b"), image]),
        DataPart("usage", USAGE_JSON),
        ThinkingPart("t"),
    ]
    assert countable_parts(parts) == [
        TextPart("a"),
        ToolResultPart("c1", [TextPart("b"), image]),
        ThinkingPart("t"),
    ]
    # The input is left as it was.
    assert len(parts) == 5
    assert isinstance(parts[2], ToolResultPart)
    assert len(parts[2].content) == 3


@pytest.mark.parametrize(
    ("part", "ephemeral"),
    [
        pytest.param(DataPart("cache_control", ""), True, id="cache_control"),
        pytest.param(DataPart("stateful_marker", ""), True, id="stateful_marker"),
        pytest.param(DataPart("usage", ""), True, id="usage"),
        pytest.param(DataPart("image/png", ""), False, id="image"),
        pytest.param(TextPart("usage"), False, id="text-saying-usage"),
    ],
)
def test_is_ephemeral(part: Part, ephemeral: bool) -> None:
    assert is_ephemeral(part) is ephemeral


# --- parts --------------------------------------------------------------------------------------

TOOL_INPUT = {"query": "日本語 ünïcödé", "limit": 10, "nested": {"flags": [True, None]}}
JSON_DOC = {"name": "tokengauge", "tags": ["λ", "🎉"], "n": 3}
BINARY = b64(bytes(range(256)) * 3)  # 1024 base64 characters

PARTS: list[Any] = [
    pytest.param(TextPart("Hello, world!"), lambda e: n(e, "Hello, world!"), id="text"),
    pytest.param(TextPart(""), lambda e: 0, id="empty-text"),
    pytest.param(
        ThinkingPart("Let me think… 考える"), lambda e: n(e, "Let me think… 考える"), id="thinking"
    ),
    pytest.param(
        ToolCallPart("call_1", "search_files", TOOL_INPUT),
        lambda e: n(e, "search_files") + n(e, json.dumps(TOOL_INPUT, ensure_ascii=False)),
        id="tool-call",
    ),
    pytest.param(
        ToolCallPart("call_2", "list", {}),
        lambda e: n(e, "list") + n(e, "{}"),
        id="tool-call-empty-input",
    ),
    pytest.param(
        ToolCallPart("call_3", "raw", "not json {"),
        lambda e: n(e, "raw") + n(e, json.dumps("not json {", ensure_ascii=False)),
        id="tool-call-string-input",
    ),
    pytest.param(
        ToolResultPart(
            "call_1",
            [
                TextPart("first"),
                DataPart("usage", USAGE_JSON),
                DataPart("text/plain", b64("second ✓".encode())),
            ],
        ),
        lambda e: n(e, "first") + n(e, "second ✓"),
        id="tool-result",
    ),
    pytest.param(
        ToolResultPart("call_1", [TextPart("see image"), DataPart("image/png", PNG_1024)]),
        lambda e: n(e, "see image") + 765,
        id="tool-result-with-image",
    ),
    pytest.param(ToolResultPart("call_1", []), lambda e: 0, id="tool-result-empty"),
    pytest.param(DataPart("image/png", PNG_1024), lambda e: 765, id="image"),
    pytest.param(
        DataPart("image/jpeg", "garbage!"),
        lambda e: WORST_CASE[ImageRule.OPENAI],
        id="image-unreadable",
    ),
    pytest.param(
        DataPart("image/png", ""), lambda e: WORST_CASE[ImageRule.OPENAI], id="image-empty"
    ),
    pytest.param(
        DataPart("text/plain", b64("plain text, naïve café".encode())),
        lambda e: n(e, "plain text, naïve café"),
        id="text-plain",
    ),
    pytest.param(
        DataPart("text/markdown", b64(b"# Title\n\n* item\n")),
        lambda e: n(e, "# Title\n\n* item\n"),
        id="text-markdown",
    ),
    pytest.param(
        DataPart("application/json", b64(json.dumps(JSON_DOC, ensure_ascii=False).encode())),
        lambda e: n(e, json.dumps(JSON_DOC, ensure_ascii=False)),
        id="application-json",
    ),
    pytest.param(
        DataPart("text/plain", b64(b"\xff\xfe\xfa not utf-8")),
        lambda e: math.ceil(len(b64(b"\xff\xfe\xfa not utf-8")) / 4),
        id="text-not-utf8-by-size",
    ),
    pytest.param(DataPart("application/pdf", BINARY), lambda e: 1024 // 4, id="binary"),
    pytest.param(DataPart("application/octet-stream", "QUJDRA=="), lambda e: 2, id="binary-small"),
    pytest.param(DataPart("application/zip", "QQ"), lambda e: 1, id="binary-rounds-up"),
    pytest.param(DataPart("cache_control", USAGE_JSON), lambda e: 0, id="cache_control"),
    pytest.param(DataPart("stateful_marker", USAGE_JSON), lambda e: 0, id="stateful_marker"),
    pytest.param(DataPart("usage", USAGE_JSON), lambda e: 0, id="usage"),
    pytest.param(
        UnknownPart({"kind": "mystery", "payload": ["ü", 1]}),
        lambda e: n(e, json.dumps({"kind": "mystery", "payload": ["ü", 1]}, ensure_ascii=False)),
        id="unknown",
    ),
    pytest.param(UnknownPart(None), lambda e: n(e, "null"), id="unknown-null"),
]


@pytest.mark.parametrize(("part", "expected"), PARTS)
def test_part(
    counter: RequestCounter,
    enc: tiktoken.Encoding,
    part: Part,
    expected: Callable[[tiktoken.Encoding], int],
) -> None:
    assert counter.part(part).total == expected(enc)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        pytest.param(ImageRule.OPENAI, 765, id="openai"),
        pytest.param(ImageRule.ANTHROPIC, math.ceil(1024 * 1024 / 750), id="anthropic"),
        pytest.param(ImageRule.GEMINI, 258 * 4, id="gemini"),
    ],
)
def test_image_part_follows_the_rule(
    enc: tiktoken.Encoding, rule: ImageRule, expected: int
) -> None:
    counter = RequestCounter(TextCounter(enc), rule)
    assert counter.part(DataPart("image/png", PNG_1024)).total == expected


def test_part_rejects_non_parts(counter: RequestCounter) -> None:
    with pytest.raises(TypeError):
        counter.part("just a string")  # type: ignore[arg-type]


# --- messages -----------------------------------------------------------------------------------


def test_message_is_name_plus_parts(counter: RequestCounter, enc: tiktoken.Encoding) -> None:
    """A message's raw count has no structural overhead: calibration learns the API's."""
    message = Message(
        role="assistant",
        name="helper_bot",
        content=[
            TextPart("I'll read the file."),
            ThinkingPart("The user wants a.py"),
            ToolCallPart("c1", "read_file", {"path": "src/a.py"}),
            DataPart("cache_control", ""),
        ],
    )
    expected = (
        n(enc, "helper_bot")
        + n(enc, "I'll read the file.")
        + n(enc, "The user wants a.py")
        + n(enc, "read_file")
        + n(enc, json.dumps({"path": "src/a.py"}, ensure_ascii=False))
    )
    assert counter.message(message) == TextCount(expected, 0)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param(Message(role="user"), lambda e: 0, id="empty"),
        pytest.param(Message(role="user", name=""), lambda e: 0, id="empty-name"),
        pytest.param(
            Message(role="user", content=[DataPart("usage", USAGE_JSON)]),
            lambda e: 0,
            id="only-ephemeral",
        ),
        pytest.param(
            Message(role="system", content=[TextPart("You are terse.")]),
            lambda e: n(e, "You are terse."),
            id="system-text",
        ),
        pytest.param(
            Message(role="user", content=[TextPart("a"), TextPart("b")]),
            lambda e: n(e, "a") + n(e, "b"),
            id="parts-counted-separately",
        ),
    ],
)
def test_message_table(
    counter: RequestCounter,
    enc: tiktoken.Encoding,
    message: Message,
    expected: Callable[[tiktoken.Encoding], int],
) -> None:
    assert counter.message(message).total == expected(enc)


# --- CJK text -----------------------------------------------------------------------------------

CJK = "请审阅这份中文事故报告，并指出最早出现的问题。"


@pytest.mark.parametrize(
    ("text", "share"),
    [
        pytest.param("plain ASCII text, no CJK at all", "none", id="ascii"),
        pytest.param("café naïve – accents are not CJK", "none", id="latin"),
        pytest.param(CJK, "all", id="chinese"),
        pytest.param("ひらがなとカタカナ、한국어도", "all", id="kana-hangul"),
        pytest.param(f"def f():\n    # {CJK}\n    return 1\n", "some", id="code-with-cjk"),
    ],
)
def test_cjk_share(counter: RequestCounter, enc: tiktoken.Encoding, text: str, share: str) -> None:
    count = counter.string(text)
    assert count.total == n(enc, text)
    if share == "none":
        assert count.cjk == 0
    elif share == "all":
        assert count.cjk == pytest.approx(count.total, abs=1)
    else:
        assert 0 < count.cjk < count.total
    assert count.other == count.total - count.cjk >= 0


def test_cjk_share_of_a_million_ideographic_spaces(counter: RequestCounter) -> None:
    """U+3000 is CJK punctuation and whitespace: its runs went to tiktoken whole, whose regex
    panics near 1,000,000 whitespace characters (the process died)."""
    count = counter.string("\u3000" * 1_000_000)
    assert 0 < count.cjk <= count.total


def test_cjk_share_adds_up_over_parts(counter: RequestCounter) -> None:
    message = Message(role="user", content=[TextPart(CJK), TextPart("and some English")])
    parts = [counter.part(part) for part in message.content]
    assert counter.message(message) == TextCount(
        sum(p.total for p in parts), sum(p.cjk for p in parts)
    )


# --- tools --------------------------------------------------------------------------------------

READ_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "Fichier à lire"}},
    "required": ["path"],
}
GREP_SCHEMA = {"type": "object", "properties": {"pattern": {"type": "string"}}}
TOOLS = [
    Tool("read_file", "Read a file from the workspace. Lit un fichier.", READ_SCHEMA),
    Tool("grep", "Search text", GREP_SCHEMA),
    Tool("noop", "", {}),
]


def test_tools_json_and_copilot_walk(counter: RequestCounter, enc: tiktoken.Encoding) -> None:
    walk = counter.tools(TOOLS)
    assert walk.tools == 3
    assert walk.json == sum(
        n(
            enc,
            json.dumps(
                {"name": t.name, "description": t.description, "parameters": t.input_schema},
                ensure_ascii=False,
            ),
        )
        for t in TOOLS
    )
    strings = [s for tool in TOOLS for s in walk_strings(tool)]
    assert walk.raws == tuple(n(enc, s) for s in strings)


def test_walk_strings_as_copilot_walks_them() -> None:
    """Keys and string values, in order; falsy values skipped (JavaScript's falsiness: objects and
    arrays are truthy even when empty); arrays keyed by index."""
    tool = Tool(
        "grep",
        "Search text",
        {
            "type": "object",
            "properties": {"pattern": {"type": "string", "default": "", "minLength": 0}},
            "required": ["pattern"],
            "additionalProperties": False,
            "examples": [],
        },
    )
    assert list(walk_strings(tool)) == [
        "name",
        "grep",
        "description",
        "Search text",
        "parameters",
        "type",
        "object",
        "properties",
        "pattern",
        "type",
        "string",
        "required",
        "0",
        "pattern",
        "examples",
    ]
    assert list(walk_strings(Tool("noop", "", None))) == ["name", "noop"]


def test_no_tools_cost_nothing(counter: RequestCounter) -> None:
    assert counter.tools([]) == ToolWalk()


# --- whole requests -----------------------------------------------------------------------------


def test_request_counts_every_message_and_the_tools(
    counter: RequestCounter, enc: tiktoken.Encoding
) -> None:
    system = Message(role="system", content=[TextPart("You are a careful assistant.")])
    first = Message(role="user", content=[TextPart("Read a.py")])
    second = Message(role="assistant", content=[ToolCallPart("c1", "read_file", {"path": "a.py"})])
    third = Message(role="user", content=[ToolResultPart("c1", [TextPart("print('hi')")])])
    tool = Tool("read_file", "Read a file.", READ_SCHEMA)

    request = counter.request([system, first, second, third], [tool])

    assert [m.total for m in request.messages] == [
        n(enc, "You are a careful assistant."),
        n(enc, "Read a.py"),
        n(enc, "read_file") + n(enc, json.dumps({"path": "a.py"})),
        n(enc, "print('hi')"),
    ]
    assert request.roles == ("system", "user", "assistant", "user")
    assert request.digests == tuple(message_digest(m) for m in (system, first, second, third))
    assert request.walk == counter.tools([tool])
    assert request.tools == request.walk.json
    assert request.text.total == sum(m.total for m in request.messages)


def test_empty_request(counter: RequestCounter) -> None:
    request = counter.request([], [])
    assert (request.messages, request.digests, request.tools, request.text) == (
        (),
        (),
        0,
        TextCount(),
    )


def test_thinking_counts_in_its_turn_only(counter: RequestCounter, enc: tiktoken.Encoding) -> None:
    """Anthropic strips thinking blocks of earlier turns and OpenAI drops their reasoning items:
    the current turn's (after the last user message that is not only tool results) count."""
    signed = ThinkingPart("Check a.py first.", signature="c2ln")
    reasoning = ThinkingPart("", id="rs_1", encrypted="g" * 800)
    call = ToolCallPart("c1", "read_file", {"path": "a.py"})
    earlier = Message(role="assistant", content=[signed, reasoning, TextPart("Done.")])
    current = Message(role="assistant", content=[signed, reasoning, call])
    result = Message(role="user", content=[ToolResultPart("c1", [TextPart("x")])])
    messages = [
        Message(role="user", content=[TextPart("Fix a.py")]),
        earlier,
        Message(role="user", content=[TextPart("And b.py")]),
        current,
        result,
    ]

    request = counter.request(messages, [])

    thinking = n(enc, "Check a.py first.") + 800 // 8  # an encrypted item by its length
    assert request.messages[1].total == n(enc, "Done.")
    assert request.messages[3].total == thinking + counter.part(call).total
    # One message alone (as Copilot counts) keeps its thinking: more, never less.
    assert counter.message(earlier).total == thinking + n(enc, "Done.")


def test_a_reduced_form_is_counted_as_sent_and_walked_as_given(
    counter: RequestCounter, enc: tiktoken.Encoding
) -> None:
    """Sent `reduced`, given `TOOLS`: the JSON is what is sent, the strings are those Copilot
    walks (the tools it has, in full), and what the reduced form left out is kept."""
    reduced = [Tool(t.name, t.description.split(".")[0], {}) for t in TOOLS]
    walk = counter.tools(reduced, TOOLS)
    assert walk.json == counter.tools(reduced).json
    assert walk.raws == counter.tools(TOOLS).raws
    assert walk.left_out == counter.tools(TOOLS).json - walk.json > 0
    assert counter.request([], reduced, TOOLS).walk == walk


def test_the_cjk_cache_is_bounded_by_bytes(counter: RequestCounter) -> None:
    texts = [f"{i} " + CJK * 20_000 for i in range(20)]  # ~0.5 MB each, as Python holds them
    for text in texts:
        counter.cjk(text)
    assert sum(sys.getsizeof(text) for text in counter._cjk) <= CJK_CACHE_BYTES
    assert texts[-1] in counter._cjk and texts[0] not in counter._cjk
