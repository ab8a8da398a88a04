"""The persistent ledger: what the LLM APIs really counted, and what tokengauge learned from it.

The ledger keeps the token counts the APIs report per message digest, a correction factor and a
learned context limit per model, and a bounded history of recent usage records. It lives in a
`diskcache.Cache` (SQLite plus files, LRU eviction bounded by diskcache's own `size_limit`) and
is shared by every tokengauge process using the same directory.

The cache must never take the server down. If the directory cannot be created or opened, or the
database is corrupt, or any later operation raises, the ledger logs one warning naming the
directory and the reason and carries on from bounded in-memory stores for the rest of the
process. Every write also goes to memory, so what this session learned survives the switch.

Keys are strings (diskcache stores them as they are; tuples it would pickle on every lookup):
``actual␟family␟digest``, ``factor␟model``, ``limit␟model``, ``document␟name`` and ``usage``,
joined by the unit separator U+001F. Values are ints, floats
and, for documents and the history, JSON text; none of them is pickled, and the ledger never
receives secrets.
"""

from __future__ import annotations

import collections
import json
import logging
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, TypeGuard, TypeVar

import cachetools
import diskcache

log = logging.getLogger(__name__)

SQLITE_TIMEOUT_SECONDS: Final = 1.0
"""How long one SQLite statement waits on another process's lock (diskcache's default is 60 s)."""
MEMORY_ACTUALS_LIMIT: Final = 250_000
"""Entries of the in-memory actuals store (LRU)."""
MEMORY_MODELS_LIMIT: Final = 4_096
"""Entries of each in-memory per-model store (LRU)."""

_MAX_SQLITE_INT: Final = 2**63 - 1
LEDGER_DIR: Final = "ledger"
"""The ledger's folder under the server's storage directory."""
_USAGE_KEY: Final = "usage"
_SEPARATOR: Final = "\x1f"


def _key(kind: str, *parts: str) -> str:
    return _SEPARATOR.join((kind, *parts))


_T = TypeVar("_T")


