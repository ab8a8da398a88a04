"""Texts for the tests of cutting and of the recovery ladder."""

from __future__ import annotations

from collections.abc import Sequence

from tokengauge.messages import Message, TextPart, ToolResultPart


def log(tag: str, lines: int) -> str:
    """A service log of `lines` lines, each naming `tag` and its number."""
    return "".join(f"{tag} line {i}: request served in {i * 7 % 300} ms\n" for i in range(lines))


def result_texts(messages: Sequence[Message]) -> list[str]:
    """The text of every tool result, in order."""
    return [
        inner.value
        for message in messages
        for part in message.content
        if isinstance(part, ToolResultPart)
        for inner in part.content
        if isinstance(inner, TextPart)
    ]
