"""Cutting a request's text down: what the recovery ladder (`calibration.ladder`) and the
`tokenGauge.toolResultMaxTokens` cap are made of.

Texts are cut head + tail on token boundaries, in one pass of the real tokenizer, the cut marked
`[… N tokens omitted …]`; several texts are levelled down to one common length, the longest first.
History goes in whole exchanges (a user message and everything until the next), so tool calls stay
with their results and what is left still starts with a user message. Never the system prompt, nor
the turn's user message or what follows it: only cuts reach those. Reasoning a Chat Completions
server reads back (`reasoning_texts`) may be cut only where it is plain text of an earlier turn:
never what the current tool loop must have back, never what a signature or encrypted data goes
with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import attrs

from tokengauge.counting.text import LONE_SURROGATE, encode_ordinary
from tokengauge.messages import Message, Part, TextPart, ThinkingPart, ToolResultPart

if TYPE_CHECKING:
    import tiktoken

SUMMARY_MARK: Final = "<conversation-summary>"
"""Copilot's tag around the summary of the history it compacted away."""
CONTEXT_MARKS: Final = (SUMMARY_MARK, "<environment_info>", "<workspace_info>")
"""How the user messages begin that Copilot fills with context, not with the conversation."""
MIN_KEPT_TOKENS: Final = 200
"""A text is never cut below this many tokens."""
HEAD_SHARE: Final = 0.5

Path = tuple[int, ...]
"""Where a text part is in its message: `(p,)` a part of the message, `(p, q)` a part of the
tool result that is part `p`."""
Cuts = dict[tuple[int, Path], int]
"""Tokens to keep of each text cut, keyed by message index and path."""


def marker(omitted: int) -> str:
    """The line that marks a cut."""
    return f"\n[… {omitted:,} tokens omitted …]\n"


@attrs.frozen
class Cut:
    """Messages after cuts and drops, with what went."""

    messages: list[Message]
    tool_results: int = 0
    """Tool results cut."""
    dropped: int = 0
    """Messages left out."""
    tokens: int = 0
    """Tokens cut from texts (the tokenizer's count, before calibration)."""

    @property
    def changed(self) -> bool:
        """Whether anything was cut or dropped."""
        return bool(self.tool_results or self.dropped or self.tokens)


class Truncator:
    """Head + tail truncation of text in one encoding."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self.encoding = encoding

    def tokens(self, text: str) -> list[int]:
        """The text's tokens (a lone surrogate counted as U+FFFD)."""
        return encode_ordinary(self.encoding, LONE_SURROGATE.sub("\ufffd", text))

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
class Text:
    """A text part that may be cut: where it is and how long it is."""

    message: int
    path: Path
    tokens: int

    @property
    def key(self) -> tuple[int, Path]:
        """Its key in `Cuts`."""
        return (self.message, self.path)


def tool_texts(messages: Sequence[Message], truncator: Truncator) -> list[Text]:
    """The texts of every tool result."""
    found = []
    for m, message in enumerate(messages):
        for p, part in enumerate(message.content):
            if isinstance(part, ToolResultPart):
                for q, inner in enumerate(part.content):
                    if isinstance(inner, TextPart):
                        found.append(Text(m, (p, q), len(truncator.tokens(inner.value))))
    return found


def turn_texts(messages: Sequence[Message], truncator: Truncator) -> list[Text]:
    """The texts of the turn's own user message."""
    m = _turn(messages)
    if m == len(messages):
        return []
    return [
        Text(m, (p,), len(truncator.tokens(part.value)))
        for p, part in enumerate(messages[m].content)
        if isinstance(part, TextPart)
    ]


def reasoning_texts(messages: Sequence[Message], truncator: Truncator) -> list[Text]:
    """The reasoning of earlier turns that a Chat Completions server reads back as plain text
    (DeepSeek keeps every tool call's in every later request): what the `reasoning` rung may
    cut."""
    turn = _turn(messages)
    return [
        Text(m, (p,), len(truncator.tokens(part.value)))
        for m, message in enumerate(messages[:turn])
        for p, part in enumerate(message.content)
        if isinstance(part, ThinkingPart) and _plain_reasoning(part)
    ]


def _plain_reasoning(part: ThinkingPart) -> bool:
    """Reasoning sent back as text alone: nothing signed, encrypted or detailed goes with it."""
    return part.field is not None and not (part.details or part.calls or part.extra)


def shortest(texts: Sequence[Text]) -> Cuts:
    """Every text cut as far as it may be."""
    return {t.key: MIN_KEPT_TOKENS for t in texts if t.tokens > MIN_KEPT_TOKENS}


