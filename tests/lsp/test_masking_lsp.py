"""Observation masking (`maskToolResultsAfter`), end to end through a test upstream that keeps a
prompt cache as OpenAI's does: older rounds' results go as stubs that name the call and keep the
error lines, the person's messages go whole, and the next request of the same step reads the one
before from the cache; unset, every result goes whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.server import Upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import (
    READ_FILE,
    caching_upstream,
    chat_options,
    chat_params,
    tool_round,
)
from tests.lsp.helpers import text_message
from tests.lsp.test_repeats_lsp import results

FAILED: Final = "FAILED tests/test_ledger.py::test_post - AssertionError: checksum"
RUN: Final = "collected 40 items\n" + "tests/test_ledger.py ....\n" * 40 + FAILED + "\n"
QUESTION: Final = "Make the ledger tests pass."


def conversation(rounds: int) -> list[dict]:
    messages = [
        text_message("system", "You are an expert AI programming assistant."),
        text_message("user", QUESTION),
    ]
    for n in range(rounds):
        source = f"def post_{n}(entry):\n    audit.write(entry.checksum)\n" * 40
        messages += tool_round(f"c{n}", f"ledger_{n}.py", RUN if n == 0 else source)
    return messages


@pytest_lsp.fixture(config=SERVER, params=[2, 0], ids=["masked", "whole"])
async def client(lsp_client: LanguageClient, tmp_path: Path, request: pytest.FixtureRequest):
    async with caching_upstream() as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.keep = request.param  # type: ignore[attr-defined]
        options = chat_options(
            str(tmp_path / "storage"), up.base_url, maskToolResultsAfter=request.param
        )
        await initialize(lsp_client, options)
        yield
        await lsp_client.shutdown_session()


async def test_older_rounds_go_as_stubs_and_the_prefix_holds(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    keep: int = client.keep  # type: ignore[attr-defined]
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", conversation(4), tools=[READ_FILE]))
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", conversation(5), tools=[READ_FILE]))
    first, second = upstream.model_requests
    sent = results(second)
    users = [m["content"] for m in second.json["messages"] if m["role"] == "user"]
    assert users == [QUESTION]
    if not keep:
        assert sent["c0"] == RUN and all("hidden" not in text for text in sent.values())
        return
    assert sent["c0"].startswith("[The result of the read_file call c0 (")
    assert FAILED in sent["c0"] and "...." not in sent["c0"]  # its error line, not the rest
    assert sent["c1"].startswith("[The result of the read_file call c1 (")
    assert sent["c2"].startswith("def post_2") and sent["c4"].startswith("def post_4")
    assert second.json["messages"][: len(first.json["messages"])] == first.json["messages"]
    assert second.cached_tokens is not None and first.prompt_tokens is not None
    assert second.cached_tokens >= first.prompt_tokens - 128  # all but the last block read
