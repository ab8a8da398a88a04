"""FrequentStrings: most asked first, bounded, saved at most once a minute."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tokengauge import frequent_strings
from tokengauge.frequent_strings import FrequentStrings, text_sha256
from tokengauge.ledger import Ledger


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_ranked_by_hits_and_saved_when_due(tmp_path: Path):
    ledger = Ledger(tmp_path / "ledger")
    clock = Clock()
    strings = FrequentStrings(ledger, clock)
    for text, hits in (("a", 1), ("b", 3), ("c", 2)):
        for _ in range(hits):
            strings.seen("o200k_base", text, len(text) * 10)
    assert [sha for sha, _ in strings.entries("o200k_base")] == [
        text_sha256(t) for t in ("b", "c", "a")
    ]
    strings.save_if_due()
    assert FrequentStrings(ledger).entries("o200k_base") == []  # not due yet
    clock.now = 61
    strings.save_if_due()
    assert FrequentStrings(ledger).entries("o200k_base") == strings.entries("o200k_base")


def test_memory_is_bounded(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(frequent_strings, "MEMORY_PER_ENCODING", 10)
    strings = FrequentStrings(Ledger(None))
    strings.seen("cl100k_base", "keep", 1)
    strings.seen("cl100k_base", "keep", 1)
    for i in range(100):
        strings.seen("cl100k_base", f"s{i}", 1)
    entries = strings.entries("cl100k_base")
    assert len(entries) <= 10
    assert entries[0][0] == text_sha256("keep")


def test_hashes_like_node():
    # Node's utf8 encoder turns a lone surrogate into U+FFFD; the extension hashes with Node.
    assert text_sha256("a\ud800b") == hashlib.sha256("a\ufffdb".encode()).hexdigest()
    assert text_sha256("plain") == hashlib.sha256(b"plain").hexdigest()
