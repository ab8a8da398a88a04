"""A damaged disk under a running server (real LSP over stdio, a real ledger directory): the
server keeps serving, says what happened, and what it learned is there at the next start."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lsprotocol.types import MessageType
from pytest_lsp import LanguageClient
from pytest_lsp.client import make_test_lsp_client

from tests.harness.lsp import SERVER_COMMAND, call, initialize, running_server
from tests.lsp.helpers import init_options, text_message
from tokengauge.ledger.disk import DB_NAME, TIMINGS_VARIABLE

BUSY_PAUSE = 0.3
"""The server's pause after a lock held too long, shortened (its usual 5 s is waited out)."""


def conversation() -> list[dict]:
    return [text_message("user", "Explain this code please. " * 30)]


async def record_usage(client: LanguageClient, total: int) -> None:
    await call(
        client,
        "tokenGauge/recordUsage",
        {"modelId": "gpt-4o", "messages": conversation(), "usage": {"totalInputTokens": total}},
    )


async def factor(client: LanguageClient) -> dict[str, float]:
    """What calibration has learned of the model (its ratios)."""
    usage = await call(client, "tokenGauge/usage", {})
    return dict(next(m["ratios"] for m in usage["models"] if m["id"] == "gpt-4o"))


def warnings(client: LanguageClient) -> list[str]:
    return [m.message for m in client.log_messages if m.type == MessageType.Warning]


def truncate_all(ledger: Path) -> None:
    for path in ledger.rglob("*"):
        if path.is_file():
            os.truncate(path, 0)


def delete(ledger: Path) -> None:
    shutil.rmtree(ledger)


async def saved_most_asked(ledger: Path, within: float = 10.0) -> None:
    """Wait until the server has saved the most asked strings (a couple of seconds after the
    first change), reading its ledger as another process would."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with contextlib.suppress(sqlite3.Error):
            connection = sqlite3.connect(f"{(ledger / DB_NAME).as_uri()}?mode=ro", uri=True)
            try:
                query = "SELECT 1 FROM Cache WHERE key LIKE '%frequent-strings/%'"
                if connection.execute(query).fetchone() is not None:
                    return
            finally:
                connection.close()
        await asyncio.sleep(0.1)


@contextlib.contextmanager
def immutable(ledger: Path) -> Iterator[None]:
    paths = [str(p) for p in [ledger, *ledger.rglob("*")]]
    if os.geteuid() != 0 or subprocess.run(["chattr", "+i", *paths]).returncode:
        pytest.skip("needs root and chattr +i")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *paths], check=True)


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        pytest.param(truncate_all, "damaged", id="files-truncated"),
        pytest.param(delete, "deleted or replaced", id="directory-deleted"),
    ],
)
async def test_a_ledger_damaged_under_a_running_server(
    tmp_path: Path, spoil: Callable[[Path], None], said: str
):
    """Truncating the ledger's files killed the server with SIGBUS (SQLite had its WAL index
    memory-mapped); deleting the directory lost everything at the next start, silently."""
    storage = tmp_path / "storage"
    options = init_options(storage)
    async with running_server(options) as client:
        await record_usage(client, 250)
        learned = await factor(client)
        spoil(storage / "ledger")
        await record_usage(client, 250)  # the next write finds the damage and rebuilds
        learned = await factor(client)
        counted = await call(
            client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["alive"]}
        )
        assert counted["raw"] == [1]
        assert any(said in w and str(storage / "ledger") in w for w in warnings(client))
        assert (await call(client, "tokenGauge/usage", {}))["persistent"] is True
    async with running_server(options) as again:
        assert await factor(again) == learned
        assert [r["inputTokens"] for r in (await call(again, "tokenGauge/usage", {}))["history"]]


async def test_a_ledger_made_immutable_under_a_running_server(tmp_path: Path):
    storage = tmp_path / "storage"
    async with running_server(init_options(storage)) as client:
        await record_usage(client, 250)
        before = await factor(client)
        with immutable(storage / "ledger"):
            await record_usage(client, 330)
            after = await factor(client)
            assert (await call(client, "tokenGauge/usage", {}))["persistent"] is False
            assert any("read-only" in w for w in warnings(client))
            counted = await call(
                client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["alive"]}
            )
            assert counted["raw"] == [1]
            assert after != before


async def test_a_lock_held_by_another_process_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A lock held over ~1 s switched the ledger to memory for good, hiding what it knew."""
    short = {"statement": 0.2, "usage": 0.2, "busy_pause": BUSY_PAUSE}
    monkeypatch.setenv(TIMINGS_VARIABLE, json.dumps(short))  # the servers inherit it
    storage = tmp_path / "storage"
    options = init_options(storage)
    async with running_server(options) as client:
        await record_usage(client, 250)
        holder = sqlite3.connect(storage / "ledger" / "cache.db", timeout=0, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            await record_usage(client, 290)  # waits for the lock, then keeps it in memory
        finally:
            holder.execute("COMMIT")
            holder.close()
        learned = await factor(client)
        await asyncio.sleep(BUSY_PAUSE + 0.2)  # the ledger leaves the disk alone, then catches up
        await record_usage(client, 290)
        learned = await factor(client)
        assert (await call(client, "tokenGauge/usage", {}))["persistent"] is True
        assert any("locked" in w for w in warnings(client))
    async with running_server(options) as again:
        assert await factor(again) == learned
        history = (await call(again, "tokenGauge/usage", {}))["history"]
        assert [r["inputTokens"] for r in history] == [250, 290, 290]


async def test_the_most_asked_strings_survive_a_crash(tmp_path: Path):
    """500 strings counted, then SIGKILL: the next session had 0 of them to pre-warm."""
    options = init_options(tmp_path / "storage")
    strings = [f"tool description number {i}" for i in range(500)]
    client = make_test_lsp_client()
    await client.start_io(*SERVER_COMMAND)
    try:
        await initialize(client, options)
        await call(client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": strings})
        await saved_most_asked(tmp_path / "storage" / "ledger")
        process = client._server
        assert process is not None
        process.send_signal(signal.SIGKILL)
        await process.wait()
    finally:
        with contextlib.suppress(Exception):
            await client.stop()
    started = time.monotonic()
    async with running_server(options) as again:
        warm = await call(again, "tokenGauge/warmCounts", {"modelIds": ["gpt-4o"]})
    assert len(warm["entries"]) >= 500
    assert time.monotonic() - started < 30
