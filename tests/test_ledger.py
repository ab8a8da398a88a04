"""Ledger tests: real diskcache directories, real corruption, and the fall back to memory."""

from __future__ import annotations

import errno
import logging
import math
import os
import pickle
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import diskcache
import pytest

from tokengauge.ledger import Ledger

LOGGER = "tokengauge.ledger"


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


def test_factor_round_trip(ledger: Ledger) -> None:
    assert ledger.get_factor("gpt-4o") is None
    ledger.set_factor("gpt-4o", 1.0625)
    ledger.set_factor("claude-sonnet", 1)
    assert ledger.get_factor("gpt-4o") == 1.0625
    factor = ledger.get_factor("claude-sonnet")
    assert factor == 1.0
    assert isinstance(factor, float)


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
def test_usage_bounded_and_ordered(tmp_path: Path, where: str, limit: int | None) -> None:
    ledger = Ledger(tmp_path / "l" if where == "disk" else None, history_limit=10)
    for i in range(25):
        ledger.append_usage({"n": i})
    kept = [{"n": i} for i in range(15, 25)]
    assert ledger.recent_usage() == kept
    assert ledger.recent_usage(limit) == (kept if limit is None else kept[-limit:])
    ledger.close()


@pytest.mark.parametrize("limit", [0, -1])
def test_usage_non_positive_limit(ledger: Ledger, limit: int) -> None:
    ledger.append_usage({"n": 1})
    assert ledger.recent_usage(limit) == []


@pytest.mark.parametrize("where", ["disk", "memory"])
def test_usage_history_limit_zero(tmp_path: Path, where: str) -> None:
    ledger = Ledger(tmp_path / "l" if where == "disk" else None, history_limit=0)
    ledger.append_usage({"n": 1})
    assert ledger.recent_usage() == []
    ledger.close()


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


@pytest.mark.parametrize(
    "factor",
    [
        pytest.param(math.nan, id="nan"),
        pytest.param(math.inf, id="inf"),
        pytest.param(-math.inf, id="-inf"),
    ],
)
def test_non_finite_factor_ignored(ledger: Ledger, factor: float) -> None:
    ledger.set_factor("m", factor)
    assert ledger.get_factor("m") is None


