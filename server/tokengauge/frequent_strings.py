"""The strings counted most often, kept across sessions so the extension can pre-warm its memo.

Copilot asks for the same tool-schema keys and descriptions every turn and every session; strings
are ~99% of its count calls (DESIGN §3 `warmCounts`). Per encoding, this remembers each string's
SHA-256, raw count and how often it was asked, in memory, and saves the most asked to the ledger.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Final

from tokengauge.ledger import Ledger
from tokengauge.text_counter import LONE_SURROGATE

SAVED_PER_ENCODING: Final = 20_000
MEMORY_PER_ENCODING: Final = 100_000
SAVE_EVERY_SECONDS: Final = 60.0


def text_sha256(text: str) -> str:
    """SHA-256 of the UTF-8 text as Node's `createHash().update(text, "utf8")` computes it: a lone
    surrogate becomes U+FFFD."""
    return hashlib.sha256(LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")).hexdigest()


def _document(encoding: str) -> str:
    return f"frequent-strings/{encoding}"


class FrequentStrings:
    """Raw counts of the most asked strings, by encoding: `sha256 → [raw, hits]`."""

    def __init__(self, ledger: Ledger, clock: Callable[[], float] = time.monotonic) -> None:
        self.ledger = ledger
        self._clock = clock
        self._seen: dict[str, dict[str, list[int]]] = {}
        self._saved_at = clock()

    def _table(self, encoding: str) -> dict[str, list[int]]:
        table = self._seen.get(encoding)
        if table is None:
            table = {}
            stored = self.ledger.get_document(_document(encoding))
            for row in stored if isinstance(stored, list) else []:
                if isinstance(row, list) and len(row) == 3 and isinstance(row[0], str):
                    table[row[0]] = [int(row[1]), int(row[2])]
            self._seen[encoding] = table
        return table

    def seen(self, encoding: str, text: str, raw: int) -> None:
        """Note one count of `text`."""
        table = self._table(encoding)
        key = text_sha256(text)
        entry = table.get(key)
        if entry is None:
            if len(table) >= MEMORY_PER_ENCODING:
                self._prune(table)
            table[key] = [raw, 1]
        else:
            entry[0], entry[1] = raw, entry[1] + 1

    def entries(self, encoding: str) -> list[tuple[str, int]]:
        """`(sha256, raw)` of the most asked strings, most asked first."""
        table = self._table(encoding)
        ranked = sorted(table.items(), key=lambda item: item[1][1], reverse=True)
        return [(key, raw) for key, (raw, _) in ranked[:SAVED_PER_ENCODING]]

    def save_if_due(self) -> None:
        """`save`, at most once a minute (it sorts and writes up to 20,000 rows per encoding)."""
        if self._clock() - self._saved_at >= SAVE_EVERY_SECONDS:
            self.save()

    def save(self) -> None:
        """Keep the most asked strings of every encoding in the ledger."""
        self._saved_at = self._clock()
        for encoding, table in self._seen.items():
            ranked = sorted(table.items(), key=lambda item: item[1][1], reverse=True)
            rows = [[key, raw, hits] for key, (raw, hits) in ranked[:SAVED_PER_ENCODING]]
            self.ledger.set_document(_document(encoding), rows)

    @staticmethod
    def _prune(table: dict[str, list[int]]) -> None:
        keep = sorted(table.items(), key=lambda item: item[1][1], reverse=True)
        table.clear()
        table.update(keep[: MEMORY_PER_ENCODING // 2])
