"""The persistent ledger: what the LLM APIs really counted, and what tokengauge learned from it.

The ledger keeps the token counts the APIs report per message digest, calibration's documents and a
learned context limit per model, JSON documents (discovered models, the most asked strings) and the
usage history, one record per request, kept for as many days as the caller says
(`drop_usage_before`). It lives in a `diskcache.Cache` and a table beside it (`ledger.disk`,
`ledger.history`), shared by every tokengauge process using the same directory (each VS Code
window runs one), with bounded in-memory stores in front: everything written or read this session
is kept there too, so nothing learned is lost whatever happens to the disk.

Processes sharing the directory add to it without overwriting each other: a usage record is one
row inserted; a document that accumulates what is learned (calibration's fit, its observed
ratios) is changed by `update_document`, a read-modify-write in one transaction applied to what
the disk holds, so the other windows' learning is merged, not replaced. A change made while the
disk is busy is applied again to the disk's document when it is free.

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

Keys are strings (``actual␟family␟digest``, ``limit␟model``, ``document␟name``, joined by
U+001F; diskcache would pickle tuples). Values are ints, floats and JSON
text; nothing is pickled, and the ledger never receives secrets.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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
from tokengauge.ledger.history import Entry, Match, decode, entry, split_lines, sums

log = logging.getLogger(__name__)

MEMORY_ACTUALS_LIMIT: Final = 250_000
"""Entries of the in-memory actuals store (LRU)."""
MEMORY_OTHER_LIMIT: Final = 16_384
"""Entries of the in-memory store of limits and documents (LRU)."""
MEMORY_USAGE_LIMIT: Final = 50_000
"""Usage records kept in memory (this session's, or a read-only ledger's newest)."""
MAX_REBUILDS: Final = 3
"""Rebuilds of a damaged or vanished directory in one session before memory takes over."""

_MAX_SQLITE_INT: Final = 2**63 - 1
LEDGER_DIR: Final = "ledger"
"""The ledger's folder under the server's storage directory."""
_SEPARATOR: Final = "\x1f"
_ACTUAL: Final = "actual"

_T = TypeVar("_T")


def _key(kind: str, *parts: str) -> str:
    return _SEPARATOR.join((kind, *parts))


class Ledger:
    """API actuals by message digest, learned limits and documents per model, recent usage."""

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

    # Reading and writing, by kind.

    def get_actual(self, family: str, digest: str) -> int | None:
        """The token count the API reported for `digest` under tokenizer `family`, if known."""
        return self.get_actuals(family, [digest])[0]

    def get_actuals(self, family: str, digests: Sequence[str]) -> list[int | None]:
        """`get_actual` for each of `digests`, in order."""
        keys = [_key(_ACTUAL, family, digest) for digest in digests]
        if not keys:
            return []

        found = self._read(lambda store: [store.cache.get(key) for key in keys])
        with self._lock:
            values: list[int | None] = []
            for index, key in enumerate(keys):
                value = found[index] if found is not None and key not in self._dirty else None
                if _is_count(value):
                    self._actuals[key] = value
                    values.append(value)
                else:
                    values.append(self._actuals.get(key))
            return values

    def put_actuals(self, family: str, actuals: Mapping[str, int]) -> None:
        """Record the reported token count of each digest; counts that are not ints are skipped."""
        items = {
            _key(_ACTUAL, family, digest): count
            for digest, count in actuals.items()
            if _is_count(count)
        }
        if len(items) != len(actuals):
            log.debug("ledger: skipped %d counts that are not ints", len(actuals) - len(items))
        with self._lock:
            self._actuals.update(items)
            self._mark_dirty(items)
        self._flush()

    def get_limit(self, model_id: str) -> int | None:
        """The context limit learned for `model_id`, if any."""
        value = self._get_other(_key("limit", model_id))
        return value if _is_count(value) else None

    def set_limit(self, model_id: str, limit: int) -> None:
        """Record the context limit for `model_id`; a limit that is not an int is ignored."""
        if not _is_count(limit):
            log.debug("ledger: ignored limit %r for %s", limit, model_id)
            return
        self._set_other(_key("limit", model_id), limit)

    def get_document(self, name: str) -> object | None:
        """A JSON document stored under `name` (e.g. a provider's discovered models), if any."""
        return _loads(self._get_other(_key("document", name)))

    def set_document(self, name: str, value: object) -> None:
        """Store a JSON-able document under `name`; TypeError if it is not JSON-able."""
        self._set_other(_key("document", name), _dumps(value))

    def update_document(self, name: str, change: Callable[[object], object]) -> object:
        """Change the document under `name` by `change` (the stored document, None if there is
        none, to the new one) and return the new one: on the disk in one transaction, so what
        other processes stored meanwhile is changed rather than overwritten; in memory (and on
        the disk once it is free) when the disk is busy. TypeError if the result is not JSON-able.
        """
        key = _key("document", name)
        store = self._usable()
        if store is not None and not self._read_only:
            with self._lock:
                if key not in self._changes:  # nothing of this key waits: change the disk's
                    try:
                        return self._change_on_disk(store, key, [change], pending=False)
                    except Exception as exc:
                        self._failed(store, exc)
        with self._lock:
            new = change(_loads(self._other.get(key)))
            self._other[key] = _dumps(new)
            if self._store is not None and not self._read_only:
                self._changes.setdefault(key, []).append(change)
        return new

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
            document = _loads(self._other.get(key) if stored is None else stored)
            if stored is None and pending:
                changes = []
            for change in changes:
                document = change(document)
            text = _dumps(document)
            store.cache.set(key, text)
        self._other[key] = text
        self._dirty.pop(key, None)
        return document

    def append_usage(self, record: Mapping[str, object]) -> None:
        """Append a usage record (its `time` says when it ended; now if it has none); TypeError
        if it is not JSON-able. It is on the disk when this returns, unless the disk is busy."""
        item = entry(record, time.time())
        with self._lock:
            self._usage.append(item)
            if self._store is not None and not self._read_only:
                self._dirty_usage.append(item)
        self._flush()

    def recent_usage(
        self,
        limit: int | None = None,
        *,
        since: float | None = None,
        fields: Mapping[str, str] | None = None,
    ) -> list[dict[str, object]]:
        """The newest `limit` usage records (all when None), newest last: those that ended at
        `since` or later, with the given exact `fields` values, when these are given."""
        if limit is not None and limit <= 0:
            return []
        match = Match(since, fields or {})
        stored = self._read(lambda store: store.usage.read(match, limit))
        with self._lock:
            entries = list(self._usage) if stored is None else stored + self._dirty_usage
        records = [
            record
            for item in entries
            if (record := decode(item.line)) is not None and match.admits(item, record)
        ]
        return records if limit is None else records[-limit:]

    def usage_sums(
        self,
        names: Sequence[str],
        *,
        since: float | None = None,
        fields: Mapping[str, str] | None = None,
    ) -> dict[str, float | None]:
        """The sum of each numeric field `names` over the records `recent_usage` would give for
        `since` and `fields` (None where none has a number), without decoding them all."""
        match = Match(since, fields or {})
        stored = self._read(lambda store: store.usage.sums(match, names))
        with self._lock:
            if stored is None:
                return sums(self._usage, match, names)
            waiting = sums(self._dirty_usage, match, names)
        return {name: _add(stored[name], waiting[name]) for name in names}

    def drop_usage_before(self, oldest: float) -> None:
        """Forget the usage records that ended before `oldest` (a Unix time), on disk too."""
        with self._lock:
            kept = (item for item in self._usage if item.time >= oldest)
            self._usage = collections.deque(kept, maxlen=MEMORY_USAGE_LIMIT)
            self._dirty_usage = [item for item in self._dirty_usage if item.time >= oldest]
        store = self._usable()
        if store is None or self._read_only:
            return
        try:
            store.usage.drop_before(oldest)
        except Exception as exc:
            self._failed(store, exc)

    @contextlib.contextmanager
    def batched(self) -> Iterator[None]:
        """Within the block, what is written waits in memory and goes to the disk in one
        transaction at its end (usage records still go at once): a write per model of 100,000
        took minutes."""
        with self._lock:
            self._batching += 1
        try:
            yield
        finally:
            with self._lock:
                self._batching -= 1
            self._flush()

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

    # The memory stores in front of the disk.

    def _get_other(self, key: str) -> object:
        found = self._read(lambda store: store.cache.get(key))
        with self._lock:
            if found is not None and key not in self._dirty and key not in self._changes:
                self._other[key] = found
            return self._other.get(key)

    def _set_other(self, key: str, value: object) -> None:
        with self._lock:
            self._other[key] = value
            self._mark_dirty([key])
        self._flush()

    def _mark_dirty(self, keys: Iterable[str]) -> None:
        """Note keys the disk has yet to get (none without a writable disk); call with the lock."""
        if self._store is None or self._read_only:
            return
        self._dirty.update(dict.fromkeys(keys))
        if len(self._dirty) > MEMORY_ACTUALS_LIMIT + MEMORY_OTHER_LIMIT:  # a long wait: forget
            self._dirty = {k: None for k in self._dirty if self._memory_value(k) is not None}

    def _memory_value(self, key: str) -> object:
        return self._actuals.get(key) if key.startswith(_ACTUAL) else self._other.get(key)

    # The disk, and what to do when it fails.

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
            elif key.startswith(_ACTUAL) and _is_count(value):
                self._actuals[key] = value
            else:
                self._other[key] = value
        return opening.store


_WHAT: Final = {Failure.DAMAGED: "damaged", Failure.GONE: "deleted or replaced"}


def _is_count(value: object) -> TypeGuard[int]:
    """A non-negative int that SQLite can store as an INTEGER (bool is not a count)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_SQLITE_INT


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _loads(stored: object) -> object:
    """A stored document (None for anything that is not JSON text)."""
    if not isinstance(stored, str):
        return None
    try:
        document: object = json.loads(stored)
    except ValueError:
        return None
    return document


def _add(a: float | None, b: float | None) -> float | None:
    return a if b is None else b if a is None else a + b
