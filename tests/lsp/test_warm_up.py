"""The chat path warmed while the server waits for its first chat (`lsp/state.py`)."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest

from tokengauge.lsp.state import warm_chat_path


def test_warming_the_chat_path_fails_on_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """It structures a chat's parameters as the handler does: a change there shows here."""
    with caplog.at_level(logging.DEBUG, logger="tokengauge"):
        warm_chat_path()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_warming_imports_the_chat_path_a_start_leaves_out() -> None:
    """Starting the server does not import the chat package; warming it does (in a fresh
    interpreter)."""
    code = textwrap.dedent(
        """
        import sys
        import tokengauge.lsp.server
        before = "tokengauge.chat" in sys.modules
        from tokengauge.lsp.state import warm_chat_path
        warm_chat_path()
        print(before, "tokengauge.chat" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
