"""FrequentStrings: most asked first, bounded, saved at most once a minute."""

from __future__ import annotations

import hashlib
import tracemalloc
from pathlib import Path

import pytest

from tokengauge.counting import frequent as frequent_strings
from tokengauge.counting.frequent import FrequentStrings, text_sha256
from tokengauge.ledger.store import Ledger


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


def test_first_save_comes_soon_then_once_a_minute(tmp_path: Path):
    """A crash early in a session lost the whole table (500 → 0 entries)."""
    ledger = Ledger(tmp_path / "ledger")
    clock = Clock()
    strings = FrequentStrings(ledger, clock)
    strings.seen("o200k_base", "a", 1)
    clock.now = 1.9
    strings.save_if_due()
    assert FrequentStrings(ledger).entries("o200k_base") == []
    clock.now = 2
    strings.save_if_due()
    assert len(FrequentStrings(ledger).entries("o200k_base")) == 1
    strings.seen("o200k_base", "b", 1)
    clock.now = 30
    strings.save_if_due()
    assert len(FrequentStrings(ledger).entries("o200k_base")) == 1  # within the minute
    clock.now = 66
    strings.save_if_due()
    assert len(FrequentStrings(ledger).entries("o200k_base")) == 2
    clock.now = 200
    strings.save_if_due()  # nothing changed: nothing written
    assert len(FrequentStrings(ledger).entries("o200k_base")) == 2


def test_a_stream_of_new_strings_stays_within_a_few_megabytes():
    """The table grew RSS ~14 MB/min under new strings (171 → 237 MB in 5 min)."""
    strings = FrequentStrings(Ledger(None))
    tracemalloc.start()
    try:
        for i in range(3 * frequent_strings.MEMORY_PER_ENCODING):
            strings.seen("o200k_base", f"a string never seen before {i}", 7)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20
    assert len(strings._seen["o200k_base"]) <= frequent_strings.MEMORY_PER_ENCODING


def test_saved_rows_that_are_not_rows_are_skipped(tmp_path: Path):
    ledger = Ledger(tmp_path / "ledger")
    good = [text_sha256("x"), 3, 9]
    bad = [["zz", 1, 1], [text_sha256("y"), -1, 1], [text_sha256("y"), 1], "row", None]
    ledger.set_document("frequent-strings/o200k_base", [good, *bad])
    assert FrequentStrings(ledger).entries("o200k_base") == [(text_sha256("x"), 3)]


def test_used_names_the_encodings_counted_now_or_before(tmp_path: Path):
    # The server loads ahead only these: an encoding is ~23–46 MiB, and one no model of the
    # family has been counted with may never be asked for.
    ledger = Ledger(tmp_path / "ledger")
    strings = FrequentStrings(ledger)
    assert strings.used(["o200k_base", "cl100k_base"]) == []
    strings.seen("cl100k_base", "a tool's description", 4)
    assert strings.used(["o200k_base", "cl100k_base", "cl100k_base"]) == ["cl100k_base"]
    strings.save()
    later = FrequentStrings(ledger)
    assert later.used(["o200k_base", "cl100k_base", "p50k_base"]) == ["cl100k_base"]
