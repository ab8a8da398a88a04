"""Ledger tests: real diskcache directories, real corruption, and the fall back to memory."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import math
import os
import pickle
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import diskcache
import pytest

from tokengauge.ledger.disk import LedgerTimings
from tokengauge.ledger.store import Ledger

LOGGER = "tokengauge.ledger.store"
SHORT = LedgerTimings(statement=0.1, usage=0.1)
"""Waits on a held lock cut short: the tests hold it, and nothing is gained by waiting."""


@pytest.fixture
def caplog_ledger(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    return caplog


def ledger_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]


def in_new_thread(fn: Callable[[], Any]) -> Any:
    """Run `fn` in a fresh thread (so diskcache opens a fresh SQLite connection); re-raise."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def dir_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def digest(i: int) -> str:
    return f"{i:064x}"


@pytest.fixture(params=["disk", "memory"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    directory = tmp_path / "ledger" if request.param == "disk" else None
    instance = Ledger(directory)
    assert instance.persistent is (directory is not None)
    yield instance
    instance.close()


# Round trips, on disk and in memory.


def test_actual_round_trip(ledger: Ledger) -> None:
    assert ledger.get_actual("o200k", "abc") is None
    ledger.put_actuals("o200k", {"abc": 17, "def": 0})
    assert ledger.get_actual("o200k", "abc") == 17
    assert ledger.get_actual("o200k", "def") == 0
    assert ledger.get_actual("cl100k", "abc") is None  # Families are separate.
    ledger.put_actuals("o200k", {"abc": 18})
    assert ledger.get_actual("o200k", "abc") == 18


def test_actuals_in_order_with_misses(ledger: Ledger) -> None:
    ledger.put_actuals("claude", {"a": 1, "c": 3})
    assert ledger.get_actuals("claude", ["a", "b", "c", "a"]) == [1, None, 3, 1]
    assert ledger.get_actuals("claude", []) == []
    assert ledger.get_actuals("claude", ("c",)) == [3]
    ledger.put_actuals("claude", {})


def test_limit_round_trip(ledger: Ledger) -> None:
    assert ledger.get_limit("gpt-4o") is None
    ledger.set_limit("gpt-4o", 128_000)
    ledger.set_limit("gpt-4o", 127_000)
    assert ledger.get_limit("gpt-4o") == 127_000
    assert ledger.get_limit("gpt-4.1") is None


def test_usage_round_trip(ledger: Ledger) -> None:
    assert ledger.recent_usage() == []
    first = {"model": "gpt-4o", "input": 1200, "factor": 1.02, "tags": ["a", "b"]}
    ledger.append_usage(first)
    ledger.append_usage({"model": "claude", "nested": {"k": None}, "pair": (1, 2)})
    assert ledger.recent_usage() == [
        first,
        {"model": "claude", "nested": {"k": None}, "pair": [1, 2]},  # Stored as JSON.
    ]
    returned = ledger.recent_usage()[0]
    returned["model"] = "changed"
    assert ledger.recent_usage()[0]["model"] == "gpt-4o"  # Callers get copies.


def test_usage_must_be_json(ledger: Ledger) -> None:
    with pytest.raises(TypeError):
        ledger.append_usage({"when": object()})
    assert ledger.recent_usage() == []
    assert ledger.persistent is (ledger.directory is not None)


@pytest.mark.parametrize("limit", [1, 3, 5, 6, 10, 11, 12, 50, None])
@pytest.mark.parametrize("where", ["disk", "memory"])
def test_usage_ordered_and_limited(tmp_path: Path, where: str, limit: int | None) -> None:
    ledger = Ledger(tmp_path / "l" if where == "disk" else None)
    for i in range(25):
        ledger.append_usage({"n": i})
    kept = [{"n": i} for i in range(25)]
    assert ledger.recent_usage() == kept
    assert ledger.recent_usage(limit) == (kept if limit is None else kept[-limit:])
    ledger.close()


def test_usage_is_kept_by_age_not_by_number(tmp_path: Path) -> None:
    """The history kept its newest 2,000 records whatever the retention said: 30 days of a busy
    agent undercounted."""
    ledger = Ledger(tmp_path / "l")
    for i in range(3_000):
        ledger.append_usage({"time": 1_000.0 + i, "n": i})
    ledger.drop_usage_before(1_500.0)
    ledger.close()
    again = Ledger(tmp_path / "l")
    assert [record["n"] for record in again.recent_usage()] == list(range(500, 3_000))
    again.close()


@pytest.mark.parametrize("where", ["disk", "memory"])
def test_usage_selected_and_summed(tmp_path: Path, where: str) -> None:
    ledger = Ledger(tmp_path / "l" if where == "disk" else None)
    records: list[dict[str, Any]] = [
        {"time": 10.0, "modelId": "a", "conversation": "c1", "costUsd": 0.5, "saved": 3},
        {"time": 20.0, "modelId": "b", "conversation": "c1", "costUsd": None, "saved": 4},
        {"time": 30.0, "modelId": "a", "conversation": "c2", "costUsd": 0.25, "saved": True},
        {"time": 40.0, "modelId": "a", "costUsd": "1.0", "saved": 5},
    ]
    for record in records:
        ledger.append_usage(record)
    assert ledger.recent_usage(since=20.0) == records[1:]
    assert ledger.recent_usage(1, since=20.0, fields={"modelId": "a"}) == records[3:]
    assert ledger.recent_usage(fields={"conversation": "c1"}) == records[:2]
    names = ("costUsd", "saved", "absent")
    assert ledger.usage_sums(names) == {"costUsd": 0.75, "saved": 12.0, "absent": None}
    assert ledger.usage_sums(names, since=15.0, fields={"modelId": "a"}) == {
        "costUsd": 0.25,  # a string is not a number, nor is a bool
        "saved": 5.0,
        "absent": None,
    }
    assert ledger.usage_sums(["costUsd"], fields={"conversation": "c9"}) == {"costUsd": None}
    ledger.close()


@pytest.mark.parametrize("limit", [0, -1])
def test_usage_non_positive_limit(ledger: Ledger, limit: int) -> None:
    ledger.append_usage({"n": 1})
    assert ledger.recent_usage(limit) == []


@pytest.mark.parametrize(
    ("counts", "stored"),
    [
        pytest.param({"a": 5}, {"a": 5}, id="plain"),
        pytest.param({"a": -1, "b": 5}, {"b": 5}, id="negative"),
        pytest.param({"a": True, "b": 5}, {"b": 5}, id="bool"),
        pytest.param({"a": 2**70, "b": 5}, {"b": 5}, id="too-big-for-sqlite"),
        pytest.param({"a": 1.5, "b": 5}, {"b": 5}, id="float"),
    ],
)
def test_put_actuals_skips_non_counts(
    ledger: Ledger, counts: dict[str, Any], stored: dict[str, int]
) -> None:
    ledger.put_actuals("f", counts)
    assert {d: ledger.get_actual("f", d) for d in counts} == {d: stored.get(d) for d in counts}
    assert ledger.persistent is (ledger.directory is not None)


def test_bad_limit_ignored(ledger: Ledger) -> None:
    ledger.set_limit("m", -5)
    ledger.set_limit("n", 2**64)
    assert ledger.get_limit("m") is None
    assert ledger.get_limit("n") is None
    assert ledger.persistent is (ledger.directory is not None)


def test_invalid_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Ledger(tmp_path / "l", size_limit_bytes=0)


# Persistence.


def test_memory_only(caplog_ledger: pytest.LogCaptureFixture) -> None:
    ledger = Ledger(None)
    assert not ledger.persistent
    assert ledger.directory is None
    ledger.set_limit("m", 10)
    assert ledger.get_limit("m") == 10
    ledger.close()
    assert ledger_warnings(caplog_ledger) == []


def test_persists_across_instances(tmp_path: Path) -> None:
    directory = tmp_path / "nested" / "ledger"
    first = Ledger(directory)
    assert first.persistent
    assert first.directory == directory
    first.put_actuals("o200k", {"a": 1, "b": 2})
    first.set_document("fit/gpt-4o", {"mean": [0.97]})
    first.set_limit("gpt-4o", 128_000)
    first.append_usage({"n": 1})
    first.append_usage({"n": 2})
    first.close()
    assert not first.persistent

    second = Ledger(directory)
    assert second.persistent
    assert second.get_actuals("o200k", ["a", "b", "c"]) == [1, 2, None]
    assert second.get_document("fit/gpt-4o") == {"mean": [0.97]}
    assert second.get_limit("gpt-4o") == 128_000
    assert second.recent_usage() == [{"n": 1}, {"n": 2}]
    second.close()


def test_two_open_instances_share(tmp_path: Path) -> None:
    a = Ledger(tmp_path / "l")
    b = Ledger(tmp_path / "l")
    a.put_actuals("f", {"x": 7})
    assert b.get_actual("f", "x") == 7
    b.set_limit("m", 1_250)
    assert a.get_limit("m") == 1_250
    for i in range(6):
        (a if i % 2 else b).append_usage({"n": i})
    assert a.recent_usage() == b.recent_usage() == [{"n": i} for i in range(6)]
    a.close()
    b.close()


def test_an_older_ledgers_history_is_taken_in_once(tmp_path: Path) -> None:
    """Before the table, the history was one value of JSON lines."""
    old = diskcache.Cache(str(tmp_path / "l"))
    lines = [json.dumps({"time": 100.0 + i, "n": i}) for i in range(3)]
    old.set("usage", "\n".join([*lines, "not json"]))
    old.close()
    ledger = Ledger(tmp_path / "l")
    assert [record["n"] for record in ledger.recent_usage()] == [0, 1, 2]
    ledger.append_usage({"time": 200.0, "n": 3})
    ledger.close()
    reopened = diskcache.Cache(str(tmp_path / "l"))
    assert reopened.get("usage") is None
    reopened.set("usage", "\n".join(lines))  # as a kill before the old value went would leave it
    reopened.close()
    again = Ledger(tmp_path / "l")
    assert [record["n"] for record in again.recent_usage()] == [0, 1, 2, 3]
    again.close()


def test_close_then_memory(tmp_path: Path, caplog_ledger: pytest.LogCaptureFixture) -> None:
    ledger = Ledger(tmp_path / "l")
    ledger.put_actuals("f", {"a": 1})
    ledger.close()
    ledger.close()
    assert not ledger.persistent
    assert ledger.get_actual("f", "a") == 1  # Written this session, so kept in memory.
    ledger.put_actuals("f", {"b": 2})
    assert ledger.get_actual("f", "b") == 2
    assert ledger_warnings(caplog_ledger) == []


def test_diskcache_settings(tmp_path: Path) -> None:
    Ledger(tmp_path / "l", size_limit_bytes=5 * 2**20).close()
    cache = diskcache.Cache(str(tmp_path / "l"))  # Settings persist in the database.
    assert cache.eviction_policy == "least-recently-stored"  # reads write nothing
    assert cache.size_limit == 5 * 2**20
    assert cache.sqlite_mmap_size == 0
    assert cache.sqlite_journal_mode == "delete"  # no WAL: nothing memory-mapped (no SIGBUS)
    cache.close()


def test_a_wal_ledger_of_an_earlier_version_is_converted(tmp_path: Path) -> None:
    old = diskcache.Cache(str(tmp_path / "l"), sqlite_journal_mode="wal")
    old.set("limit\x1fm", 1_500)
    old.close()
    ledger = Ledger(tmp_path / "l")
    assert ledger.get_limit("m") == 1_500
    ledger.set_limit("m", 1_250)
    ledger.close()
    assert not (tmp_path / "l" / "cache.db-shm").exists()
    assert Ledger(tmp_path / "l").get_limit("m") == 1_250


# A damaged ledger is moved aside and a new one built; an unusable directory means memory.


def make_populated(directory: Path) -> Path:
    ledger = Ledger(directory)
    ledger.put_actuals("f", {digest(i): i for i in range(2_000)})
    ledger.append_usage({"n": 1})
    ledger.close()
    return directory / "cache.db"


def garbage(directory: Path) -> None:
    make_populated(directory).write_bytes(os.urandom(8192))


def truncated_half(directory: Path) -> None:
    db = make_populated(directory)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def header_only(directory: Path) -> None:
    db = make_populated(directory)
    db.write_bytes(db.read_bytes()[:100])


def text_file(directory: Path) -> None:
    directory.mkdir()
    (directory / "cache.db").write_text("not a database\n" * 100)


def emptied(directory: Path) -> None:
    make_populated(directory).write_bytes(b"")


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(garbage, id="garbage-db"),
        pytest.param(truncated_half, id="truncated-db"),
        pytest.param(header_only, id="header-only-db"),
        pytest.param(text_file, id="text-db"),
        pytest.param(emptied, id="emptied-db"),
    ],
)
def test_a_damaged_ledger_is_moved_aside_and_rebuilt(
    tmp_path: Path, caplog_ledger: pytest.LogCaptureFixture, spoil: Callable[[Path], None]
) -> None:
    """It used to run from memory, at every start, for ever."""
    directory = tmp_path / "parent" / "ledger"
    directory.parent.mkdir()
    spoil(directory)
    caplog_ledger.clear()

    ledger = Ledger(directory)
    ledger.put_actuals("f", {"a": 1})
    ledger.set_document("m", 1.5)
    ledger.close()

    damaged = [p for p in directory.parent.iterdir() if p.name.startswith("ledger.damaged-")]
    if spoil is not emptied:  # an empty file is a valid, empty database
        [warning] = ledger_warnings(caplog_ledger)
        assert str(directory) in warning.getMessage() and str(damaged[0]) in warning.getMessage()
        assert (damaged[0] / "cache.db").exists()
    reopened = Ledger(directory)
    assert reopened.persistent
    assert reopened.get_actual("f", "a") == 1 and reopened.get_document("m") == 1.5
    reopened.close()