def test_bad_limit_ignored(ledger: Ledger) -> None:
    ledger.set_limit("m", -5)
    ledger.set_limit("n", 2**64)
    assert ledger.get_limit("m") is None
    assert ledger.get_limit("n") is None
    assert ledger.persistent is (ledger.directory is not None)


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"size_limit_bytes": 0}, id="size-zero"),
        pytest.param({"history_limit": -1}, id="history-negative"),
    ],
)
def test_invalid_arguments(tmp_path: Path, kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Ledger(tmp_path / "l", **kwargs)


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
    first.set_factor("gpt-4o", 0.97)
    first.set_limit("gpt-4o", 128_000)
    first.append_usage({"n": 1})
    first.append_usage({"n": 2})
    first.close()
    assert not first.persistent

    second = Ledger(directory)
    assert second.persistent
    assert second.get_actuals("o200k", ["a", "b", "c"]) == [1, 2, None]
    assert second.get_factor("gpt-4o") == 0.97
    assert second.get_limit("gpt-4o") == 128_000
    assert second.recent_usage() == [{"n": 1}, {"n": 2}]
    second.close()


def test_two_open_instances_share(tmp_path: Path) -> None:
    a = Ledger(tmp_path / "l", history_limit=4)
    b = Ledger(tmp_path / "l", history_limit=4)
    a.put_actuals("f", {"x": 7})
    assert b.get_actual("f", "x") == 7
    b.set_factor("m", 1.25)
    assert a.get_factor("m") == 1.25
    for i in range(6):
        (a if i % 2 else b).append_usage({"n": i})
    assert a.recent_usage() == b.recent_usage() == [{"n": i} for i in range(2, 6)]
    a.close()
    b.close()


def test_history_limit_applies_to_what_is_stored(tmp_path: Path) -> None:
    big = Ledger(tmp_path / "l", history_limit=10)
    for i in range(10):
        big.append_usage({"n": i})
    big.close()
    small = Ledger(tmp_path / "l", history_limit=3)
    assert small.recent_usage() == [{"n": 7}, {"n": 8}, {"n": 9}]
    small.append_usage({"n": 10})
    assert small.recent_usage() == [{"n": 8}, {"n": 9}, {"n": 10}]
    small.close()


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
    assert cache.eviction_policy == "least-recently-used"
    assert cache.size_limit == 5 * 2**20
    assert cache.sqlite_mmap_size == 0
    cache.close()


# The size bound is diskcache's own (size_limit, culled on set).


SIZE_LIMIT = 64 * 2**10
WRITTEN = 3_000


@pytest.fixture
def full_ledger(tmp_path: Path) -> Iterator[Ledger]:
    ledger = Ledger(tmp_path / "l", size_limit_bytes=SIZE_LIMIT)
    for start in range(0, WRITTEN, 100):
        ledger.put_actuals("f", {digest(i): i for i in range(start, start + 100)})
    assert ledger.persistent
    yield ledger
    ledger.close()


def test_size_bound_enforced(tmp_path: Path, full_ledger: Ledger) -> None:
    directory = tmp_path / "l"
    cache = diskcache.Cache(str(directory))
    count = len(cache)
    volume = cache.volume()
    cache.close()
    assert 0 < count < WRITTEN / 10
    assert volume <= SIZE_LIMIT + 8 * 4096
    assert full_ledger.get_actual("f", digest(WRITTEN - 1)) == WRITTEN - 1
    full_ledger.close()
    assert full_ledger.get_actual("f", digest(0)) == 0  # Session memory still has it...
    reopened = Ledger(directory, size_limit_bytes=SIZE_LIMIT)
    assert reopened.get_actual("f", digest(0)) is None  # ...but the disk evicted it.
    assert reopened.get_actual("f", digest(WRITTEN - 1)) == WRITTEN - 1
    reopened.close()
    # Once closed, SQLite has checkpointed and removed its write-ahead log.
    assert dir_bytes(directory) <= SIZE_LIMIT + 8 * 4096


def test_batch_survives_when_full(tmp_path: Path, full_ledger: Ledger) -> None:
    batch = {digest(i): i for i in range(WRITTEN, WRITTEN + 50)}
    full_ledger.put_actuals("f", batch)
    full_ledger.close()
    reopened = Ledger(tmp_path / "l", size_limit_bytes=SIZE_LIMIT)
    assert reopened.get_actuals("f", list(batch)) == list(batch.values())
    reopened.close()


# Falling back to memory: the directory cannot be used at all.


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


def db_is_directory(directory: Path) -> None:
    (directory / "cache.db").mkdir(parents=True)


def parent_is_file(directory: Path) -> None:
    directory.parent.write_text("a regular file")


def directory_is_file(directory: Path) -> None:
    directory.write_text("a regular file")


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        pytest.param(garbage, "DatabaseError", id="garbage-db"),
        pytest.param(truncated_half, "DatabaseError", id="truncated-db"),
        pytest.param(header_only, "DatabaseError", id="header-only-db"),
        pytest.param(text_file, "DatabaseError", id="text-db"),
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
    ledger.put_actuals("f", {"a": 1})
    ledger.set_factor("m", 1.5)
    ledger.set_limit("m", 1000)
    ledger.append_usage({"n": 1})
    assert ledger.get_actuals("f", ["a", "b"]) == [1, None]
    assert ledger.get_factor("m") == 1.5
    assert ledger.get_limit("m") == 1000
    assert ledger.recent_usage() == [{"n": 1}]
    ledger.close()
    assert len(ledger_warnings(caplog_ledger)) == 1


# Falling back to memory: the directory breaks while open.


def write_garbage_over_db(directory: Path) -> None:
    (directory / "cache.db").write_bytes(os.urandom(8192))


def delete_directory(directory: Path) -> None:
    shutil.rmtree(directory)


OPERATIONS: list[Any] = [
    pytest.param(lambda ledger: ledger.get_actual("f", "a"), id="get_actual"),
    pytest.param(lambda ledger: ledger.get_actuals("f", ["a", "b"]), id="get_actuals"),
    pytest.param(lambda ledger: ledger.put_actuals("f", {"c": 3}), id="put_actuals"),
    pytest.param(lambda ledger: ledger.get_factor("m"), id="get_factor"),
    pytest.param(lambda ledger: ledger.set_factor("m", 2.0), id="set_factor"),
    pytest.param(lambda ledger: ledger.get_limit("m"), id="get_limit"),
    pytest.param(lambda ledger: ledger.set_limit("m", 99), id="set_limit"),
    pytest.param(lambda ledger: ledger.append_usage({"n": 2}), id="append_usage"),
    pytest.param(lambda ledger: ledger.recent_usage(), id="recent_usage"),
]


def populate_session(ledger: Ledger) -> None:
    ledger.put_actuals("f", {"a": 1})
    ledger.set_factor("m", 1.5)
    ledger.set_limit("m", 1000)
    ledger.append_usage({"n": 1})


def check_session_kept(ledger: Ledger) -> None:
    """What this session wrote before the switch is still there, and memory takes new writes."""
    assert ledger.get_actual("f", "a") == 1
    assert ledger.get_factor("m") in (1.5, 2.0)
    assert ledger.get_limit("m") in (1000, 99)
    assert ledger.recent_usage()[0] == {"n": 1}
    ledger.put_actuals("f", {"z": 26})
    assert ledger.get_actuals("f", ["z", "a"]) == [26, 1]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(write_garbage_over_db, id="garbage-over-db"),
        pytest.param(delete_directory, id="directory-deleted"),
    ],
)
def test_spoiled_while_open_falls_back(
    tmp_path: Path,
    caplog_ledger: pytest.LogCaptureFixture,
    spoil: Callable[[Path], None],
    operation: Callable[[Ledger], object],
) -> None:
    directory = tmp_path / "l"
    ledger = Ledger(directory)
    populate_session(ledger)
    spoil(directory)

    # SQLite keeps serving the connection it already has (its pages, its unlinked inode), so
    # the damage shows on the next connection: diskcache opens one per thread.
    in_new_thread(lambda: operation(ledger))

    assert not ledger.persistent
    [warning] = ledger_warnings(caplog_ledger)
    assert str(directory) in warning.getMessage()
    check_session_kept(ledger)
    ledger.close()
    assert len(ledger_warnings(caplog_ledger)) == 1


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


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        pytest.param(close_connection_first, "ProgrammingError", id="connection-closed"),
        pytest.param(
            raising(sqlite3.DatabaseError("database disk image is malformed")),
            "DatabaseError: database disk image is malformed",
            id="malformed",
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
        pytest.param(raising(diskcache.Timeout()), "Timeout", id="timeout"),
        pytest.param(
            raising(pickle.UnpicklingError("invalid load key")),
            "UnpicklingError: invalid load key",
            id="unpickling",
        ),
        pytest.param(raising(EOFError("Ran out of input")), "EOFError", id="eof"),
    ],
)
def test_failing_operation_falls_back(
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

    assert not ledger.persistent
    [warning] = ledger_warnings(caplog_ledger)
    assert str(directory) in warning.getMessage()
    assert reason in warning.getMessage()
    for other in OPERATIONS:  # Nothing raises, nothing warns again.
        other.values[0](ledger)
    check_session_kept(ledger)
    ledger.close()
    assert len(ledger_warnings(caplog_ledger)) == 1


def test_failure_in_one_thread_switches_all(
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
    assert not ledger.persistent
    assert len(ledger_warnings(caplog_ledger)) == 1
    check_session_kept(ledger)
    ledger.close()
