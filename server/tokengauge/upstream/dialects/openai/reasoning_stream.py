"""A Chat Completions message's reasoning as its stream carries it, gathered to go back as it came.

Servers stream reasoning in their own fields: `delta.reasoning_content` (DeepSeek, Kimi, GLM,
MiniMax, SGLang, llama.cpp), `delta.reasoning` (OpenRouter, vLLM, Ollama), `reasoning_details`
(OpenRouter, MiniMax with `reasoning_split`: items of type `reasoning.text`, `.summary` or
`.encrypted`, streamed in pieces that share a type and an index, to be merged as OpenRouter's
documentation says and sent back unmodified), `<think>` tags at the start of the content (MiniMax
without `reasoning_split`, vLLM's `minimax_m2_append_think`), and Gemini's thought signatures in
the `extra_content` of a tool call or of the message.

What is shown is each piece of reasoning text once (OpenRouter sends the same text as `reasoning`
and in `reasoning_details`). What goes back is gathered into one `ThinkingBlock` when the message
ends: the whole text, the field it came in, the merged details, each call's extra content by call
id, the message's own.
"""

from __future__ import annotations

from typing import Any, Final

from tokengauge.upstream.dialects.events import (
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    as_dict,
)

OPEN_TAG: Final = "<think>"
CLOSE_TAG: Final = "</think>"
_TEXT_KEYS: Final = ("text", "summary", "data")
"""The keys of a `reasoning_details` item whose pieces are concatenated when merged."""


class ThinkTags:
    """Splits content that opens with `<think>` into reasoning and answer (tags may be cut
    between deltas); content that opens otherwise is all answer."""

    def __init__(self) -> None:
        self._state = "start"  # start → thinking → answer
        self._held = ""
        self.opened = False
        """The content opened with `<think>`."""

    def feed(self, text: str) -> list[StreamEvent]:
        """The reasoning and answer pieces of one content delta."""
        if self._state == "answer":
            return [TextDelta(text)]
        self._held += text
        if self._state == "start":
            stripped = self._held.lstrip()
            if OPEN_TAG.startswith(stripped):
                return []  # not enough yet to tell
            if not stripped.startswith(OPEN_TAG):
                return self._answer(self._take())
            self._held = stripped[len(OPEN_TAG) :]
            self._state = "thinking"
            self.opened = True
        end = self._held.find(CLOSE_TAG)
        if end >= 0:
            thought, rest = self._held[:end], self._held[end + len(CLOSE_TAG) :]
            self._held = ""
            return [*self._thinking(thought), *self._answer(rest)]
        keep = _partial_suffix(self._held, CLOSE_TAG)
        thought, self._held = (
            self._held[: len(self._held) - keep],
            self._held[len(self._held) - keep :],
        )
        return self._thinking(thought)

    def finish(self) -> list[StreamEvent]:
        """What is held when the content ends (a tag never closed: reasoning cut off)."""
        held = self._take()
        if self._state == "thinking":
            return self._thinking(held)
        return [TextDelta(held)] if held else []

    def _thinking(self, text: str) -> list[StreamEvent]:
        return [ThinkingDelta(text)] if text else []

    def _answer(self, text: str) -> list[StreamEvent]:
        self._state = "answer"
        return [TextDelta(text)] if text else []

    def _take(self) -> str:
        held, self._held = self._held, ""
        return held


def _partial_suffix(text: str, tag: str) -> int:
    """How many of the last characters of `text` could begin `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ReasoningCollector:
    """One message's reasoning, gathered from its deltas."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._field: str | None = None
        self._details: list[dict[str, Any]] = []
        self._extra: dict[str, Any] | None = None
        self.tags = ThinkTags()

    def delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        """The reasoning pieces to show of one delta (its content is `content`'s business)."""
        shown: list[StreamEvent] = []
        for field in ("reasoning_content", "reasoning"):
            text = delta.get(field)
            if isinstance(text, str) and text:
                self._field = self._field or field
                shown.append(ThinkingDelta(text))
                break
        details = delta.get("reasoning_details")
        for item in details if isinstance(details, list) else []:
            if isinstance(item, dict):
                self._merge(item)
                if not shown:
                    shown += _detail_text(item)
        extra = delta.get("extra_content")
        if isinstance(extra, dict):
            self._extra = extra
        for piece in shown:
            if isinstance(piece, ThinkingDelta):
                self._text.append(piece.value)
        return shown

    def content(self, text: str) -> list[StreamEvent]:
        """One content delta: answer text, and reasoning where the content opened in `<think>`."""
        return self._split(self.tags.feed(text))

    def finish(self, calls: dict[str, Any]) -> list[StreamEvent]:
        """What is left when the message ends, then the whole reasoning to send back, if any
        (`calls`: the `extra_content` each tool call came with, by call id)."""
        out = self._split(self.tags.finish())
        field = "think" if self.tags.opened else self._field
        if not (self._text or self._details or calls or self._extra):
            return out
        details = [dict(item) for item in self._details] or None
        text = "".join(self._text)
        block = ThinkingBlock(
            text, field=field, details=details, calls=calls or None, extra=self._extra
        )
        return [*out, block]

    def _split(self, events: list[StreamEvent]) -> list[StreamEvent]:
        for event in events:
            if isinstance(event, ThinkingDelta):
                self._text.append(event.value)
        return events

    def _merge(self, item: dict[str, Any]) -> None:
        """Add a piece to the details: to the last item when it shares its type and index
        (texts concatenated, other keys the latest given), else as an item of its own."""
        last = self._details[-1] if self._details else None
        same = last is not None and (last.get("type"), last.get("index")) == (
            item.get("type"),
            item.get("index"),
        )
        if last is None or not same:
            self._details.append(dict(item))
            return
        for key, value in item.items():
            if key in _TEXT_KEYS and isinstance(value, str) and isinstance(last.get(key), str):
                last[key] += value
            elif value not in (None, "") or key not in last:
                last[key] = value


def _detail_text(item: dict[str, Any]) -> list[StreamEvent]:
    """The readable text of a details piece (a text or a summary; encrypted data is not)."""
    kind = item.get("type")
    key = "text" if kind == "reasoning.text" else "summary" if kind == "reasoning.summary" else None
    value = as_dict(item).get(key) if key else None
    return [ThinkingDelta(value)] if isinstance(value, str) and value else []
