"""Nothing sent twice: a tool result that repeats an earlier one word for word goes as a one-line
reference to it (`tokenGauge.deduplicateToolResults`).

Copilot's agent reads the same file again and again (the standard scenario of the Copilot suite
reads one file three times and three more twice in 24 turns, each time whole), and every copy is
paid for in every later request. The later copy, not the earlier, becomes the reference: what the
API has cached of the conversation stays a prefix of the next request (an earlier copy replaced
would make all that follows it fresh again), and the model has the text where it first read it,
told that the new call found exactly that. Only the text of tool results is looked at: never a user
message, never a result with images or data in it, never an error, and never a short result (the
reference would be about as long).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Final

import attrs

from tokengauge.messages import Message, Part, TextPart, ToolCallPart, ToolResultPart

LEAST_CHARS: Final = 512
"""A result shorter than this goes whole, however often it repeats."""
ERROR_LEADS: Final = ("error", "err:", "failed", "exception", "traceback")
"""How a result that reports a failure begins (lower case): such a result always goes whole."""


@attrs.frozen
class Replaced:
    """Messages with some tool results sent as a line of text instead."""

    messages: list[Message]
    results: int = 0
    """Results that went as a line of text."""
    chars: int = 0
    """Characters of result text left out."""


def replace_results(
    messages: Sequence[Message], line_for: Callable[[ToolResultPart, str], str | None]
) -> Replaced:
    """`messages` with each all-text tool result for which `line_for(result, its text)` gives a
    line sent as that line (in order: `line_for` may keep what it has seen)."""
    out: list[Message] = []
    results = chars = 0
    for message in messages:
        content: list[Part] = []
        for part in message.content:
            text = result_text(part)
            if not isinstance(part, ToolResultPart) or not text:
                content.append(part)
                continue
            line = line_for(part, text)
            if line is None:
                content.append(part)
                continue
            content.append(attrs.evolve(part, content=[TextPart(line)]))
            results, chars = results + 1, chars + len(text)
        out.append(
            attrs.evolve(message, content=content) if content != message.content else message
        )
    return Replaced(out, results, chars)


def reference(call: ToolCallPart | None, call_id: str, chars: int) -> str:
    """The text a repeated result goes as: where its first copy is, and how much was left out."""
    named = f"the {call.name} call {call_id}" if call is not None else f"call {call_id}"
    return (
        f"[Exactly the same result as {named} above: its {chars:,} characters are not repeated "
        "here (Token Gauge)]"
    )


def refer_repeats(messages: Sequence[Message]) -> Replaced:
    """`messages` with every tool result whose text repeats an earlier result's exactly (and is
    long enough, and not an error) as a reference to the earliest copy."""
    calls = {
        part.call_id: part
        for message in messages
        for part in message.content
        if isinstance(part, ToolCallPart)
    }
    first: dict[str, str] = {}

    def line_for(part: ToolResultPart, text: str) -> str | None:
        if not _repeatable(text):
            return None
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        earlier = first.setdefault(key, part.call_id)
        if earlier == part.call_id:
            return None
        return reference(calls.get(earlier), earlier, len(text))

    return replace_results(messages, line_for)


def result_text(part: Part) -> str | None:
    """A tool result's text when it is all text; None for anything else (the only results
    the send path replaces)."""
    if not isinstance(part, ToolResultPart) or not part.content:
        return None
    if not all(isinstance(inner, TextPart) for inner in part.content):
        return None
    return "".join(inner.value for inner in part.content if isinstance(inner, TextPart))


def _repeatable(text: str) -> bool:
    """Long enough to be worth a reference, and not a failure's report."""
    return len(text) >= LEAST_CHARS and not text.lstrip().lower().startswith(ERROR_LEADS)
