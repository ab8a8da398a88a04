"""Counting text with tiktoken: family → encoding, an LRU of recent texts, a safe fallback.

`TextCounter.count` is the exact tiktoken count (`encode_ordinary`) for any text the encoder can
take. Text it cannot take as it is gets the fallback's 10% margin:
- lone surrogates, which VS Code strings may carry and which travel to the API as `\\uXXXX`
  escapes: counted both ways (replaced and escaped), the larger count, so never below what
  tiktoken itself would report;
- a whitespace run of ~1,000,000 characters, on which tiktoken's regex exhausts its backtracking
  stack and panics (a `BaseException` that would end the process): such runs are cut every
  100,000 characters and the pieces counted one by one.
Every other use of an encoding goes through `encode_ordinary`, which cuts such runs the same way
(the tokens still decode to the text) and turns a panic into a `TokenizerError`.

The counting caches (`TextMemo`) are bounded by the bytes they hold, not only by their entries:
a text is charged its own size as Python stores it (`sys.getsizeof`: 1, 2 or 4 bytes a character,
by its widest) plus its entry's share of the cache's bookkeeping, and at least an even split of
the budget among its entries, so many short texts are bounded by their number and a few long ones
by their bytes. A text larger than a whole budget is counted and not kept. The LRU of counted texts
keeps at most 5,000 texts and 8 MiB in all, per encoding.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
from typing import TYPE_CHECKING, Final, TypeVar

from cachetools import LRUCache

from tokengauge.counting.encodings import EncodingRegistry

if TYPE_CHECKING:
    import tiktoken

TEXT_CACHE_SIZE: Final = 5000
"""Most texts the LRU keeps."""
TEXT_CACHE_BYTES: Final = 8 * 2**20
"""Most bytes the LRU holds (a text is charged at least its share of an even split)."""
ENTRY_BYTES: Final = 256
"""What one cache entry holds besides its text: the cache's dict slots, the value and its charge
(140–230 bytes measured with tracemalloc, rounded up)."""
FALLBACK_MARGIN: Final = 1.10
WHITESPACE_PIECE: Final = 100_000
"""Longest whitespace run given to tiktoken in one piece (its regex panics near 1,000,000)."""
# Only from a run's start: tried at every position of a shorter run, it was quadratic.
_LONG_WHITESPACE: Final = re.compile(r"(?<!\s)\s{" + str(WHITESPACE_PIECE + 1) + ",}")
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


class TokenizerError(RuntimeError):
    """tiktoken failed on a text (a panic of its Rust code, made an ordinary error)."""


def _encode(encoding: tiktoken.Encoding, text: str) -> list[int]:
    """`encoding.encode_ordinary(text)`, a panic raised as `TokenizerError`."""
    try:
        return encoding.encode_ordinary(text)
    except BaseException as exc:
        # A Rust panic is a BaseException: past every `except Exception`, it ends the server.
        if isinstance(exc, (Exception, KeyboardInterrupt, SystemExit)):
            raise
        raise TokenizerError(
            f"the {encoding.name} tokenizer failed on a text of {len(text):,} characters: {exc}"
        ) from None


def encode_ordinary(encoding: tiktoken.Encoding, text: str) -> list[int]:
    """tiktoken's tokens of `text`, its long whitespace runs cut (`whitespace_pieces`): the
    tokens decode to `text`, and are tiktoken's own for text without such a run."""
    pieces = whitespace_pieces(text)
    if pieces is None:
        return _encode(encoding, text)
    return [token for piece in pieces for token in _encode(encoding, piece)]


def whitespace_pieces(text: str) -> list[str] | None:
    """`text` cut inside its whitespace runs longer than `WHITESPACE_PIECE`, or None if it has
    none (then tiktoken takes it whole)."""
    if len(text) <= WHITESPACE_PIECE:
        return None
    cuts = [
        cut
        for run in _LONG_WHITESPACE.finditer(text)
        for cut in range(run.start() + WHITESPACE_PIECE, run.end(), WHITESPACE_PIECE)
    ]
    if not cuts:
        return None
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


_V = TypeVar("_V")


def _charged(entry: tuple[object, int]) -> int:
    return entry[1]


class TextMemo(LRUCache[str, tuple[_V, int]]):
    """An LRU of `text → (value, bytes charged)` within `max_bytes` and `max_entries` (see the
    module docstring)."""

    def __init__(self, max_bytes: int, max_entries: int) -> None:
        self.unit = max(1, max_bytes // max_entries)
        super().__init__(maxsize=self.unit * max_entries, getsizeof=_charged)

    def recall(self, text: str) -> _V | None:
        """The value kept for `text` (now the most recently used one), or None."""
        entry = self.get(text)
        return None if entry is None else entry[0]

    def remember(self, text: str, value: _V) -> None:
        """Keep `value` for `text`, unless the text alone is larger than the whole budget."""
        charge = max(sys.getsizeof(text) + ENTRY_BYTES, self.unit)
        if charge <= self.maxsize:
            self[text] = (value, charge)


class TextCounter:
    """Counts text in one encoding, remembering the last 5000 texts (8 MiB at most)."""

    def __init__(
        self,
        encoding: tiktoken.Encoding,
        cache_size: int = TEXT_CACHE_SIZE,
        cache_bytes: int = TEXT_CACHE_BYTES,
    ) -> None:
        self.encoding = encoding
        self._cache: TextMemo[int] = TextMemo(cache_bytes, cache_size)

    @property
    def name(self) -> str:
        """The encoding's name."""
        return self.encoding.name

    def count(self, text: str) -> int:
        """Tokens in `text` (see the module docstring for text the encoder cannot take)."""
        if not text:
            return 0
        cached = self._cache.recall(text)
        if cached is not None:
            return cached
        count = self._count_uncached(text)
        self._cache.remember(text, count)
        return count

    def _count_uncached(self, text: str) -> int:
        pieces = whitespace_pieces(text)
        if pieces is not None:
            return math.ceil(sum(map(self._count_piece, pieces)) * FALLBACK_MARGIN)
        return self._count_piece(text)

    def _count_piece(self, text: str) -> int:
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return self._count_with_surrogates(text)
        return len(_encode(self.encoding, text))

    def _count_with_surrogates(self, text: str) -> int:
        replaced = len(_encode(self.encoding, LONE_SURROGATE.sub("\ufffd", text)))
        escaped = len(_encode(self.encoding, LONE_SURROGATE.sub(_escape_surrogate, text)))
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
