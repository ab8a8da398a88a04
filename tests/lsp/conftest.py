"""pytest-lsp fixture: a real `python -m tokengauge` over stdio, initialized with test models."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.lsp import SERVER, initialize
from tests.lsp.helpers import init_options


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """A server with the test models and a fresh ledger directory under `tmp_path`."""
    await initialize(lsp_client, init_options(tmp_path / "storage"))
    yield
    await lsp_client.shutdown_session()
