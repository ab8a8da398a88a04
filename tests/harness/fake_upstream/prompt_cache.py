"""The APIs' prompt caches, as the test upstream reports them (`tests/data/wire/SOURCES.md` §7).

A request is laid out as the API caches it: the tools, then the system prompt, then the messages,
each as its JSON. What of it was seen before is read from the cache:
- OpenAI (Chat Completions, and Responses as the request it amounts to): the longest prefix of
  the tokens an earlier request of the same model began with, in blocks of 128 tokens, none
  below 1,024 ("cache hits require an exact, repeated prefix match … for prompts containing 1024
  tokens or more, with cache hits occurring in increments of 128 tokens"); every request is
  cached whole;
- Anthropic: only prefixes that end at a block (a tool, a system or a message block) a
  `cache_control` mark ends (a breakpoint) are written, and a request reads the longest written
  prefix that ends at one of its blocks, no more than 20 blocks before one of its breakpoints; at
  least 1,024 tokens; what lies between that and its last breakpoint is written
  (`cache_creation_input_tokens`);
- OpenRouter's Claude models (`anthropic/…` behind Chat Completions): Anthropic's rule, its
  blocks the messages' content parts, marked by `cache_control` on a part (OpenRouter's
  prompt-caching guide).
Counts are in the model's encoder over that layout, then scaled to the request's true prompt count,
so a request's cached share is its share of the layout.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from tests.harness.fake_upstream.model import encoding

BLOCK: Final = 128
"""OpenAI's cache-hit increment, in tokens."""
LEAST: Final = 1_024
"""The shortest prefix either API caches, in tokens."""
LOOKBACK: Final = 20
"""Blocks before a breakpoint that Anthropic looks back for a prefix written earlier."""
MAX_MARKS: Final = 4
"""The most `cache_control` marks the Messages API takes in one request."""


@dataclass(frozen=True)
class CacheUse:
    """What of one request the cache served (`read`) and took in (`written`: Anthropic's), in the
    request's true tokens."""

    read: int = 0
    written: int = 0


@dataclass(frozen=True)
class _Segment:
    tokens: list[int]
    breakpoint: bool


class PromptCache:
    """The prompt cache of one upstream, per model."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()

    def use(self, body: Mapping[str, Any], dialect: str, encoder: str, total: int) -> CacheUse:
        """What the cache serves of a request of `total` true prompt tokens, remembering it."""
        segments = list(_segments(body, dialect, encoder))
        laid = sum(len(segment.tokens) for segment in segments)
        if not laid:
            return CacheUse()
        model = str(body.get("model", "")).encode()
        if _marked_only(body, dialect):
            read, written = self._breakpoints(model, segments)
        else:
            read, written = self._blocks(model, segments), 0
        return CacheUse(_scaled(read, laid, total), _scaled(written, laid, total))

    def _blocks(self, model: bytes, segments: list[_Segment]) -> int:
        tokens = [token for segment in segments for token in segment.tokens]
        digest, read, matching = model, 0, True
        for end in range(BLOCK, len(tokens) + 1, BLOCK):
            digest = _chain(digest, tokens[end - BLOCK : end])
            if matching and digest in self._seen:
                read = end
            else:
                matching = False
                self._seen.add(digest)
        return read if read >= LEAST else 0

    def _breakpoints(self, model: bytes, segments: list[_Segment]) -> tuple[int, int]:
        digests, ends, end, digest = [], [], 0, model
        for segment in segments:
            end += len(segment.tokens)
            digest = _chain(digest, segment.tokens)
            digests.append(digest)
            ends.append(end)
        marks = [i for i, segment in enumerate(segments) if segment.breakpoint]
        reachable = {i for mark in marks for i in range(max(0, mark - LOOKBACK), mark + 1)}
        hits = [i for i in reachable if digests[i] in self._seen and ends[i] >= LEAST]
        read = max((ends[i] for i in hits), default=0)
        last = max((ends[i] for i in marks), default=0)
        for mark in marks:
            if ends[mark] >= LEAST:
                self._seen.add(digests[mark])
        return read, max(0, last - read) if last >= LEAST else 0


def breakpoint_error(body: Mapping[str, Any]) -> str | None:
    """Why the Messages API would refuse this body's `cache_control` marks, or None."""
    marks = 0
    for block in _anthropic_blocks(body):
        if "cache_control" not in block:
            continue
        if block.get("type") in ("thinking", "redacted_thinking"):
            return "Thinking blocks cannot be marked with cache_control"
        marks += 1
    if marks > MAX_MARKS:
        return f"A maximum of {MAX_MARKS} blocks with cache_control may be provided. Found {marks}."
    return None


def _anthropic_blocks(body: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield from _listed(body.get("tools"))
    system = body.get("system")
    yield from _listed(system)
    for message in _listed(body.get("messages")):
        yield from _listed(message.get("content"))


def laid(body: Mapping[str, Any], dialect: str, encoder: str) -> int:
    """The encoder's tokens of the request as the API caches it."""
    return sum(len(segment.tokens) for segment in _segments(body, dialect, encoder))


def _segments(body: Mapping[str, Any], dialect: str, encoder: str) -> Iterator[_Segment]:
    """The request in the order the API caches it, one segment per block a mark may end."""
    if _marked_only(body, dialect) and dialect != "anthropic":
        for tool in _listed(body.get("tools")):
            yield _segment(tool, encoder)
        for message in _listed(body.get("messages")):
            content = message.get("content")
            # OpenRouter hands Claude a string content as one text block.
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
            yield from _blocks_of(parts, encoder, str(message.get("role")))
        return
    if dialect == "anthropic":
        yield from _blocks_of(_listed(body.get("tools")), encoder, "tool")
        system = body.get("system")
        yield from _blocks_of(system if isinstance(system, list) else [system], encoder, "system")
        for message in _listed(body.get("messages")):
            content = message.get("content")
            blocks = content if isinstance(content, list) else [content]
            yield from _blocks_of(blocks, encoder, str(message.get("role")))
        return
    for tool in _listed(body.get("tools")):
        yield _segment(tool, encoder)
    for message in _listed(body.get("messages")):
        yield _segment(message, encoder)


def _blocks_of(blocks: list[Any], encoder: str, role: str) -> Iterator[_Segment]:
    for block in blocks:
        if block is None:
            continue
        marked = isinstance(block, Mapping) and "cache_control" in block
        shown = {k: v for k, v in block.items() if k != "cache_control"} if marked else block
        yield _segment({"role": role, "block": shown}, encoder, breakpoint=marked)


def _segment(value: Any, encoder: str, breakpoint: bool = False) -> _Segment:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _Segment(encoding(encoder).encode(text, disallowed_special=()), breakpoint)


def _marked_only(body: Mapping[str, Any], dialect: str) -> bool:
    """Whether the API caches only at marks: Anthropic's, or OpenRouter's Claude models."""
    return dialect == "anthropic" or str(body.get("model", "")).startswith("anthropic/")


def _listed(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _chain(digest: bytes, tokens: list[int]) -> bytes:
    data = b"".join(token.to_bytes(4, "little") for token in tokens)
    return hashlib.blake2b(digest + data, digest_size=16).digest()


def _scaled(laid_tokens: int, laid: int, total: int) -> int:
    """Tokens of the layout as true prompt tokens."""
    return min(total, laid_tokens * total // laid)