def db_is_directory(directory: Path) -> None:
    (directory / "cache.db").mkdir(parents=True)


def parent_is_file(directory: Path) -> None:
    directory.parent.write_text("a regular file")


def directory_is_file(directory: Path) -> None:
    directory.write_text("a regular file")


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        pytest.param(db_is_directory, "OperationalError", id="db-is-directory"),
        pytest.param(parent_is_file, "NotADirectoryError", id="parent-is-file"),
        pytest.param(directory_is_file, "OperationalError", id="directory-is-file"),
    ],
)
def test_unusable_directory_falls_back(
    tmp_path: Path,
    caplog_ledger: pytest.LogCaptureFixture,
    spoil: Callable[[Path], None],
    reason: str,
) -> None:
    directory = tmp_path / "parent" / "ledger"
    if spoil is not parent_is_file:
        directory.parent.mkdir()
    spoil(directory)
    caplog_ledger.clear()

    ledger = Ledger(directory)

    assert not ledger.persistent
    assert ledger.directory == directory
    [warning] = ledger_warnings(caplog_ledger)
    assert str(directory) in warning.getMessage()
    assert reason in warning.getMessage()
    assert ledger.get_actual("f", digest(1)) is None
    populate_session(ledger)
    check_session_kept(ledger)
    ledger.close()
    assert len(ledger_warnings(caplog_ledger)) == 1


