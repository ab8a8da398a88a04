"""The strings counted most often, kept across sessions so the extension can pre-warm its memo.

Copilot asks for the same tool-schema keys and descriptions every turn and every session; strings
are ~99% of its count calls (ARCHITECTURE §3, warmCounts). Per encoding, this keeps each string's
SHA-256, raw count and how often it was asked, in memory, and saves the most asked to the ledger.

Memory stays flat under a stream of strings never seen before: an entry is the 32-byte digest
and one int packing the raw count and the hits (~130 bytes in all), and a table that reaches
`MEMORY_PER_ENCODING` entries keeps its most asked half. The table is saved two seconds after
it first changes (a crash early in a session used to lose it all) and then at most once a minute.
"""

from __future__ import annotations

import hashlib
import heapq
import time
from collections.abc import Callable, Iterable
from typing import Final

from tokengauge.counting.encodings import SPECS
from tokengauge.counting.text import LONE_SURROGATE
from tokengauge.ledger.store import Ledger

SAVED_PER_ENCODING: Final = 20_000
MEMORY_PER_ENCODING: Final = 50_000
SAVE_EVERY_SECONDS: Final = 60.0
FIRST_SAVE_AFTER_SECONDS: Final = 2.0
_HITS_BITS: Final = 32
_HITS_MASK: Final = (1 << _HITS_BITS) - 1


def text_sha256(text: str) -> str:
    """SHA-256 of the UTF-8 text as Node's `createHash().update(text, "utf8")` computes it: a lone
    surrogate becomes U+FFFD."""
    return _digest(text).hex()


def _digest(text: str) -> bytes:
    return hashlib.sha256(LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")).digest()


def _document(encoding: str) -> str:
    return f"frequent-strings/{encoding}"


def _pack(raw: int, hits: int) -> int:
    return (raw << _HITS_BITS) | min(hits, _HITS_MASK)


def _hits(entry: int) -> int:
    return entry & _HITS_MASK


class FrequentStrings:
    """Raw counts of the most asked strings, by encoding: digest → raw count and hits."""

    def __init__(self, ledger: Ledger, clock: Callable[[], float] = time.monotonic) -> None:
        self.ledger = ledger
        self._clock = clock
        self._seen: dict[str, dict[bytes, int]] = {}
        self._saved_at = clock()
        self._changed_at: float | None = None
        self._saves = 0

    def _table(self, encoding: str) -> dict[bytes, int]:
        table = self._seen.get(encoding)
        if table is None:
            table = {}
            stored = self.ledger.get_document(_document(encoding))
            for row in stored if isinstance(stored, list) else []:
                if _is_row(row):
                    table[bytes.fromhex(row[0])] = _pack(row[1], row[2])
            self._seen[encoding] = table
        return table

    def seen(self, encoding: str, text: str, raw: int) -> None:
        """Note one count of `text`."""
        table = self._table(encoding)
        key = _digest(text)
        entry = table.get(key)
        if entry is None:
            if len(table) >= MEMORY_PER_ENCODING:
                self._prune(table)
            table[key] = _pack(raw, 1)
        else:
            table[key] = _pack(raw, _hits(entry) + 1)
        if self._changed_at is None:
            self._changed_at = self._clock()

    def used(self, encodings: Iterable[str]) -> list[str]:
        """Those of `encodings` whose strings were counted, in this session or an earlier one
        (each once, in order): the ones worth loading before a count asks for them."""
        return [name for name in dict.fromkeys(encodings) if name in SPECS and self._table(name)]

    def entries(self, encoding: str) -> list[tuple[str, int]]:
        """`(sha256, raw)` of the most asked strings, most asked first."""
        return [(key.hex(), entry >> _HITS_BITS) for key, entry in self._ranked(encoding)]

    def save_if_due(self) -> None:
        """`save` if something changed: two seconds after the session's first change, then at
        most once a minute (it sorts and writes up to 20,000 rows per encoding)."""
        if self._changed_at is None:
            return
        now = self._clock()
        first = self._saves == 0 and now - self._changed_at >= FIRST_SAVE_AFTER_SECONDS
        if first or now - self._saved_at >= SAVE_EVERY_SECONDS:
            self.save()

    def save(self) -> None:
        """Keep the most asked strings of every encoding in the ledger."""
        self._saved_at = self._clock()
        self._changed_at = None
        self._saves += 1
        for encoding in self._seen:
            rows = [
                [key.hex(), entry >> _HITS_BITS, _hits(entry)]
                for key, entry in self._ranked(encoding)
            ]
            self.ledger.set_document(_document(encoding), rows)

    def _ranked(self, encoding: str) -> list[tuple[bytes, int]]:
        return _most_asked(self._table(encoding), SAVED_PER_ENCODING)

    @staticmethod
    def _prune(table: dict[bytes, int]) -> None:
        """Drop the least asked half, in place (the dict keeps its room: no new allocation)."""
        drop = len(table) - MEMORY_PER_ENCODING // 2
        for key, _ in heapq.nsmallest(drop, table.items(), key=lambda item: _hits(item[1])):
            del table[key]


def _most_asked(table: dict[bytes, int], count: int) -> list[tuple[bytes, int]]:
    """The `count` entries with the most hits, most first (no copy of the whole table)."""
    return heapq.nlargest(count, table.items(), key=lambda item: _hits(item[1]))


def _is_row(row: object) -> bool:
    """`[sha256 hex, raw, hits]` as saved."""
    if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str)):
        return False
    sha, raw, hits = row
    counts = all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (raw, hits))
    return counts and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)
