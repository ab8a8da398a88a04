"""Where a Messages request asks the API to cache it: its `cache_control` breakpoints.

Anthropic's prompt cache serves only a prefix that ends at a marked block, looking back at most 20
blocks from each mark for one written earlier (tests/data/wire/SOURCES.md §7). Copilot marks
blocks only for the vendors it knows to cache (`anthropic`, `gemini`, `openrouter`: its
`emitCacheBreakpoints`), never for this provider's, so unmarked a conversation through tokengauge
is never cached. The marks are placed here, on the request as fitted, so each falls on a block
the next request repeats:
1. the last cacheable block of the request (what the next request of the conversation reads);
2. the last of the user turn before the last assistant turn (where the previous request ended,
   read here however many blocks the round since added);
3. the last system block (a prefix that survives a change to the messages);
4. the last tool (one that survives a changed system prompt).
The API takes four marks at most; a client's own marks (`anthropic_messages` keeps them) fill
what these leave. Thinking blocks cannot be marked: a turn's last other block is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

MAX_BREAKPOINTS: Final = 4
EPHEMERAL: Final = {"type": "ephemeral"}
_UNMARKABLE: Final = ("thinking", "redacted_thinking")

JsonObject = dict[str, Any]


def place_breakpoints(
    tools: Sequence[JsonObject], system: Sequence[JsonObject], turns: Sequence[JsonObject]
) -> None:
    """Mark the blocks of a request (in place) as the module docstring says."""
    ours = [block for block in _targets(tools, system, turns) if block is not None]
    chosen: list[JsonObject] = []
    for block in ours:
        if not any(block is seen for seen in chosen):
            chosen.append(block)
    theirs = [block for block in _marked(tools, system, turns) if not _among(block, chosen)]
    chosen = chosen[:MAX_BREAKPOINTS]
    room = MAX_BREAKPOINTS - len(chosen)
    keep = chosen + (theirs[-room:] if room else [])
    for block in _marked(tools, system, turns):
        if not _among(block, keep):
            del block["cache_control"]
    for block in keep:
        block["cache_control"] = dict(EPHEMERAL)


def _targets(
    tools: Sequence[JsonObject], system: Sequence[JsonObject], turns: Sequence[JsonObject]
) -> Iterator[JsonObject | None]:
    yield _last_markable(turns[-1]["content"]) if turns else None
    last_assistant = max(
        (i for i, turn in enumerate(turns) if turn["role"] == "assistant"), default=-1
    )
    before = [turn for turn in turns[:last_assistant] if turn["role"] == "user"]
    yield _last_markable(before[-1]["content"]) if before else None
    yield system[-1] if system else None
    yield tools[-1] if tools else None


def _last_markable(blocks: Sequence[JsonObject]) -> JsonObject | None:
    return next((block for block in reversed(blocks) if block["type"] not in _UNMARKABLE), None)


def _marked(
    tools: Sequence[JsonObject], system: Sequence[JsonObject], turns: Sequence[JsonObject]
) -> list[JsonObject]:
    blocks = [*tools, *system, *(block for turn in turns for block in turn["content"])]
    return [block for block in blocks if "cache_control" in block]


def _among(block: JsonObject, blocks: Sequence[JsonObject]) -> bool:
    return any(block is other for other in blocks)