# Damage while running: rebuilt from memory, nothing this session knew is lost.


def populate_session(ledger: Ledger) -> None:
    ledger.put_actuals("f", {"a": 1})
    ledger.set_document("m", 1.5)
    ledger.set_limit("m", 1000)
    ledger.append_usage({"n": 1})


def check_session_kept(ledger: Ledger) -> None:
    """What this session wrote is still there, and new writes are taken."""
    assert ledger.get_actual("f", "a") == 1
    assert ledger.get_document("m") in (1.5, 2.0)
    assert ledger.get_limit("m") in (1000, 99)
    assert ledger.recent_usage()[0] == {"n": 1}
    ledger.put_actuals("f", {"z": 26})
    assert ledger.get_actuals("f", ["z", "a"]) == [26, 1]


def write_garbage_over_db(directory: Path) -> None:
    (directory / "cache.db").write_bytes(os.urandom(8192))


def delete_directory(directory: Path) -> None:
    shutil.rmtree(directory)


def replace_directory(directory: Path) -> None:
    shutil.rmtree(directory)
    Ledger(directory).close()  # another process starts a new, empty one


def truncate_everything(directory: Path) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            path.write_bytes(b"")


SPOILS_WHILE_OPEN = [
    pytest.param(write_garbage_over_db, "damaged", id="garbage-over-db"),
    pytest.param(delete_directory, "deleted or replaced", id="directory-deleted"),
    pytest.param(replace_directory, "deleted or replaced", id="directory-replaced"),
    pytest.param(truncate_everything, "damaged", id="files-truncated"),
]


