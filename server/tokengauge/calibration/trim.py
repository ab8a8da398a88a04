"""The send path's safety net (RFC 009: never an unrecoverable token limit): shrink a request that
cannot fit instead of sending it.

First the largest tool results are cut by token-based head + tail truncation, down to a common
size (the beginning and the end kept, cut on token boundaries in one pass of the real tokenizer,
the cut marked `[… N tokens omitted …]`); then the oldest history goes, an assistant's tool calls
together with their results. Never the system prompt, the turn's user message, or the end of a
tool result. The same truncation caps each tool result when the user sets
`tokenGauge.toolResultMaxTokens`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from tokengauge.calibration.estimates import RequestEstimate
from tokengauge.counting.text import LONE_SURROGATE
from tokengauge.messages import Message, Part, TextPart, ToolResultPart

if TYPE_CHECKING:
    import tiktoken

MIN_KEPT_TOKENS: Final = 200
"""A tool result is never cut below this many tokens."""
HEAD_SHARE: Final = 0.5
MAX_PASSES: Final = 4


def marker(omitted: int) -> str:
    """The line that marks a cut."""
    return f"\n[… {omitted:,} tokens omitted …]\n"


class CannotFit(Exception):
    """Even trimmed as far as allowed, the request does not fit."""

    def __init__(self, estimate: int, target: int) -> None:
        super().__init__(f"{estimate:,} tokens after trimming, {target:,} allowed")
        self.estimate = estimate
        self.target = target


@attrs.frozen
class Trimmed:
    """What the safety net (or the per-result cap) did to a request."""

    messages: list[Message]
    tool_results: int = 0
    dropped: int = 0
    tokens: int = 0

    @property
    def changed(self) -> bool:
        """Whether anything was cut or dropped."""
        return bool(self.tool_results or self.dropped)

    def describe(self) -> str:
        """`2 tool results, 3 messages`: what went, for a person."""
        parts = []
        if self.tool_results:
            parts.append(f"{self.tool_results} tool result{'s' * (self.tool_results != 1)}")
        if self.dropped:
            parts.append(f"{self.dropped} message{'s' * (self.dropped != 1)}")
        return ", ".join(parts)


class Truncator:
    """Head + tail truncation of text in one encoding."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self.encoding = encoding

    def tokens(self, text: str) -> list[int]:
        """The text's tokens (a lone surrogate counted as U+FFFD)."""
        return self.encoding.encode_ordinary(LONE_SURROGATE.sub("\ufffd", text))

    def cut(self, text: str, keep: int) -> tuple[str, int]:
        """`text` cut to about `keep` tokens, its beginning and end kept; and the tokens cut."""
        tokens = self.tokens(text)
        if len(tokens) <= keep:
            return text, 0
        omitted = len(tokens) - keep
        head = math.ceil(keep * HEAD_SHARE)
        first = self.encoding.decode_bytes(tokens[:head]).decode("utf-8", "ignore")
        last = self.encoding.decode_bytes(tokens[head:][-(keep - head) :] if keep > head else [])
        return first + marker(omitted) + last.decode("utf-8", "ignore"), omitted


@attrs.frozen
class _Text:
    """A text part inside a tool result: where it is and how long it is."""

    message: int
    path: tuple[int, ...]
    tokens: int


def cap_tool_results(messages: Sequence[Message], truncator: Truncator, cap: int) -> Trimmed:
    """Every tool result's text cut to `cap` tokens (the `toolResultMaxTokens` setting)."""
    texts = _tool_texts(messages, truncator)
    cuts = {(t.message, t.path): cap for t in texts if t.tokens > cap}
    return _apply(messages, truncator, cuts, dropped=frozenset())