class Ledger:
    """API actuals by message digest, factors and learned limits per model, recent usage."""

    def __init__(
        self,
        directory: Path | None,
        *,
        size_limit_bytes: int = 256 * 2**20,
        history_limit: int = 500,
    ) -> None:
        """Open the ledger in `directory`, or keep it in memory only when `directory` is None."""
        if size_limit_bytes <= 0:
            raise ValueError(f"size_limit_bytes must be positive, not {size_limit_bytes}")
        if history_limit < 0:
            raise ValueError(f"history_limit must not be negative, not {history_limit}")
        self._directory = directory
        self._history_limit = history_limit
        self._lock = threading.Lock()
        self._actuals: cachetools.LRUCache[tuple[str, str], int] = cachetools.LRUCache(
            MEMORY_ACTUALS_LIMIT
        )
        self._factors: cachetools.LRUCache[str, float] = cachetools.LRUCache(MEMORY_MODELS_LIMIT)
        self._limits: cachetools.LRUCache[str, int] = cachetools.LRUCache(MEMORY_MODELS_LIMIT)
        self._usage: collections.deque[str] = collections.deque(maxlen=history_limit)
        self._documents: cachetools.LRUCache[str, str] = cachetools.LRUCache(MEMORY_MODELS_LIMIT)
        self._cache: diskcache.Cache | None = None
        if directory is not None:
            self._cache = _open(directory, size_limit_bytes)

    @property
    def persistent(self) -> bool:
        """Whether the ledger is still backed by its directory (False once running from memory)."""
        return self._cache is not None

    @property
    def directory(self) -> Path | None:
        """The directory the ledger was asked to use, even after falling back to memory."""
        return self._directory

    def get_actual(self, family: str, digest: str) -> int | None:
        """The token count the API reported for `digest` under tokenizer `family`, if known."""
        value = self._on_disk(lambda cache: cache.get(_key("actual", family, digest)))
        if _is_count(value):
            return value
        with self._lock:
            return self._actuals.get((family, digest))

    def get_actuals(self, family: str, digests: Sequence[str]) -> list[int | None]:
        """`get_actual` for each of `digests`, in order."""
        keys = list(digests)
        if not keys:
            return []

        def read(cache: diskcache.Cache) -> list[object]:
            with cache.transact():  # One commit for the access-time updates of LRU eviction.
                return [cache.get(_key("actual", family, digest)) for digest in keys]

        found = self._on_disk(read) or [None] * len(keys)
        with self._lock:
            return [
                value if _is_count(value) else self._actuals.get((family, digest))
                for digest, value in zip(keys, found, strict=True)
            ]

    def put_actuals(self, family: str, actuals: Mapping[str, int]) -> None:
        """Record the reported token count of each digest; counts that are not ints are skipped."""
        items = [(digest, count) for digest, count in actuals.items() if _is_count(count)]
        if len(items) != len(actuals):
            log.debug("ledger: skipped %d counts that are not ints", len(actuals) - len(items))
        with self._lock:
            for digest, count in items:
                self._actuals[(family, digest)] = count

        def write(cache: diskcache.Cache) -> None:
            # One transaction per entry, on purpose: diskcache culls on every set while the
            # database's page count is over size_limit, and freed pages are only returned at
            # commit, so a batch in one transaction would evict ten entries per entry written.
            for digest, count in items:
                cache.set(_key("actual", family, digest), count)

        if items:
            self._on_disk(write)

    def get_factor(self, model_id: str) -> float | None:
        """The correction factor learned for `model_id`, if any."""
        value = self._on_disk(lambda cache: cache.get(_key("factor", model_id)))
        if _is_factor(value):
            return float(value)
        with self._lock:
            return self._factors.get(model_id)

    def set_factor(self, model_id: str, factor: float) -> None:
        """Record the correction factor for `model_id`; a factor that is not finite is ignored."""
        if not _is_factor(factor):
            log.debug("ledger: ignored factor %r for %s", factor, model_id)
            return
        value = float(factor)
        with self._lock:
            self._factors[model_id] = value
        self._on_disk(lambda cache: cache.set(_key("factor", model_id), value))

    def get_limit(self, model_id: str) -> int | None:
        """The context limit learned for `model_id`, if any."""
        value = self._on_disk(lambda cache: cache.get(_key("limit", model_id)))
        if _is_count(value):
            return value
        with self._lock:
            return self._limits.get(model_id)

    def set_limit(self, model_id: str, limit: int) -> None:
        """Record the context limit for `model_id`; a limit that is not an int is ignored."""
        if not _is_count(limit):
            log.debug("ledger: ignored limit %r for %s", limit, model_id)
            return
        with self._lock:
            self._limits[model_id] = limit
        self._on_disk(lambda cache: cache.set(_key("limit", model_id), limit))

    def append_usage(self, record: Mapping[str, object]) -> None:
        """Append a usage record, keeping the newest `history_limit`; TypeError if not JSON-able."""
        line = json.dumps(dict(record), separators=(",", ":"))  # Escapes every newline.
        if self._history_limit == 0:
            return
        with self._lock:
            self._usage.append(line)

        def write(cache: diskcache.Cache) -> None:
            with cache.transact():  # Atomic read-modify-write, also against other processes.
                lines = _split_lines(cache.get(_USAGE_KEY))
                lines.append(line)
                cache.set(_USAGE_KEY, "\n".join(lines[-self._history_limit :]))

        self._on_disk(write)

    def recent_usage(self, limit: int | None = None) -> list[dict[str, object]]:
        """The newest `limit` usage records (all kept when None), newest last."""
        if self._history_limit == 0 or (limit is not None and limit <= 0):
            return []
        stored = self._on_disk(lambda cache: cache.get(_USAGE_KEY))
        if isinstance(stored, str):
            lines = _split_lines(stored)
        else:
            with self._lock:
                lines = list(self._usage)
        records = [
            record for record in map(_decode, lines[-self._history_limit :]) if record is not None
        ]
        return records if limit is None else records[-limit:]

    def get_document(self, name: str) -> object | None:
        """A JSON document stored under `name` (e.g. a provider's discovered models), if any."""
        stored = self._on_disk(lambda cache: cache.get(_key("document", name)))
        if not isinstance(stored, str):
            with self._lock:
                stored = self._documents.get(name)
        if stored is None:
            return None
        try:
            document: object = json.loads(stored)
        except ValueError:
            return None
        return document

    def set_document(self, name: str, value: object) -> None:
        """Store a JSON-able document under `name`; TypeError if it is not JSON-able."""
        text = json.dumps(value, separators=(",", ":"))
        with self._lock:
            self._documents[name] = text
        self._on_disk(lambda cache: cache.set(_key("document", name), text))

    def close(self) -> None:
        """Close the disk store; the ledger keeps working from memory afterwards."""
        with self._lock:
            cache, self._cache = self._cache, None
        if cache is not None:
            try:
                cache.close()
            except Exception as exc:
                log.debug("ledger at %s did not close cleanly: %s", self._directory, _reason(exc))

    def _on_disk(self, action: Callable[[diskcache.Cache], _T]) -> _T | None:
        """Run `action` on the disk store; None without one, or if it raised (then fall back)."""
        cache = self._cache
        if cache is None:
            return None
        try:
            return action(cache)
        except Exception as exc:  # Anything at all: sqlite3, OSError, Timeout, unpickling.
            self._fall_back(cache, exc)
            return None

    def _fall_back(self, cache: diskcache.Cache, exc: Exception) -> None:
        with self._lock:
            ours = self._cache is cache  # Else another thread switched already, or closed.
            if ours:
                self._cache = None
        if not ours:
            return
        log.warning(
            "ledger at %s failed (%s); using memory for the rest of this session",
            self._directory,
            _reason(exc),
        )
        try:
            cache.close()
        except Exception as close_exc:
            log.debug("ledger at %s did not close: %s", self._directory, _reason(close_exc))


def _open(directory: Path, size_limit_bytes: int) -> diskcache.Cache | None:
    try:
        return diskcache.Cache(
            str(directory),
            timeout=SQLITE_TIMEOUT_SECONDS,
            size_limit=size_limit_bytes,
            eviction_policy="least-recently-used",
            # No memory-mapped I/O: an I/O error in a mapped page (say, the file truncated by
            # someone else) is a SIGBUS that kills the process instead of an exception.
            sqlite_mmap_size=0,
        )
    except Exception as exc:
        log.warning(
            "ledger at %s cannot be opened (%s); using memory for this session",
            directory,
            _reason(exc),
        )
        return None


def _reason(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _is_count(value: object) -> TypeGuard[int]:
    """A non-negative int that SQLite can store as an INTEGER (bool is not a count)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_SQLITE_INT


def _is_factor(value: object) -> TypeGuard[float]:
    """A finite int or float (SQLite would store NaN as NULL)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _split_lines(stored: object) -> list[str]:
    return stored.split("\n") if isinstance(stored, str) and stored else []


def _decode(line: str) -> dict[str, object] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