@pytest.mark.parametrize(("spoil", "said"), SPOILS_WHILE_OPEN)
def test_damage_while_open_is_rebuilt_from_memory(
    tmp_path: Path,
    caplog_ledger: pytest.LogCaptureFixture,
    spoil: Callable[[Path], None],
    said: str,
) -> None:
    """Deleted or overwritten while running, the ledger said nothing and lost everything at the
    next start."""
    directory = tmp_path / "l"
    ledger = Ledger(directory)
    ledger.set_limit("learned-earlier", 4096)
    assert Ledger(directory).get_limit("learned-earlier") == 4096
    populate_session(ledger)
    assert ledger.get_limit("learned-earlier") == 4096  # read this session: kept in memory
    spoil(directory)

    # SQLite keeps serving the connection it has (its pages, its unlinked inode): the damage
    # shows on the next write, or on a fresh connection (diskcache opens one per thread).
    in_new_thread(lambda: ledger.get_actuals("f", ["a"]))
    ledger.set_document("m", 2.0)

    assert ledger.persistent
    [warning] = ledger_warnings(caplog_ledger)
    assert str(directory) in warning.getMessage() and said in warning.getMessage()
    check_session_kept(ledger)
    ledger.close()
    after = Ledger(directory)  # the next start finds it all
    assert after.get_document("m") == 2.0 and after.get_limit("learned-earlier") == 4096
    assert after.get_actuals("f", ["a", "z"]) == [1, 26]
    assert after.recent_usage()[0] == {"n": 1}
    after.close()


