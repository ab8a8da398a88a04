"""`bench.cache_cost`: a run's requests laid out as the API caches them, their kinds and cost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.cache_cost import run, table
from tests.harness.fake_upstream.prompt_cache import laid

SYSTEM = {"role": "system", "content": " ".join(f"rule{i}" for i in range(1_200))}
ASK = {"role": "user", "content": "What does ledger.py do?"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    ],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "def ledger(): ..."}
SUMMARY = {"role": "user", "content": "Summarize the conversation history so far, please."}


def record(messages: list[dict[str, Any]], status: int = 200) -> dict[str, Any]:
    body = {"model": "m", "messages": messages}
    size = laid(body, "openai", "o200k_base")  # true tokens = the layout's
    return {"route": "chat", "status": status, "json": body, "prompt_tokens": size}


def test_a_runs_requests_are_priced_with_what_the_cache_served(tmp_path: Path) -> None:
    logged = [
        record([SYSTEM, ASK]),
        record([SYSTEM, ASK, CALL, RESULT]),
        record([SYSTEM, ASK, CALL, RESULT, SUMMARY]),
        record([SYSTEM, ASK, CALL, RESULT, SUMMARY, SUMMARY], status=400),  # refused: not billed
    ]
    (tmp_path / "requests.json").write_text(json.dumps(logged))
    (tmp_path / "result.json").write_text(json.dumps({"turnsOk": 1, "turns": 1, "vendor": "tg"}))
    measured = run(tmp_path, "o200k_base", None)
    kinds = [r.kind for r in measured.requests]
    assert kinds == ["other", "loop", "summary"]
    first, loop, summary = measured.requests
    assert first.cached == 0 and first.fresh == first.input
    assert loop.cached >= 1_024 and loop.fresh < 128 + (loop.input - first.input)
    assert summary.cached >= loop.cached
    row = table([measured]).splitlines()[-1]
    cost = round(
        sum(r.fresh for r in measured.requests) + 0.1 * sum(r.cached for r in measured.requests)
    )
    assert row.startswith("| tg | 1/1 | 3 |") and f"**{cost:,}**" in row
