"""A file read again, word for word, is sent as a reference to its first copy
(`calibration.repeats`), end to end through a test upstream that keeps a prompt cache as OpenAI's
does: the request reads everything before it from the cache, carries the person's messages and the
failed call's error whole, and sends fewer tokens; `deduplicateToolResults: false` sends every copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.records import RecordedRequest
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

FILE: Final = "def post(entry):\n    audit.write(entry.checksum)\n" * 60
ERROR: Final = "ERROR: ledger.lock is held by another process.\n" + "  at lock()\n" * 60
QUESTION: Final = "Review ledger.py, then check it again after the lock clears."


CONVERSATION: Final = [
    text_message("system", "You are an expert AI programming assistant."),
    text_message("user", QUESTION),
    *tool_round("c1", "ledger.py", FILE),
    *tool_round("c2", "ledger.lock", ERROR),
    text_message("user", QUESTION),  # the person's words, the same again: always whole
    *tool_round("c3", "ledger.lock", ERROR),  # an error again: always whole
    *tool_round("c4", "ledger.py", FILE),  # the file again, unchanged
]


@pytest_lsp.fixture(config=SERVER, params=[True, False], ids=["deduplicated", "every-copy"])
async def client(lsp_client: LanguageClient, tmp_path: Path, request: pytest.FixtureRequest):
    async with caching_upstream() as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.deduplicated = request.param  # type: ignore[attr-defined]
        options = chat_options(
            str(tmp_path / "storage"), up.base_url, deduplicateToolResults=request.param
        )
        await initialize(lsp_client, options)
        yield
        await lsp_client.shutdown_session()


def results(request: RecordedRequest) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"] for m in request.json["messages"] if m["role"] == "tool"
    }


async def test_a_file_read_again_goes_as_a_reference_to_its_first_copy(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    deduplicated: bool = client.deduplicated  # type: ignore[attr-defined]
    before = CONVERSATION[:-2]
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", before, tools=[READ_FILE]))
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", CONVERSATION, tools=[READ_FILE]))
    first, second = upstream.model_requests
    sent = results(second)
    assert sent["c1"] == FILE and sent["c2"] == sent["c3"] == ERROR
    users = [m["content"] for m in second.json["messages"] if m["role"] == "user"]
    assert users == [QUESTION, QUESTION]
    assert second.json["messages"][: len(first.json["messages"])] == first.json["messages"]
    assert second.cached_tokens is not None and second.prompt_tokens is not None
    assert first.prompt_tokens is not None
    assert second.cached_tokens >= first.prompt_tokens - 128  # all but the last block read
    if deduplicated:
        assert sent["c4"].startswith("[Exactly the same result as the read_file call c1 above")
        assert second.prompt_tokens - first.prompt_tokens < 100  # the reference, not the file
    else:
        assert sent["c4"] == FILE
        assert second.prompt_tokens - first.prompt_tokens > 500
