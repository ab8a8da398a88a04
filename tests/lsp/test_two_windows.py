"""Two VS Code windows on one storage directory: two real servers over stdio learning at once,
and killed at the end, keep what both learned (real LSP, a real ledger directory)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.harness.lsp import call, running_server
from tests.lsp.helpers import init_options, text_message
from tokengauge.ledger.store import LEDGER_DIR, Ledger

REPORTS = 150


def conversation(window: int, turn: int) -> list[dict]:
    return [text_message("user", f"window {window} turn {turn}: explain this code please. " * 20)]


async def learn(client, window: int) -> None:  # type: ignore[no-untyped-def]
    """`REPORTS` usage reports of one window, the API counting ~1.3 tokens per ours."""
    for turn in range(REPORTS):
        await call(
            client,
            "tokenGauge/recordUsage",
            {
                "modelId": "gpt-4o",
                "messages": conversation(window, turn),
                "usage": {"totalInputTokens": 300 + turn % 7},
            },
        )


async def test_two_windows_learn_together(tmp_path: Path) -> None:
    """Each window wrote its own fit over the other's: 300 reports left 150 observations, and the
    windows disagreed about the model."""
    storage = tmp_path / "storage"
    options = init_options(storage)
    async with running_server(options) as first, running_server(options) as second:
        await asyncio.gather(learn(first, 1), learn(second, 2))
        history = (await call(first, "tokenGauge/dashboard", {}))["requests"]
    ledger = Ledger(storage / LEDGER_DIR)
    fit = ledger.get_document("fit/gpt-4o")
    records = ledger.recent_usage()
    ledger.close()
    assert isinstance(fit, dict) and fit["n"] == 2 * REPORTS
    assert len(records) == len(history) == 2 * REPORTS
