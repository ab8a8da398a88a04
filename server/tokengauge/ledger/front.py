"""The ledger's memory in front of its disk store, and what happens when the disk fails.

Everything written or read this session is kept in memory too, so nothing learned is lost whatever
happens to the disk; what the disk has yet to get is written in one transaction when it can take it.

The disk must never take the server down, nor lose what it holds for a passing reason:
- another process holding the lock (SQLite waits 1 s): this call is served from memory, writes
  wait in memory, and the disk is tried again after a pause (`LedgerTimings.busy_pause`);
- a damaged database (at start or later): the directory is moved aside (`ledger.damaged-<time>`),
  a fresh one is built and what memory holds is written to it, with a warning;
- the directory deleted or replaced while running (noticed before each write): built again and
  filled from memory, with a warning;
- a read-only directory: its data is read (at start, from a read-only snapshot if it cannot even
  be opened), what this session learns stays in memory, with a warning;
- anything else (disk full, I/O errors): memory for the rest of the session, with a warning.
Each kind of trouble is logged once, naming the directory and the reason.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final, TypeGuard, TypeVar

import cachetools

from tokengauge.ledger.disk import (
    OLD_USAGE_KEY,
    USUAL_TIMINGS,
    DiskStore,
    Failure,
    LedgerTimings,
    classify,
    move_aside,
    open_store,
    reason,
    try_open,
)
from tokengauge.ledger.history import Entry, decode, entry, split_lines

log = logging.getLogger("tokengauge.ledger.store")  # the ledger speaks under one name

MEMORY_ACTUALS_LIMIT: Final = 250_000
"""Entries of the in-memory actuals store (LRU)."""
MEMORY_OTHER_LIMIT: Final = 16_384
"""Entries of the in-memory store of limits and documents (LRU)."""
MEMORY_USAGE_LIMIT: Final = 50_000
"""Usage records kept in memory (this session's, or a read-only ledger's newest)."""
MAX_REBUILDS: Final = 3
"""Rebuilds of a damaged or vanished directory in one session before memory takes over."""

_MAX_SQLITE_INT: Final = 2**63 - 1
ACTUAL: Final = "actual"
"""The kind of key under which the APIs' counts are kept (the others are limits and documents)."""

_T = TypeVar("_T")