def level(texts: Sequence[Text], remove: int) -> Cuts:
    """Cut the longest texts down to one common length so that about `remove` tokens go."""
    sizes = sorted((t.tokens for t in texts if t.tokens > MIN_KEPT_TOKENS), reverse=True)
    if not sizes or remove <= 0:
        return {}
    common = MIN_KEPT_TOKENS
    above = 0
    for i, size in enumerate(sizes):  # lower the level past each text until enough goes
        above += size
        candidate = (above - remove) / (i + 1)
        following = sizes[i + 1] if i + 1 < len(sizes) else MIN_KEPT_TOKENS
        if candidate >= following:
            common = max(MIN_KEPT_TOKENS, math.floor(candidate))
            break
    return {t.key: common for t in texts if t.tokens > common}


def cap_tool_results(messages: Sequence[Message], truncator: Truncator, cap: int) -> Cut:
    """Every tool result's text cut to `cap` tokens (the `toolResultMaxTokens` setting)."""
    cuts = {t.key: cap for t in tool_texts(messages, truncator) if t.tokens > cap}
    return apply(messages, truncator, cuts)


def apply(
    messages: Sequence[Message],
    truncator: Truncator,
    cuts: Cuts,
    dropped: frozenset[int] = frozenset(),
) -> Cut:
    """`messages` with the texts of `cuts` cut and the messages `dropped` left out."""
    kept: list[Message] = []
    results = 0
    omitted = 0
    for m, message in enumerate(messages):
        if m in dropped:
            continue
        content: list[Part] = list(message.content)
        changed = False
        for (cut_m, path), keep in cuts.items():
            if cut_m != m:
                continue
            value, gone = truncator.cut(_text_at(content, path).value, keep)
            if gone:
                content = _with_text(content, path, value)
                results += len(path) == 2
                omitted += gone
                changed = True
        kept.append(attrs.evolve(message, content=content) if changed else message)
    return Cut(kept, tool_results=results, dropped=len(dropped), tokens=omitted)


def _text_at(content: Sequence[Part], path: Path) -> TextPart | ThinkingPart:
    part = content[path[0]]
    if len(path) == 2:
        assert isinstance(part, ToolResultPart)
        part = part.content[path[1]]
    assert isinstance(part, (TextPart, ThinkingPart))
    return part


def _with_text(content: list[Part], path: Path, value: str) -> list[Part]:
    changed = list(content)
    if len(path) == 1:
        part = content[path[0]]
        assert isinstance(part, (TextPart, ThinkingPart))
        changed[path[0]] = attrs.evolve(part, value=value)
        return changed
    result = content[path[0]]
    assert isinstance(result, ToolResultPart)
    inner = list(result.content)
    inner[path[1]] = TextPart(value)
    changed[path[0]] = attrs.evolve(result, content=inner)
    return changed


def history_units(messages: Sequence[Message]) -> list[frozenset[int]]:
    """What may go, oldest first, each a growing set: whole exchanges (a user message and all
    that follows it until the next), so tool calls stay with their results. Never the system
    prompt, the context Copilot gives as user messages (its environment and workspace, and the
    summary of what it compacted away: the whole earlier conversation in a few hundred tokens),
    nor the turn's user message (the last user message that is not only tool results) or
    anything after it.
    """
    turn = _turn(messages)
    kept = {i for i in range(turn) if _is_context(messages[i])}
    starts = [i for i in range(turn) if i not in kept]
    units: list[frozenset[int]] = []
    gone: set[int] = set()
    for i in starts:
        if i in gone:
            continue
        gone.add(i)
        j = i + 1
        while j < turn and not _is_user_turn(messages[j]):
            if j not in kept:
                gone.add(j)
            j += 1
        units.append(frozenset(gone))
    return units


def _is_context(message: Message) -> bool:
    """The system prompt, or a user message Copilot fills with context (`CONTEXT_MARKS`)."""
    if message.role == "system":
        return True
    if message.role != "user":
        return False
    text = "".join(p.value for p in message.content if isinstance(p, TextPart)).lstrip()
    return any(text.startswith(mark) for mark in CONTEXT_MARKS)


def _turn(messages: Sequence[Message]) -> int:
    """The index of the turn's user message (the last user message that is not only tool
    results), or `len(messages)` if there is none."""
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if _is_user_turn(messages[i])), len(messages)
    )


def _is_user_turn(message: Message) -> bool:
    return message.role == "user" and not message.tool_results_only
