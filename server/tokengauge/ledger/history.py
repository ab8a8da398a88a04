"""The usage history on disk: one row per request, appended in a transaction of its own.

The rows live in a table of the ledger's own database (`Usage`, beside diskcache's `Cache`), so a
damaged, deleted or read-only ledger is one thing to notice and repair. An append inserts one row
and commits: nothing already stored is read or written again, a kill at any point leaves every
committed row in place (SQLite's rollback journal), and another process appending at the same
time waits for the lock instead of overwriting. Rows are dropped by age (`drop_before`), as the
retention setting says; sums of a record's numbers are made by SQLite (`json_extract`), so the
status bar's totals do not decode the whole history.

Records before this table were one value of the diskcache (``usage``, JSON lines): `adopt` moves
them here once, marked done in the same transaction so a kill cannot copy them twice.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

import attrs

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS Usage ("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, record TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS UsageTime ON Usage (time)",
    "CREATE TABLE IF NOT EXISTS UsageAdopted (done INTEGER NOT NULL)",
)


@attrs.frozen
class Entry:
    """One record as stored: when it ended (Unix seconds) and its JSON line."""

    time: float
    line: str


def entry(record: Mapping[str, object], now: float) -> Entry:
    """`record` as a stored entry: its `time` (`now` when it has none), numbers that are not
    finite stored as null (strict JSON, which SQLite can read); TypeError if it is not JSON-able
    (newlines escaped, so a line is one record)."""
    when = record.get("time")
    if not isinstance(when, (int, float)) or isinstance(when, bool) or not math.isfinite(when):
        when = now
    return Entry(float(when), json.dumps(_strict(dict(record)), separators=(",", ":")))


def _strict(value: object) -> object:
    """`value` with every float that is not finite replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(item) for item in value]
    return value


@attrs.frozen
class Match:
    """Which records to take: ended at `since` or later, and with these exact field values."""

    since: float | None = None
    fields: Mapping[str, str] = attrs.field(factory=dict)

    def admits(self, item: Entry, record: Mapping[str, object]) -> bool:
        """Whether a decoded record is one of those taken."""
        if self.since is not None and item.time < self.since:
            return False
        return all(record.get(name) == value for name, value in self.fields.items())

    def where(self) -> tuple[str, list[object]]:
        """The SQL condition and its parameters."""
        clauses, parameters = ["1"], list[object]()
        if self.since is not None:
            clauses.append("time >= ?")
            parameters.append(self.since)
        for name, value in self.fields.items():
            clauses.append("json_valid(record) AND json_extract(record, ?) = ?")
            parameters += [_path(name), value]
        return " AND ".join(clauses), parameters


def split_lines(stored: object) -> list[str]:
    """The lines of an older ledger's usage value (nothing for anything else)."""
    return stored.split("\n") if isinstance(stored, str) and stored else []


def decode(line: str) -> dict[str, object] | None:
    """A stored line as a record; None for anything that is not a JSON object."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def sums(entries: Iterable[Entry], match: Match, names: Sequence[str]) -> dict[str, float | None]:
    """What `UsageTable.sums` gives, for entries held in memory."""
    totals: dict[str, float | None] = dict.fromkeys(names)
    for item in entries:
        record = decode(item.line)
        if record is None or not match.admits(item, record):
            continue
        for name in names:
            value = record.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                totals[name] = (totals[name] or 0.0) + value
    return {name: _finite(total) for name, total in totals.items()}


class UsageTable:
    """The `Usage` table of one ledger database, over a connection of its own."""

    def __init__(self, database: Path, timeout: float) -> None:
        """Open it (creating the table); raises whatever SQLite raises."""
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(
            str(database), timeout=timeout, isolation_level=None, check_same_thread=False
        )
        try:
            self._connection.execute("PRAGMA synchronous = NORMAL")  # safe against a kill
            for statement in _SCHEMA:
                self._connection.execute(statement)
        except BaseException:
            self._connection.close()
            raise

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (taking the write lock at once, so two processes cannot both
        read and then both wait to write), committed at the end, rolled back on an exception."""
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")

    def append(self, entries: Sequence[Entry]) -> None:
        """Insert `entries` in one transaction."""
        with self._transaction():
            self._connection.executemany(
                "INSERT INTO Usage (time, record) VALUES (?, ?)",
                [(item.time, item.line) for item in entries],
            )

    def read(self, match: Match, limit: int | None = None) -> list[Entry]:
        """The newest `limit` (all when None) rows `match` takes, oldest first."""
        where, parameters = match.where()
        query = f"SELECT time, record FROM Usage WHERE {where} ORDER BY id DESC LIMIT ?"
        with self._lock:
            rows = self._connection.execute(query, [*parameters, -1 if limit is None else limit])
            found = [Entry(time, line) for time, line in rows.fetchall()]
        found.reverse()
        return found

    def sums(self, match: Match, names: Sequence[str]) -> dict[str, float | None]:
        """The sum of each numeric field `names` over the rows `match` takes (None where no row
        has a number there; None too for a sum that is not finite). A row that is not strict JSON
        (a number written as `Infinity` by an older version) is left out, as SQLite cannot read
        it."""
        if not names:
            return {}
        where, parameters = match.where()
        columns = ", ".join(
            "SUM(CASE WHEN json_type(record, ?) IN ('integer', 'real') "
            "THEN json_extract(record, ?) END)"
            for _ in names
        )
        paths = [p for name in names for p in (_path(name), _path(name))]
        with self._lock:
            row = self._connection.execute(
                f"SELECT {columns} FROM Usage WHERE json_valid(record) AND {where}",
                [*paths, *parameters],
            ).fetchone()
        pairs = zip(names, row, strict=True)
        return {name: None if value is None else _finite(float(value)) for name, value in pairs}

    def drop_before(self, oldest: float) -> None:
        """Delete the rows that ended before `oldest`."""
        with self._transaction():
            self._connection.execute("DELETE FROM Usage WHERE time < ?", (oldest,))

    def adopt(self, lines: Sequence[str], now: float) -> bool:
        """Take in the records of an older ledger's single value, once; False if they were
        taken in before (then the old value only needs removing)."""
        with self._transaction():
            if self._connection.execute("SELECT 1 FROM UsageAdopted").fetchone():
                return False
            records = [(line, decode(line)) for line in lines]
            self._connection.executemany(
                "INSERT INTO Usage (time, record) VALUES (?, ?)",
                [(entry(r, now).time, line) for line, r in records if r is not None],
            )
            self._connection.execute("INSERT INTO UsageAdopted (done) VALUES (1)")
        return True

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._connection.close()


def read_only_entries(connection: sqlite3.Connection, limit: int) -> list[Entry]:
    """The newest `limit` rows of a ledger opened read-only (none before this table), oldest
    first."""
    try:
        rows = connection.execute(
            "SELECT time, record FROM Usage ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
    except sqlite3.OperationalError:  # a ledger older than the table
        return []
    return [Entry(time, line) for time, line in reversed(rows)]


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _path(name: str) -> str:
    """The JSON path of a top-level field."""
    return "$." + json.dumps(name)
