"""Killing ledger writers mid-write, again and again, and counting what they had acknowledged.

A writer is a real process on a real ledger directory: it appends a usage record, stores two
actuals and adds one to a counter document, then prints the record's number — its
acknowledgement (then waits up to 4 ms, as requests do not follow each other without a pause).
`run` starts `writers` of them at once (two VS Code windows on one storage
directory), SIGKILLs each at a random moment, and after every round checks from a fresh `Ledger`
that everything acknowledged so far is there. A writer on a ledger without `update_document` (an
earlier version, for a figure of before) adds to the counter by reading and writing it.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Final

import attrs

from tokengauge.ledger.store import Ledger

COUNTER: Final = "kill-loop/counter"

WRITER: Final = """
import random, sys, time
from pathlib import Path
from tokengauge.ledger.store import Ledger

def add_one(document):
    return (document if isinstance(document, int) else 0) + 1

ledger = Ledger(Path(sys.argv[1]))
if not ledger.persistent:
    sys.exit("the ledger could not be opened for writing")
writer, start, counter = sys.argv[2], int(sys.argv[3]), sys.argv[4]
print("ready", flush=True)
for n in range(start, start + 1_000_000):
    ledger.append_usage({"time": time.time(), "writer": writer, "n": n})
    ledger.put_actuals("f", {f"{writer}-{n}": n, f"{writer}-{n}-b": n})
    if hasattr(ledger, "update_document"):
        ledger.update_document(counter, add_one)
    else:
        ledger.set_document(counter, add_one(ledger.get_document(counter)))
    print(n, flush=True)
    time.sleep(random.uniform(0, 0.004))  # requests come apart, even in a busy window
"""


@attrs.define
class Tally:
    """What the writers acknowledged and what a fresh ledger found, after the last round."""

    kills: int = 0
    acknowledged: int = 0
    records_lost: int = 0
    actuals_lost: int = 0
    counter: int = 0
    """The counter document's value: at least the acknowledged additions when none was lost."""
    integrity: str = "ok"
    lost_rounds: list[int] = attrs.field(factory=list)
    """The rounds after which something acknowledged was missing."""


def _kill_at_random(
    process: subprocess.Popen[str], acks: list[int], rng: random.Random, most: int
) -> None:
    """Read a random number (up to `most`) of `process`'s acknowledgements, wait a random few
    milliseconds, then SIGKILL it."""
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise RuntimeError("a ledger writer did not start")
    wanted = len(acks) + rng.randint(0, most)
    while len(acks) < wanted:
        line = process.stdout.readline()
        if not line:
            break
        acks.append(int(line))
    time.sleep(rng.uniform(0.0, 0.003))  # so the kill lands anywhere in a write
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    for line in process.stdout:  # printed before the kill, not yet read: acknowledged too
        acks.append(int(line))


def run(
    directory: Path,
    rounds: int,
    writers: int = 1,
    seed: int = 0,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    most: int = 25,
) -> Tally:
    """`rounds` rounds of `writers` writers killed at random on the ledger in `directory`."""
    rng = random.Random(seed)
    tally = Tally()
    acknowledged: dict[str, list[int]] = {str(w): [] for w in range(writers)}
    for round_ in range(rounds):
        processes, threads = [], []
        for name, acks in acknowledged.items():
            process = subprocess.Popen(
                [python, "-c", WRITER, str(directory), name, str(100_000 * round_), COUNTER],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            thread = threading.Thread(
                target=_kill_at_random, args=(process, acks, random.Random(rng.random()), most)
            )
            thread.start()
            processes.append(process)
            threads.append(thread)
        for thread in threads:
            thread.join()
        tally.kills += len(processes)
        if _check(directory, acknowledged, tally):
            tally.lost_rounds.append(round_)
    return tally


def _check(directory: Path, acknowledged: dict[str, list[int]], tally: Tally) -> bool:
    """Count what a fresh ledger holds of what was acknowledged; True if anything is lost."""
    ledger = Ledger(directory)
    try:
        records = ledger.recent_usage()
        found = {(str(r.get("writer")), r.get("n")) for r in records}
        wanted = [(writer, n) for writer, acks in acknowledged.items() for n in acks]
        tally.acknowledged = len(wanted)
        tally.records_lost = sum((writer, n) not in found for writer, n in wanted)
        actuals = [
            value
            for writer, acks in acknowledged.items()
            for value in ledger.get_actuals("f", [f"{writer}-{n}" for n in acks])
        ]
        tally.actuals_lost = sum(value is None for value in actuals)
        counter = ledger.get_document(COUNTER)
        tally.counter = counter if isinstance(counter, int) else 0
        tally.integrity = _integrity(directory)
    finally:
        ledger.close()
    return bool(tally.records_lost or tally.actuals_lost or tally.counter < len(wanted))


def _integrity(directory: Path) -> str:
    connection = sqlite3.connect(directory / "cache.db")
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


def summary(tally: Tally, label: str) -> str:
    """One line of figures."""
    return (
        f"{label}: {tally.kills} kills, {tally.acknowledged} records acknowledged, "
        f"{tally.records_lost} lost, {tally.actuals_lost} actuals lost, counter {tally.counter} "
        f"for {tally.acknowledged} acknowledged additions, rounds with a loss "
        f"{len(tally.lost_rounds)}, integrity {tally.integrity}"
    )
