"""Counting text with tiktoken: family → encoding, an LRU of recent texts, a safe fallback.

`TextCounter.count` is the exact tiktoken count (`encode_ordinary`) for any text the encoder can
take. Text it cannot take as it is — lone surrogates, which VS Code strings may carry and which
travel to the API as `\\uXXXX` escapes — is counted both ways (replaced and escaped) and the larger
count gets a 10% margin, so it is never below what tiktoken itself would report.
"""

from __future__ import annotations

import math
import re
from typing import Final

import tiktoken
from cachetools import LRUCache

from tokengauge.encodings import EncodingRegistry

TEXT_CACHE_SIZE: Final = 5000
FALLBACK_MARGIN: Final = 1.10
O200K_FAMILIES: Final = re.compile(
    r"^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o\d|chatgpt-4o)", re.I
)
LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
"""One UTF-16 surrogate on its own: text no UTF-8 encoder can take as it is."""


def encoding_for_family(family: str) -> str:
    """`o200k_base` for GPT-4o/4.1/5/o-series/gpt-oss, `cl100k_base` for everything else."""
    return "o200k_base" if O200K_FAMILIES.match(family.strip()) else "cl100k_base"


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


class TextCounter:
    """Counts text in one encoding, remembering the last 5000 texts."""

    def __init__(self, encoding: tiktoken.Encoding, cache_size: int = TEXT_CACHE_SIZE) -> None:
        self.encoding = encoding
        self._cache: LRUCache[str, int] = LRUCache(maxsize=cache_size)

    @property
    def name(self) -> str:
        """The encoding's name."""
        return self.encoding.name

    def count(self, text: str) -> int:
        """Tokens in `text` (see the module docstring for text the encoder cannot take)."""
        if not text:
            return 0
        cached = self._cache.get(text)
        if cached is None:
            cached = self._count_uncached(text)
            self._cache[text] = cached
        return cached

    def _count_uncached(self, text: str) -> int:
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return self._count_with_surrogates(text)
        return len(self.encoding.encode_ordinary(text))

    def _count_with_surrogates(self, text: str) -> int:
        replaced = len(self.encoding.encode_ordinary(LONE_SURROGATE.sub("\ufffd", text)))
        escaped = len(self.encoding.encode_ordinary(LONE_SURROGATE.sub(_escape_surrogate, text)))
        return math.ceil(max(replaced, escaped) * FALLBACK_MARGIN)


class TextCounters:
    """One `TextCounter` per encoding, created on first use."""

    def __init__(self, registry: EncodingRegistry, cache_size: int = TEXT_CACHE_SIZE) -> None:
        self.registry = registry
        self._cache_size = cache_size
        self._counters: dict[str, TextCounter] = {}

    def for_encoding(self, name: str) -> TextCounter:
        """The counter for encoding `name`."""
        counter = self._counters.get(name)
        if counter is None:
            counter = TextCounter(self.registry.get(name), self._cache_size)
            self._counters[name] = counter
        return counter

    def for_family(self, family: str) -> TextCounter:
        """The counter for the encoding a model family uses."""
        return self.for_encoding(encoding_for_family(family))
