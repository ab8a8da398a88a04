"""Raw token counts of messages and tools (ARCHITECTURE §4), before any calibration.

Nothing here knows about calibration or LSP: a `RequestCounter` turns ARCHITECTURE §3 objects into
tiktoken counts split by what calibration learns separately — CJK text (whose ratio to the API's
tokenizer differs most from other text), the rest of the text, and the tools' JSON — plus the
strings Copilot Chat counts for those tools (`ToolWalk`). Structural overheads (per message, per
request) are not counted here: calibration learns them. VS Code's ephemeral data parts
(`messages.is_ephemeral`) cost nothing and are left out of digests, as are tool-call ids (Copilot
counts a message with its internal id and sends it without).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any, Final

import attrs

from tokengauge.counting.images import ImageRule, image_tokens
from tokengauge.counting.text import TextCounter, TextMemo, encode_ordinary
from tokengauge.messages import (
    EPHEMERAL_MIME_TYPES,
    TEXT_MIME_PREFIXES,
    DataPart,
    Message,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
    converter,
    countable_parts,
    to_json_text,
)

BASE64_CHARS_PER_TOKEN: Final = 4  # one token per 3 bytes of binary data
ENCRYPTED_CHARS_PER_TOKEN: Final = 8
"""An OpenAI reasoning item's encrypted content per reasoning token it holds (the captures:
3,896 characters for 448 tokens, 5,168 for 512; 8 leans to counting more)."""
CJK_RUN: Final = re.compile(
    "[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+"
)
"""CJK punctuation, kana, ideographs, Hangul and full-width forms, in runs."""
CJK_CACHE_SIZE: Final = 2000
CJK_CACHE_BYTES: Final = 2 * 2**20
"""Most bytes the texts whose CJK share is kept hold (`TextMemo`)."""


def _without_call_ids(parts: Sequence[Part]) -> list[Part]:
    out: list[Part] = []
    for part in parts:
        if isinstance(part, ToolResultPart):
            part = attrs.evolve(part, call_id="", content=_without_call_ids(part.content))
        elif isinstance(part, ToolCallPart):
            part = attrs.evolve(part, call_id="")
        out.append(part)
    return out


def message_digest(message: Message) -> str:
    """SHA-256 of the canonical JSON `{role, parts}`, ephemeral parts and tool-call ids left out."""
    parts = _without_call_ids(countable_parts(message.content))
    canonical = {"role": message.role, "parts": converter.unstructure(parts, list[Part])}
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def tool_json(tool: Tool) -> str:
    """A tool as the API reads it: `{name, description, parameters}` in JSON."""
    return to_json_text(
        {"name": tool.name, "description": tool.description, "parameters": tool.input_schema or {}}
    )


def walk_strings(tool: Tool) -> Iterator[str]:
    """Every key and string value Copilot counts for a tool, as often as it counts them.

    Copilot's `countToolTokens` walks `{name, description, parameters}`: for each entry whose value
    is truthy in JavaScript, the key, then the value if a string, or its entries if an object or
    array (array items keyed "0", "1", …). Numbers, booleans and punctuation count nothing.
    """

    def visit(node: dict[str, Any]) -> Iterator[str]:
        for key, value in node.items():
            if not value and not isinstance(value, (dict, list)):
                continue  # JavaScript falsiness: '', 0, false, null (objects are truthy)
            yield key
            if isinstance(value, str):
                yield value
            elif isinstance(value, dict):
                yield from visit(value)
            elif isinstance(value, list):
                yield from visit({str(i): item for i, item in enumerate(value)})

    root = {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}
    yield from visit(root)


def _decoded_text(data_base64: str) -> str | None:
    try:
        return base64.b64decode(data_base64, validate=False).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


@attrs.frozen
class TextCount:
    """Raw tokens of some content: all of it, and how many of them are CJK text."""

    total: int = 0
    cjk: int = 0

    @property
    def other(self) -> int:
        """Tokens that are not CJK text."""
        return self.total - self.cjk

    def __add__(self, other: TextCount) -> TextCount:
        return TextCount(self.total + other.total, self.cjk + other.cjk)


ZERO: Final = TextCount()


@attrs.frozen
class ToolWalk:
    """A request's tools: how many, their JSON's raw tokens as sent, the raw count of each string
    Copilot counts for them (as often as it counts it: it walks the tools it has, in full), and
    the raw tokens of JSON a reduced form of the tools left out (`tokenGauge.models[].toolDocs`)."""

    tools: int = 0
    json: int = 0
    raws: tuple[int, ...] = ()
    left_out: int = attrs.field(default=0, eq=False)


@attrs.frozen
class RequestFeatures:
    """Raw counts of one whole request: each message (system included), and the tools."""

    messages: tuple[TextCount, ...]
    roles: tuple[Role, ...]
    digests: tuple[str, ...]
    walk: ToolWalk
    reasoning: int = 0
    """Raw tokens of the reasoning the messages send back (counted in `messages`)."""

    @property
    def tools(self) -> int:
        """Raw tokens of the tools' JSON."""
        return self.walk.json

    @property
    def text(self) -> TextCount:
        """All messages together."""
        return sum(self.messages, ZERO)