def close_connection_first(original: Callable[..., Any]) -> Callable[..., Any]:
    def spoiled(self: diskcache.Cache, *args: Any, **kwargs: Any) -> Any:
        self._local.con.close()  # The real sqlite3 connection, closed under diskcache.
        return original(self, *args, **kwargs)

    return spoiled


def raising(exc: BaseException) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def spoiled(*args: Any, **kwargs: Any) -> Any:
            raise exc

        return spoiled

    return wrap


OPERATIONS: list[Any] = [
    pytest.param(lambda ledger: ledger.get_actual("f", "a"), id="get_actual"),
    pytest.param(lambda ledger: ledger.get_actuals("f", ["a", "b"]), id="get_actuals"),
    pytest.param(lambda ledger: ledger.put_actuals("f", {"c": 3}), id="put_actuals"),
    pytest.param(lambda ledger: ledger.get_document("m"), id="get_document"),
    pytest.param(lambda ledger: ledger.set_document("m", 2.0), id="set_document"),
    pytest.param(lambda ledger: ledger.get_limit("m"), id="get_limit"),
    pytest.param(lambda ledger: ledger.set_limit("m", 99), id="set_limit"),
    pytest.param(lambda ledger: ledger.append_usage({"n": 2}), id="append_usage"),
    pytest.param(lambda ledger: ledger.recent_usage(), id="recent_usage"),
]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        pytest.param(close_connection_first, "ProgrammingError", id="connection-closed"),
        pytest.param(
            raising(sqlite3.DatabaseError("database disk image is malformed")),
            "database disk image is malformed",
            id="malformed-again-and-again",
        ),
        pytest.param(
            raising(sqlite3.OperationalError("disk I/O error")),
            "OperationalError: disk I/O error",
            id="io-error",
        ),
        pytest.param(
            raising(OSError(errno.ENOSPC, "No space left on device")),
            "No space left on device",
            id="disk-full",
        ),
        pytest.param(
            raising(pickle.UnpicklingError("invalid load key")),
            "UnpicklingError: invalid load key",
            id="unpickling",
        ),
        pytest.param(raising(EOFError("Ran out of input")), "EOFError", id="eof"),
    ],
)
def test_a_disk_that_keeps_failing_means_memory(
    tmp_path: Path,
    caplog_ledger: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    spoil: Callable[[Callable[..., Any]], Callable[..., Any]],
    reason: str,
    operation: Callable[[Ledger], object],
) -> None:
    directory = tmp_path / "l"
    ledger = Ledger(directory)
    populate_session(ledger)
    for name in ("get", "set", "transact"):
        monkeypatch.setattr(diskcache.Cache, name, spoil(getattr(diskcache.Cache, name)))

    operation(ledger)
    for other in OPERATIONS:  # Nothing raises.
        other.values[0](ledger)

    assert not ledger.persistent
    warnings = ledger_warnings(caplog_ledger)
    assert warnings and all(str(directory) in w.getMessage() for w in warnings)
    assert reason in warnings[-1].getMessage() and "memory" in warnings[-1].getMessage()
    check_session_kept(ledger)
    ledger.close()


