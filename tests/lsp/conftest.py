"""pytest-lsp fixture: a real `python -m tokengauge` over stdio, initialized with test models."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.helpers import init_options, initialize

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "tokengauge"])


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """A server with the test models and a fresh ledger directory under `tmp_path`."""
    await initialize(lsp_client, init_options(tmp_path / "storage"))
    yield
    await lsp_client.shutdown_session()