def shrink(
    messages: Sequence[Message],
    truncator: Truncator,
    estimate: Callable[[Sequence[Message]], RequestEstimate],
    target: int,
) -> Trimmed:
    """`messages` made to fit `target` estimated tokens, or `CannotFit`."""
    before = estimate(messages)
    if before.total <= target:
        return Trimmed(list(messages))
    texts = _tool_texts(messages, truncator)
    shortest = {(t.message, t.path): MIN_KEPT_TOKENS for t in texts if t.tokens > MIN_KEPT_TOKENS}
    trimmed = _apply(messages, truncator, shortest, frozenset())
    after = estimate(trimmed.messages)
    if after.total <= target:  # cutting tool results is enough: cut no more than needed
        tokens_per_raw = before.total / max(1, before.raw_total)
        remove = math.ceil((before.total - target) / tokens_per_raw)
        for _ in range(MAX_PASSES):
            candidate = _apply(messages, truncator, _level(texts, remove), frozenset())
            current = estimate(candidate.messages)
            if current.total <= target:
                trimmed, after = candidate, current
                break
            remove += math.ceil((current.total - target) / tokens_per_raw)
        return attrs.evolve(trimmed, tokens=before.total - after.total)
    for dropped in _history_units(messages):  # then the oldest history, unit by unit
        trimmed = _apply(messages, truncator, shortest, dropped)
        after = estimate(trimmed.messages)
        if after.total <= target:
            return attrs.evolve(trimmed, tokens=before.total - after.total)
    raise CannotFit(after.total, target)


def _level(texts: list[_Text], remove: int) -> dict[tuple[int, tuple[int, ...]], int]:
    """Cut the longest texts down to one common length so that about `remove` tokens go."""
    sizes = sorted((t.tokens for t in texts if t.tokens > MIN_KEPT_TOKENS), reverse=True)
    if not sizes or remove <= 0:
        return {}
    level = MIN_KEPT_TOKENS
    above = 0
    for i, size in enumerate(sizes):  # lower the level past each text until enough goes
        above += size
        candidate = (above - remove) / (i + 1)
        following = sizes[i + 1] if i + 1 < len(sizes) else MIN_KEPT_TOKENS
        if candidate >= following:
            level = max(MIN_KEPT_TOKENS, math.floor(candidate))
            break
    return {(t.message, t.path): level for t in texts if t.tokens > level}


def _tool_texts(messages: Sequence[Message], truncator: Truncator) -> list[_Text]:
    found = []
    for m, message in enumerate(messages):
        for p, part in enumerate(message.content):
            if isinstance(part, ToolResultPart):
                for q, inner in enumerate(part.content):
                    if isinstance(inner, TextPart):
                        found.append(_Text(m, (p, q), len(truncator.tokens(inner.value))))
    return found


def _apply(
    messages: Sequence[Message],
    truncator: Truncator,
    cuts: dict[tuple[int, tuple[int, ...]], int],
    dropped: frozenset[int],
) -> Trimmed:
    kept: list[Message] = []
    results: set[tuple[int, int]] = set()
    omitted = 0
    for m, message in enumerate(messages):
        if m in dropped:
            continue
        content: list[Part] = list(message.content)
        for (cut_m, (p, q)), keep in cuts.items():
            if cut_m != m:
                continue
            result = content[p]
            assert isinstance(result, ToolResultPart)
            inner = list(result.content)
            text = inner[q]
            assert isinstance(text, TextPart)
            value, gone = truncator.cut(text.value, keep)
            if gone:
                inner[q] = TextPart(value)
                content[p] = attrs.evolve(result, content=inner)
                results.add((m, p))
                omitted += gone
        changed = any(r_m == m for r_m, _ in results)
        kept.append(attrs.evolve(message, content=content) if changed else message)
    return Trimmed(kept, tool_results=len(results), dropped=len(dropped), tokens=omitted)


def _history_units(messages: Sequence[Message]) -> list[frozenset[int]]:
    """What may go, oldest first, each a growing set: whole exchanges (a user message and all
    that follows it until the next), so tool calls stay with their results and the history still
    starts with a user message. Never the system prompt, nor the turn's user message (the last
    user message that is not only tool results) or anything after it.
    """
    turn = next(
        (i for i in range(len(messages) - 1, -1, -1) if _is_user_turn(messages[i])), len(messages)
    )
    starts = [i for i in range(turn) if messages[i].role != "system"]
    units: list[frozenset[int]] = []
    gone: set[int] = set()
    for i in starts:
        if i in gone:
            continue
        gone.add(i)
        j = i + 1
        while j < turn and not _is_user_turn(messages[j]):
            if messages[j].role != "system":
                gone.add(j)
            j += 1
        units.append(frozenset(gone))
    return units


def _is_tool_results(message: Message) -> bool:
    return bool(message.content) and all(isinstance(p, ToolResultPart) for p in message.content)


def _is_user_turn(message: Message) -> bool:
    return message.role == "user" and not _is_tool_results(message)
