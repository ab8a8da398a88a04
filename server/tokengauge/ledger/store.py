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

What happens when the disk fails is `ledger.front`'s business.

Keys are strings (``actual␟family␟digest``, ``limit␟model``, ``document␟name``, joined by
U+001F; diskcache would pickle tuples). Values are ints, floats and JSON
text; nothing is pickled, and the ledger never receives secrets.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final

from tokengauge.ledger.front import ACTUAL, MEMORY_USAGE_LIMIT, DiskFront, dumps, is_count, loads
from tokengauge.ledger.history import Match, decode, entry, sums

log = logging.getLogger(__name__)

LEDGER_DIR: Final = "ledger"
"""The ledger's folder under the server's storage directory."""
_SEPARATOR: Final = "\x1f"


def _key(kind: str, *parts: str) -> str:
    return _SEPARATOR.join((kind, *parts))


class Ledger(DiskFront):
    """API actuals by message digest, learned limits and documents per model, recent usage."""

    # Reading and writing, by kind.

    def get_actual(self, family: str, digest: str) -> int | None:
        """The token count the API reported for `digest` under tokenizer `family`, if known."""
        return self.get_actuals(family, [digest])[0]

    def get_actuals(self, family: str, digests: Sequence[str]) -> list[int | None]:
        """`get_actual` for each of `digests`, in order."""
        keys = [_key(ACTUAL, family, digest) for digest in digests]
        if not keys:
            return []

        found = self._read(lambda store: [store.cache.get(key) for key in keys])
        with self._lock:
            values: list[int | None] = []
            for index, key in enumerate(keys):
                value = found[index] if found is not None and key not in self._dirty else None
                if is_count(value):
                    self._actuals[key] = value
                    values.append(value)
                else:
                    values.append(self._actuals.get(key))
            return values

    def put_actuals(self, family: str, actuals: Mapping[str, int]) -> None:
        """Record the reported token count of each digest; counts that are not ints are skipped."""
        items = {
            _key(ACTUAL, family, digest): count
            for digest, count in actuals.items()
            if is_count(count)
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
        return value if is_count(value) else None

    def set_limit(self, model_id: str, limit: int) -> None:
        """Record the context limit for `model_id`; a limit that is not an int is ignored."""
        if not is_count(limit):
            log.debug("ledger: ignored limit %r for %s", limit, model_id)
            return
        self._set_other(_key("limit", model_id), limit)

    def get_document(self, name: str) -> object | None:
        """A JSON document stored under `name` (e.g. a provider's discovered models), if any."""
        return loads(self._get_other(_key("document", name)))

    def set_document(self, name: str, value: object) -> None:
        """Store a JSON-able document under `name`; TypeError if it is not JSON-able."""
        self._set_other(_key("document", name), dumps(value))

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
            new = change(loads(self._other.get(key)))
            self._other[key] = dumps(new)
            if self._store is not None and not self._read_only:
                self._changes.setdefault(key, []).append(change)
        return new

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


def _add(a: float | None, b: float | None) -> float | None:
    return a if b is None else b if a is None else a + b