def current_turn(messages: Sequence[Message]) -> int:
    """The index of the last user message that is not only tool results (0 if none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and not all(
            isinstance(p, ToolResultPart) for p in countable_parts(message.content)
        ):
            return index
    return 0


class RequestCounter:
    """Raw counts for one encoding and one image rule."""

    def __init__(self, text: TextCounter, image_rule: ImageRule) -> None:
        self.text = text
        self.image_rule = image_rule
        self._cjk: TextMemo[int] = TextMemo(CJK_CACHE_BYTES, CJK_CACHE_SIZE)

    def string(self, value: str) -> TextCount:
        """Tokens of a text, with its CJK share."""
        total = self.text.count(value)
        return TextCount(total, min(total, self.cjk(value)))

    def cjk(self, value: str) -> int:
        """Tokens of the CJK runs in a text (0 for ASCII text, at no cost)."""
        if value.isascii():
            return 0
        cached = self._cjk.recall(value)
        if cached is None:
            runs = CJK_RUN.findall(value)
            # Runs joined by newlines, each newline one token of its own in both encodings.
            joined = len(encode_ordinary(self.text.encoding, "\n".join(runs))) if runs else 0
            cached = max(0, joined - max(0, len(runs) - 1))
            self._cjk.remember(value, cached)
        return cached

    def part(self, part: Part) -> TextCount:
        """Tokens of one part (an encrypted reasoning item: by its content's length)."""
        if isinstance(part, ThinkingPart) and part.encrypted:
            return TextCount(math.ceil(len(part.encrypted) / ENCRYPTED_CHARS_PER_TOKEN))
        if isinstance(part, (TextPart, ThinkingPart)):
            return self.string(part.value)
        if isinstance(part, ToolCallPart):
            return self.string(part.name) + self.string(to_json_text(part.input))
        if isinstance(part, ToolResultPart):
            return sum((self.part(inner) for inner in part.content), ZERO)
        if isinstance(part, DataPart):
            return self._data(part)
        if isinstance(part, UnknownPart):
            return self.string(to_json_text(part.json))
        raise TypeError(f"not a part: {part!r}")

    def _data(self, part: DataPart) -> TextCount:
        if part.mime_type in EPHEMERAL_MIME_TYPES:
            return ZERO
        if part.mime_type.startswith("image/"):
            return TextCount(image_tokens(part.data, self.image_rule))
        if part.mime_type.startswith(TEXT_MIME_PREFIXES):
            text = _decoded_text(part.data)
            if text is not None:
                return self.string(text)
        return TextCount(math.ceil(len(part.data) / BASE64_CHARS_PER_TOKEN))

    def message(self, message: Message, *, thinking: bool = True) -> TextCount:
        """Tokens of one message's name and parts (its structural overhead is calibration's);
        `thinking`: its thinking parts with them (a Chat Completions server's reasoning is
        counted always: a message keeps it only where it goes back)."""
        name = self.string(message.name) if message.name else ZERO
        parts = (p for p in message.content if not _left_out(p, thinking))
        return sum((self.part(part) for part in parts), name)

    def reasoning(self, message: Message, *, thinking: bool = True) -> int:
        """Tokens of the reasoning `message` (as `message` counts it) sends back."""
        thoughts = (p for p in message.content if isinstance(p, ThinkingPart))
        return sum(self.part(p).total for p in thoughts if not _left_out(p, thinking))

    def tools(self, tools: Sequence[Tool], given: Sequence[Tool] | None = None) -> ToolWalk:
        """The JSON tokens of the tools sent and the raw counts of the strings Copilot counts for
        the tools it gave (`given`: their full form, in the same order, when `tools` is a reduced
        one; only the tools sent reduced are counted twice)."""
        sent = [self.text.count(tool_json(tool)) for tool in tools]
        walked = tools if given is None else given
        raws = tuple(self.text.count(s) for tool in walked for s in walk_strings(tool))
        left_out = 0
        if given is not None:  # what the whole JSON of each tool sent reduced adds
            left_out = sum(
                self.text.count(tool_json(whole)) - tokens
                for tool, whole, tokens in zip(tools, given, sent, strict=True)
                if tool != whole
            )
        return ToolWalk(len(walked), sum(sent), raws, max(0, left_out))

    def request(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        given: Sequence[Tool] | None = None,
    ) -> RequestFeatures:
        """Raw counts of a whole request (`given`: see `tools`). As the APIs count, thinking of
        turns before the last user turn is not counted (Anthropic strips those blocks, OpenAI
        drops those reasoning items); the current turn's is, and so is a Chat Completions
        server's reasoning wherever it goes back (DeepSeek reads it in every later request)."""
        turn = current_turn(messages)
        return RequestFeatures(
            messages=tuple(self.message(m, thinking=i >= turn) for i, m in enumerate(messages)),
            roles=tuple(m.role for m in messages),
            digests=tuple(message_digest(m) for m in messages),
            walk=self.tools(tools, given),
            reasoning=sum(self.reasoning(m, thinking=i >= turn) for i, m in enumerate(messages)),
        )


def _left_out(part: Part, thinking: bool) -> bool:
    """Whether a part is thinking the API does not read (`thinking`: the turn's is read)."""
    return isinstance(part, ThinkingPart) and not (thinking or part.carried)
