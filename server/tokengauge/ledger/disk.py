"""The ledger's directory: opening it, telling its failures apart, repairing what can be repaired.

The store is a `diskcache.Cache` in SQLite's rollback-journal mode, not WAL: in WAL mode SQLite
memory-maps the `-shm` index whatever `mmap_size` says, and a file truncated or made immutable by
someone else then kills the process with SIGBUS. Without it no page is mapped, and damage is an
exception like any other. Writes are batched (one transaction each) and culled afterwards; reads
write nothing.

The usage history is a table of the same database (`ledger.history`), one row per request.

Failures fall into kinds that call for different answers (see `Failure`): another process holding
the lock for a while is no reason to give up the disk; a damaged database is moved aside and a
fresh one built; a directory that was deleted or replaced is built again; a read-only one is still
read.
"""

from __future__ import annotations

import enum
import errno
import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

import attrs
import diskcache

from tokengauge.ledger.history import Entry, UsageTable, read_only_entries, split_lines

log = logging.getLogger(__name__)

TIMINGS_VARIABLE: Final = "TOKENGAUGE_LEDGER_TIMINGS"
"""A test hook, not a setting: a JSON object of `LedgerTimings` fields the language server's
ledger uses instead of the defaults, so that tests of a real server need not wait out seconds of
lock handling."""
DB_NAME: Final = "cache.db"
OLD_USAGE_KEY: Final = "usage"
"""Where an older ledger kept its usage history: one diskcache value of JSON lines."""


def _seconds(default: float) -> float:
    return attrs.field(
        default=default,
        validator=[attrs.validators.instance_of((int, float)), attrs.validators.ge(0)],
    )


@attrs.frozen(kw_only=True)
class LedgerTimings:
    """How long the ledger waits on a disk another process holds, in seconds (the defaults
    serve; tests shorten them)."""

    statement: float = _seconds(1.0)
    """How long one SQLite statement waits on another process's lock (diskcache's default is
    60 s)."""
    usage: float = _seconds(5.0)
    """…and how long a usage record waits: a request's record is worth a slower answer (a
    record left waiting in memory is lost if the process is killed)."""
    opening: float = _seconds(15.0)
    """How long opening waits out a lock held by another process before reading without
    writing."""
    closing: float = _seconds(2.0)
    """How long closing goes on trying a locked disk for what still waits (the language client
    kills a server that has not exited about 4 s after asking it to stop)."""
    busy_pause: float = _seconds(5.0)
    """How long the disk is left alone after another process held its lock too long."""


USUAL_TIMINGS: Final = LedgerTimings()


def timings_from_environment(environ: Mapping[str, str] = os.environ) -> LedgerTimings:
    """The timings `TIMINGS_VARIABLE` gives (e.g. `{"busy_pause": 0.2}`), else the defaults."""
    text = environ.get(TIMINGS_VARIABLE)
    if not text:
        return USUAL_TIMINGS
    try:
        fields = json.loads(text)
        if not isinstance(fields, dict):
            raise TypeError(f"not a JSON object: {text}")
        return LedgerTimings(**fields)
    except (ValueError, TypeError) as exc:
        log.warning("%s ignored (%s): the ledger waits as usual", TIMINGS_VARIABLE, reason(exc))
        return USUAL_TIMINGS


class Failure(enum.Enum):
    """What an exception from the store means for the ledger."""

    BUSY = "busy"  # another process holds the lock: try again later
    DAMAGED = "damaged"  # the database is not a database any more: move it aside, rebuild
    GONE = "gone"  # the directory or database was deleted or replaced: rebuild
    READ_ONLY = "read-only"  # writes are refused: keep reading, keep new data in memory
    BROKEN = "broken"  # anything else (disk full, I/O errors): memory for this session


def classify(exc: BaseException) -> Failure:
    """The kind of failure `exc` is."""
    text = str(exc).lower()
    if isinstance(exc, diskcache.Timeout) or "locked" in text or "busy" in text:
        return Failure.BUSY
    if isinstance(exc, sqlite3.OperationalError):
        if "readonly" in text or "read-only" in text:
            return Failure.READ_ONLY
        if "no such table" in text:
            return Failure.DAMAGED  # emptied (truncated) under us
        if "unable to open" in text:
            return Failure.GONE
        return Failure.BROKEN
    if isinstance(exc, sqlite3.DatabaseError):
        return Failure.DAMAGED
    if isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return Failure.READ_ONLY
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return Failure.GONE
    return Failure.BROKEN