class DiskFront:
    """Memory in front of a disk store: what waits for the disk, and the disk's failures."""

    def __init__(
        self,
        directory: Path | None,
        *,
        size_limit_bytes: int = 256 * 2**20,
        timings: LedgerTimings = USUAL_TIMINGS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Open the ledger in `directory`, or keep it in memory only when `directory` is None;
        `timings`: how long it waits on a disk another process holds."""
        if size_limit_bytes <= 0:
            raise ValueError(f"size_limit_bytes must be positive, not {size_limit_bytes}")
        self._directory = directory
        self._size_limit = size_limit_bytes
        self._timings = timings
        self._clock = clock
        self._lock = threading.RLock()
        self._actuals: cachetools.LRUCache[str, int] = cachetools.LRUCache(MEMORY_ACTUALS_LIMIT)
        self._other: cachetools.LRUCache[str, object] = cachetools.LRUCache(MEMORY_OTHER_LIMIT)
        self._usage: collections.deque[Entry] = collections.deque(maxlen=MEMORY_USAGE_LIMIT)
        self._dirty: dict[str, None] = {}  # keys written to memory, not yet to disk
        self._changes: dict[str, list[Callable[[object], object]]] = {}  # documents' changes
        self._dirty_usage: list[Entry] = []
        self._batching = 0  # `batched` blocks open
        self._store: DiskStore | None = None
        self._read_only = False
        self._paused_until = 0.0
        self._warned: set[Failure] = set()
        self._rebuilds = 0
        if directory is not None:
            self._store = self._open(directory)

    @property
    def persistent(self) -> bool:
        """Whether what is learned now reaches the directory (False in memory or read-only)."""
        return self._store is not None and not self._read_only

    @property
    def directory(self) -> Path | None:
        """The directory the ledger was asked to use, even after falling back to memory."""
        return self._directory

    def close(self) -> None:
        """Write what is still waiting (trying a locked disk for up to `timings.closing`
        seconds), then close the disk store; memory keeps working."""
        deadline = time.monotonic() + self._timings.closing
        while True:
            self._paused_until = 0.0  # what waits for a lock must not be lost at the end
            self._flush()
            if not self._waiting() or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        with self._lock:
            store, self._store = self._store, None
        if store is not None:
            store.close()

    def _waiting(self) -> bool:
        """Whether anything still waits for a disk that can take it (a read-only one cannot)."""
        with self._lock:
            return (
                self._store is not None
                and not self._read_only
                and bool(self._dirty or self._changes or self._dirty_usage)
            )

    def _mark_dirty(self, keys: Iterable[str]) -> None:
        """Note keys the disk has yet to get (none without a writable disk); call with the lock."""
        if self._store is None or self._read_only:
            return
        self._dirty.update(dict.fromkeys(keys))
        if len(self._dirty) > MEMORY_ACTUALS_LIMIT + MEMORY_OTHER_LIMIT:  # a long wait: forget
            self._dirty = {k: None for k in self._dirty if self._memory_value(k) is not None}

    def _memory_value(self, key: str) -> object:
        return self._actuals.get(key) if key.startswith(ACTUAL) else self._other.get(key)

    def _usable(self) -> DiskStore | None:
        return self._store if self._clock() >= self._paused_until else None

    def _read(self, action: Callable[[DiskStore], _T]) -> _T | None:
        """`action` on the disk store; None without one or if it failed (then the failure is
        handled and memory answers)."""
        store = self._usable()
        if store is None:
            return None
        try:
            return action(store)
        except Exception as exc:
            self._failed(store, exc)
            return None

    def _flush(self) -> None:
        """Write what memory holds and the disk does not, in one transaction (or keep waiting)."""
        store = self._usable()
        if store is None or self._read_only:
            return
        with self._lock:
            if not store.still_there():
                self._rebuild(store, Failure.GONE, "its database was deleted or replaced")
                return
            items = {} if self._batching else {k: self._memory_value(k) for k in self._dirty}
            usage = list(self._dirty_usage)
            try:
                if usage:  # first: it waits longer for a lock (`timings.usage`)
                    store.usage.append(usage)
                    del self._dirty_usage[: len(usage)]
                if items:
                    store.write({k: v for k, v in items.items() if v is not None})
                for key in items:
                    self._dirty.pop(key, None)
                for key, changes in [] if self._batching else list(self._changes.items()):
                    self._change_on_disk(store, key, changes, pending=True)
                    del self._changes[key]
            except Exception as exc:
                self._failed(store, exc)

    def _failed(self, store: DiskStore, exc: Exception) -> None:
        kind = classify(exc)
        if kind is Failure.GONE and store.still_there():
            kind = Failure.READ_ONLY  # its journal cannot be created next to it
        elif kind is Failure.READ_ONLY and not store.still_there():
            kind = Failure.GONE  # SQLite refuses to write a database file deleted under it
        if kind is Failure.BUSY:
            self._paused_until = self._clock() + self._timings.busy_pause
            self._warn(kind, "is locked by another process (%s); data waits in memory", exc)
        elif kind is Failure.READ_ONLY:
            self._read_only = True
            self._warn(kind, "is read-only (%s); what this session learns stays in memory", exc)
        elif kind in (Failure.DAMAGED, Failure.GONE):
            self._rebuild(store, kind, reason(exc))
        else:
            self._give_up(store, reason(exc))

    def _rebuild(self, store: DiskStore, kind: Failure, why: str) -> None:
        """Replace a damaged or vanished store by a fresh one holding what memory holds."""
        with self._lock:
            if self._store is not store:
                return  # another thread did it already
            self._rebuilds += 1
            if self._rebuilds > MAX_REBUILDS:
                self._give_up(store, f"{why}, again after {MAX_REBUILDS} rebuilds")
                return
            store.close()
            self._store = None
            assert self._directory is not None
            moved = move_aside(self._directory) if kind is Failure.DAMAGED else None
            fresh = try_open(self._directory, self._size_limit, self._timings)
            if fresh is None:
                self._give_up(None, why)
                return
            self._store = fresh
            self._dirty.update(dict.fromkeys([*self._actuals.keys(), *self._other.keys()]))
            self._changes.clear()  # memory's documents hold them
            self._dirty_usage = list(self._usage)
        where = f"; the damaged one is at {moved}" if moved else ""
        self._warn(
            kind, "was %s (%s); rebuilt it from this session's data%s", _WHAT[kind], why, where
        )
        self._flush()

    def _give_up(self, store: DiskStore | None, why: str) -> None:
        with self._lock:
            if store is not None and self._store is not store:
                return
            if self._store is not None:
                self._store.close()
            self._store = None
            self._dirty.clear()
            self._changes.clear()
            self._dirty_usage.clear()
        self._warn(Failure.BROKEN, "failed (%s); using memory for the rest of this session", why)

    def _warn(self, kind: Failure, message: str, *args: object) -> None:
        """One warning per kind of trouble, naming the directory (exceptions as their reason)."""
        if kind not in self._warned:
            self._warned.add(kind)
            shown = [reason(a) if isinstance(a, BaseException) else a for a in args]
            log.warning("ledger at %s " + message, self._directory, *shown)

    # Opening.

    def _open(self, directory: Path) -> DiskStore | None:
        opening = open_store(
            directory, self._size_limit, self._timings, MEMORY_ACTUALS_LIMIT, MEMORY_USAGE_LIMIT
        )
        log.log(logging.WARNING if opening.failure else logging.DEBUG, "%s", opening.message)
        if opening.failure is not None:
            self._warned.add(opening.failure)
        self._usage.extend(opening.usage)
        for key, value in reversed(opening.rows):  # oldest first: the newest end most recent
            if key == OLD_USAGE_KEY:  # an older ledger's history, read-only
                lines = split_lines(value)
                self._usage.extend(entry(r, 0.0) for r in map(decode, lines) if r is not None)
            elif key.startswith(ACTUAL) and is_count(value):
                self._actuals[key] = value
            else:
                self._other[key] = value
        return opening.store

    def _change_on_disk(
        self,
        store: DiskStore,
        key: str,
        changes: Sequence[Callable[[object], object]],
        *,
        pending: bool,
    ) -> object:
        """Apply `changes` to the disk's document in one transaction (to memory's when the disk
        has none; `pending`: memory's has them already); memory then holds the result. Call
        with the lock."""
        with store.cache.transact():
            stored = store.cache.get(key)
            document = loads(self._other.get(key) if stored is None else stored)
            if stored is None and pending:
                changes = []
            for change in changes:
                document = change(document)
            text = dumps(document)
            store.cache.set(key, text)
        self._other[key] = text
        self._dirty.pop(key, None)
        return document


_WHAT: Final = {Failure.DAMAGED: "damaged", Failure.GONE: "deleted or replaced"}


def is_count(value: object) -> TypeGuard[int]:
    """A non-negative int that SQLite can store as an INTEGER (bool is not a count)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_SQLITE_INT


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def loads(stored: object) -> object:
    """A stored document (None for anything that is not JSON text)."""
    if not isinstance(stored, str):
        return None
    try:
        document: object = json.loads(stored)
    except ValueError:
        return None
    return document