def test_failure_in_one_thread_is_handled_once(
    tmp_path: Path, caplog_ledger: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "l"
    ledger = Ledger(directory)
    populate_session(ledger)
    write_garbage_over_db(directory)
    threads = [
        threading.Thread(target=ledger.get_actuals, args=("f", [digest(i) for i in range(50)]))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledger.persistent
    assert len(ledger_warnings(caplog_ledger)) == 1
    check_session_kept(ledger)
    ledger.close()


# Lock contention: another process holding the database is a pause, not the end of the disk.


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_lock_held_by_another_process_is_waited_out(
    tmp_path: Path, caplog_ledger: pytest.LogCaptureFixture
) -> None:
    """One lock held over ~1 s switched the ledger to memory for the session, hiding all it
    had learned before."""
    directory = tmp_path / "l"
    clock = Clock()
    ledger = Ledger(directory, clock=clock, timings=SHORT)
    populate_session(ledger)
    holder = sqlite3.connect(directory / "cache.db", timeout=0, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # what another process's long write looks like
    try:
        ledger.set_document("m", 2.0)  # waits its while, then keeps it in memory
        ledger.put_actuals("f", {"b": 2})
        assert ledger.get_document("m") == 2.0 and ledger.get_actual("f", "a") == 1
        assert ledger.persistent
    finally:
        holder.execute("COMMIT")
        holder.close()
    clock.now += 10  # after the pause the disk is tried again and gets what waited
    ledger.set_limit("m", 99)
    [warning] = ledger_warnings(caplog_ledger)
    assert "locked" in warning.getMessage() and str(directory) in warning.getMessage()
    ledger.close()
    reopened = Ledger(directory)
    assert reopened.get_document("m") == 2.0 and reopened.get_actual("f", "b") == 2
    assert reopened.get_limit("m") == 99
    reopened.close()


# Read-only: its data is used, what is learned stays in memory.


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """Make `directory` and its files unwritable (immutable for root, who ignores modes)."""
    paths = [directory, *directory.rglob("*")]
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True).returncode:
            pytest.skip("chattr +i is not available here")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", *map(str, paths)], check=True)
        return
    modes = {path: path.stat().st_mode for path in paths}
    for path in reversed(paths):
        path.chmod(modes[path] & ~0o222)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


@pytest.mark.parametrize("when", ["at-start", "while-running"])
def test_a_read_only_ledger_is_read(
    tmp_path: Path, caplog_ledger: pytest.LogCaptureFixture, when: str
) -> None:
    """Its data used to be ignored."""
    directory = tmp_path / "l"
    first = Ledger(directory)
    populate_session(first)
    first.set_document("discovery/p", [{"id": "x"}])
    first.set_document("frequent/big", ["y" * 50_000])  # kept as a file by diskcache
    if when == "at-start":
        first.close()
    with read_only(directory):
        ledger = Ledger(directory) if when == "at-start" else first
        ledger.set_document("m", 2.0)
        assert ledger.get_document("m") == 2.0
        assert not ledger.persistent
        check_session_kept(ledger)
        assert ledger.get_document("discovery/p") == [{"id": "x"}]
        assert ledger.get_document("frequent/big") == ["y" * 50_000]
        started = time.monotonic()
        ledger.close()
        assert time.monotonic() - started < 1.5  # it waited 2 s for a disk it cannot write
    [warning] = ledger_warnings(caplog_ledger)
    assert str(directory) in warning.getMessage()
    assert Ledger(directory).get_document("m") == 1.5  # nothing was written


# A crash in the middle of a write: what was acknowledged is there, the rest is not half there.

WRITER = """
import sys
from pathlib import Path
from tokengauge.ledger.store import Ledger
ledger = Ledger(Path(sys.argv[1]))
for i in range(1_000_000):
    ledger.put_actuals("f", {f"{i:064x}": i, f"{i:064x}-b": i})
    ledger.append_usage({"n": i})
    print(i, flush=True)
"""


@pytest.mark.parametrize("after", [5, 60, 200])
def test_a_crash_mid_write_keeps_every_acknowledged_write(tmp_path: Path, after: int) -> None:
    directory = tmp_path / "l"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(directory)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    acknowledged = -1
    for line in writer.stdout:
        acknowledged = int(line)
        if acknowledged >= after:
            break
    writer.send_signal(signal.SIGKILL)
    writer.wait(10)
    ledger = Ledger(directory)
    assert ledger.persistent
    found = ledger.get_actuals("f", [f"{i:064x}" for i in range(acknowledged + 1)])
    assert found == list(range(acknowledged + 1))
    history = [record["n"] for record in ledger.recent_usage()]
    assert history[: acknowledged + 1] == list(range(min(acknowledged + 1, 500)))[: len(history)]
    assert len(history) >= min(acknowledged + 1, 500)
    check = sqlite3.connect(directory / "cache.db")
    assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    check.close()
    ledger.close()


def test_a_half_written_wal_of_an_earlier_version_is_survived(tmp_path: Path) -> None:
    """A WAL-mode ledger (before this version) left with its log cut in the middle of a frame."""
    directory = tmp_path / "l"
    old = diskcache.Cache(str(directory), sqlite_journal_mode="wal")
    old.set("limit\x1fkept", 1_500)
    holder = sqlite3.connect(directory / "cache.db")  # keeps the log from being checkpointed
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    for i in range(200):
        old.set(f"limit\x1fm{i}", 1_000 + i)
    wal = directory / "cache.db-wal"
    snapshot = {path.name: path.read_bytes() for path in directory.iterdir() if path.is_file()}
    old.close()
    holder.close()
    for name, data in snapshot.items():  # the files as a crash would leave them
        (directory / name).write_bytes(data)
    wal.write_bytes(snapshot["cache.db-wal"][: len(snapshot["cache.db-wal"]) // 2 + 7])
    ledger = Ledger(directory)
    assert ledger.persistent
    assert ledger.get_limit("kept") == 1_500
    ledger.set_limit("new", 2_000)
    ledger.close()
    assert Ledger(directory).get_limit("new") == 2_000


def test_old_usage_records_are_dropped_from_disk_and_memory(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    for when in (100.0, 200.0, 300.0):
        ledger.append_usage({"time": when, "modelId": "m"})
    ledger.append_usage({"modelId": "m"})  # no time: it ended now
    ledger.drop_usage_before(200.0)
    assert [r.get("time") for r in ledger.recent_usage()] == [200.0, 300.0, None]
    ledger.close()
    again = Ledger(tmp_path)
    assert [r.get("time") for r in again.recent_usage()] == [200.0, 300.0, None]
    again.drop_usage_before(time.time() + 1)
    assert again.recent_usage() == []
    again.close()


# Several processes (VS Code windows) on one directory: changes are merged, not overwritten.


def add_one(document: object) -> object:
    return (document if isinstance(document, int) else 0) + 1


def append(value: int) -> Callable[[object], object]:
    def change(document: object) -> object:
        return [*(document if isinstance(document, list) else []), value]

    return change


@pytest.mark.parametrize("where", ["disk", "memory"])
def test_update_document(tmp_path: Path, where: str) -> None:
    ledger = Ledger(tmp_path / "l" if where == "disk" else None)
    assert ledger.update_document("n", add_one) == 1
    assert ledger.update_document("n", add_one) == 2
    assert ledger.get_document("n") == 2
    with pytest.raises(TypeError):
        ledger.update_document("n", lambda _: object())
    assert ledger.get_document("n") == 2
    ledger.close()


def test_updates_of_two_processes_are_merged(tmp_path: Path) -> None:
    """Two windows learning on one model kept only the last writer's document."""
    a, b = Ledger(tmp_path / "l"), Ledger(tmp_path / "l")
    for i in range(10):
        (a if i % 2 else b).update_document("ratios", append(i))
    assert a.get_document("ratios") == b.get_document("ratios") == list(range(10))
    a.close()
    b.close()


def test_changes_made_while_locked_are_merged_later(tmp_path: Path) -> None:
    directory = tmp_path / "l"
    clock = Clock()
    ledger, other = Ledger(directory, clock=clock, timings=SHORT), Ledger(directory)
    ledger.update_document("ratios", append(0))
    holder = sqlite3.connect(directory / "cache.db", timeout=0, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert ledger.update_document("ratios", append(1)) == [0, 1]  # memory, for now
        assert ledger.update_document("ratios", append(2)) == [0, 1, 2]
    finally:
        holder.execute("COMMIT")
        holder.close()
    other.update_document("ratios", append(10))  # another window, while this one waits
    assert ledger.get_document("ratios") == [0, 1, 2]  # its own changes are not lost meanwhile
    clock.now += 10
    ledger.set_limit("m", 5)  # the disk again: the waiting changes go onto the other's
    assert ledger.get_document("ratios") == [0, 10, 1, 2]
    assert other.get_document("ratios") == [0, 10, 1, 2]
    ledger.close()
    other.close()


def test_what_waits_for_a_lock_is_written_at_close(tmp_path: Path) -> None:
    """What was learned in the pause after a lock was lost at shutdown, even a clean one."""
    directory = tmp_path / "l"
    clock = Clock()
    ledger = Ledger(directory, clock=clock, timings=SHORT)
    holder = sqlite3.connect(
        directory / "cache.db", timeout=0, isolation_level=None, check_same_thread=False
    )
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    ledger.put_actuals("f", {"a": 1})  # waits its while: the disk is paused
    release.start()
    for i in range(25):
        ledger.append_usage({"n": i})
        ledger.update_document("n", add_one)
    ledger.close()  # the pause is not over (the clock stands still): close waits for the lock
    release.join()
    holder.close()
    reopened = Ledger(directory)
    assert [record["n"] for record in reopened.recent_usage()] == list(range(25))
    assert reopened.get_document("n") == 25 and reopened.get_actual("f", "a") == 1
    reopened.close()


@pytest.mark.parametrize("where", ["disk", "memory"])
def test_sums_stay_finite(tmp_path: Path, where: str) -> None:
    """A cost stored as Infinity (an absurd price) is not JSON: the dashboard's answer could not
    be parsed by VS Code, and SQLite cannot read it."""
    ledger = Ledger(tmp_path / "l" if where == "disk" else None)
    ledger.append_usage({"modelId": "a", "costUsd": 1.5})
    ledger.append_usage({"modelId": "a", "costUsd": float("inf")})
    ledger.append_usage({"modelId": "a", "costUsd": 1e308, "big": 1e308})
    ledger.append_usage({"modelId": "a", "costUsd": 1e308, "big": 1e308})
    sums = ledger.usage_sums(["costUsd", "big"], fields={"modelId": "a"})
    assert sums["big"] is None  # 2e308 is not a number to show
    assert sums["costUsd"] is None or math.isfinite(sums["costUsd"])
    assert [r["costUsd"] for r in ledger.recent_usage(fields={"modelId": "a"})] == [
        1.5,
        None,  # stored as null
        1e308,
        1e308,
    ]
    assert ledger.persistent is (where == "disk")
    ledger.close()


def test_a_batch_goes_to_disk_at_its_end(tmp_path: Path) -> None:
    """A write per model of 100,000, each its own transaction, took minutes."""
    ledger, other = Ledger(tmp_path / "l"), Ledger(tmp_path / "l")
    with ledger.batched():
        for i in range(1_000):
            ledger.set_document(f"d{i}", i)
        ledger.append_usage({"n": 1})
        assert other.get_document("d0") is None  # not yet on the disk…
        assert ledger.get_document("d999") == 999  # …but known
        assert other.recent_usage() == [{"n": 1}]  # a usage record goes at once
    assert [other.get_document(f"d{i}") for i in (0, 500, 999)] == [0, 500, 999]
    ledger.close()
    other.close()
