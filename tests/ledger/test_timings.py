"""The ledger's waits on a disk another process holds: settable, and read from the test hook."""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

import pytest

from tokengauge.ledger.disk import (
    TIMINGS_VARIABLE,
    USUAL_TIMINGS,
    LedgerTimings,
    timings_from_environment,
)
from tokengauge.ledger.store import Ledger


def test_the_usual_timings() -> None:
    """What the ledger waited before its timings could be set."""
    usual = USUAL_TIMINGS
    assert (usual.statement, usual.usage, usual.opening) == (1.0, 5.0, 15.0)
    assert (usual.closing, usual.busy_pause) == (2.0, 5.0)


def test_timings_from_the_environment() -> None:
    given = {TIMINGS_VARIABLE: '{"statement": 0.1, "busy_pause": 0}'}
    assert timings_from_environment(given) == LedgerTimings(statement=0.1, busy_pause=0)
    assert timings_from_environment({}) == USUAL_TIMINGS


@pytest.mark.parametrize(
    "text",
    ['{"statement": -1}', '{"pause": 1}', '{"usage": "1"}', "[1]", "0.1", "{", '{"usage": NaN}'],
)
def test_unusable_timings_are_ignored(text: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="tokengauge.ledger.disk")
    assert timings_from_environment({TIMINGS_VARIABLE: text}) == USUAL_TIMINGS
    [warning] = caplog.records
    assert TIMINGS_VARIABLE in warning.getMessage()


def test_a_ledger_waits_as_long_as_its_timings_say(tmp_path: Path) -> None:
    """A held lock costs the statement's wait, then the disk is left alone for the pause."""
    directory = tmp_path / "l"
    ledger = Ledger(directory, timings=LedgerTimings(statement=0.05, busy_pause=0.5))
    holder = sqlite3.connect(directory / "cache.db", timeout=0, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        ledger.set_limit("m", 1)  # waits, then keeps it in memory
        assert time.monotonic() - started < USUAL_TIMINGS.statement
    finally:
        holder.execute("COMMIT")
        holder.close()
    ledger.set_limit("m", 2)  # still in the pause: memory
    assert stored_limit(directory) is None
    time.sleep(0.6)
    ledger.set_limit("m", 3)  # after it: the disk again
    assert stored_limit(directory) == 3
    ledger.close()


def stored_limit(directory: Path) -> int | None:
    """The limit of model `m` on the disk, as another window would read it."""
    other = Ledger(directory)
    try:
        return other.get_limit("m")
    finally:
        other.close()