def reason(exc: BaseException) -> str:
    """`Type: message` of an exception, for a log line."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class DiskStore:
    """One open diskcache directory, and the identity of its database file when it was opened."""

    def __init__(self, directory: Path, size_limit_bytes: int, timings: LedgerTimings) -> None:
        """Open (or create) the store; raises whatever diskcache or SQLite raise."""
        self.directory = directory
        self.cache = diskcache.Cache(
            str(directory),
            timeout=timings.statement,
            size_limit=size_limit_bytes,
            # Reads never write (least-recently-used would, on every read, and each write is a
            # journalled commit); each response stores its messages' actuals again, so entries
            # in use stay recent anyway.
            eviction_policy="least-recently-stored",
            cull_limit=0,  # culled after each write batch instead, outside its transaction
            sqlite_journal_mode="delete",  # no WAL: nothing memory-mapped (see the docstring)
            sqlite_mmap_size=0,
        )
        try:
            self.usage = UsageTable(directory / DB_NAME, timings.usage)
            self._adopt_old_usage(time.time())
        except BaseException:
            self.cache.close()
            raise
        self._identity = _identity(directory / DB_NAME)

    def _adopt_old_usage(self, now: float) -> None:
        """Move an older ledger's usage value into the table (once), then remove it."""
        old = self.cache.get(OLD_USAGE_KEY)
        if old is None:
            return
        self.usage.adopt(split_lines(old), now)
        self.cache.delete(OLD_USAGE_KEY)

    def still_there(self) -> bool:
        """Whether the database file is the one opened (not deleted, not replaced)."""
        return _identity(self.directory / DB_NAME) == self._identity

    def write(self, items: dict[str, object]) -> None:
        """Store all `items` in one transaction, then evict down to the size limit."""
        with self.cache.transact():
            for key, value in items.items():
                self.cache.set(key, value)
        self.cache.cull()

    def close(self) -> None:
        """Close, never raising."""
        try:
            self.usage.close()
            self.cache.close()
        except Exception as exc:
            log.debug("ledger at %s did not close cleanly: %s", self.directory, reason(exc))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_dev, status.st_ino


def move_aside(directory: Path) -> Path | None:
    """Rename a damaged ledger directory to `<name>.damaged-<time>`; None if it cannot be."""
    target = directory.with_name(f"{directory.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        directory.rename(target)
    except OSError as exc:
        log.debug("cannot move %s aside: %s", directory, reason(exc))
        return None
    return target


def try_open(directory: Path, size_limit_bytes: int, timings: LedgerTimings) -> DiskStore | None:
    """A store in `directory`, or None (logged at debug) if it cannot be opened."""
    try:
        return DiskStore(directory, size_limit_bytes, timings)
    except Exception as exc:
        log.debug("ledger at %s cannot be opened: %s", directory, reason(exc))
        return None


@attrs.frozen
class Opening:
    """How opening a ledger directory went: the store (None: memory), a read-only ledger's rows
    and usage records to keep in memory, the kind of trouble (if any) and what to say about it."""

    store: DiskStore | None
    message: str
    failure: Failure | None = None
    rows: list[tuple[str, object]] = attrs.field(factory=list)
    usage: list[Entry] = attrs.field(factory=list)


def open_store(
    directory: Path, size_limit_bytes: int, timings: LedgerTimings, row_limit: int, usage_limit: int
) -> Opening:
    """Open the ledger in `directory`; a damaged one is moved aside and a new one started, a
    read-only one is read (at most `row_limit` rows and `usage_limit` usage records); one
    locked by another process (another window starting at the same moment) is waited for
    (`timings.opening`)."""
    deadline = time.monotonic() + timings.opening
    while True:
        try:
            opened = DiskStore(directory, size_limit_bytes, timings)
            return Opening(opened, f"ledger at {directory} opened")
        except Exception as exc:
            failure = exc
        if classify(failure) is not Failure.BUSY or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if classify(failure) is Failure.DAMAGED and (moved := move_aside(directory)) is not None:
        store = try_open(directory, size_limit_bytes, timings)
        if store is not None:
            return Opening(
                store,
                f"ledger at {directory} was damaged ({reason(failure)}); moved it to {moved} "
                "and started a new one",
                Failure.DAMAGED,
            )
    try:
        rows, usage = read_only(directory, row_limit, usage_limit)
    except Exception as exc:
        log.debug("ledger at %s cannot be read either: %s", directory, reason(exc))
    else:
        return Opening(
            None,
            f"ledger at {directory} cannot be written ({reason(failure)}); using its "
            f"{len(rows)} entries, and what this session learns stays in memory",
            Failure.READ_ONLY,
            rows,
            usage,
        )
    return Opening(
        None,
        f"ledger at {directory} cannot be opened ({reason(failure)}); using memory for this "
        "session",
        Failure.BROKEN,
    )


def read_only(
    directory: Path, limit: int, usage_limit: int
) -> tuple[list[tuple[str, object]], list[Entry]]:
    """The newest `limit` rows and `usage_limit` usage records of a ledger that cannot be
    written, read without changing it."""
    database = directory / DB_NAME
    uri = f"{database.resolve().as_uri()}?mode=ro&immutable=1"
    connection = sqlite3.connect(uri, uri=True)
    try:
        rows = connection.execute(
            "SELECT key, mode, filename, value FROM Cache WHERE raw = 1 "
            "ORDER BY access_time DESC LIMIT ?",
            (limit,),
        ).fetchall()
        usage = read_only_entries(connection, usage_limit)
    finally:
        connection.close()
    return list(_values(directory, rows)), usage


def _values(directory: Path, rows: list[tuple[object, ...]]) -> Iterator[tuple[str, object]]:
    """The keys and values of diskcache rows (text kept in files read from them)."""
    for key, mode, filename, value in rows:
        if not isinstance(key, str):
            continue
        if mode == diskcache.core.MODE_RAW and isinstance(value, (int, float, str)):
            yield key, value
        elif mode == diskcache.core.MODE_TEXT and isinstance(filename, str):
            try:
                yield key, (directory / filename).read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
