"""What an agent session costs with the API's prompt cache, from the test upstream's request log.

    .venv/bin/python -m bench.cache_cost [--encoding o200k_base] RUN_DIR[=LABEL] ...

Each RUN_DIR (its row named LABEL where given) is what `scripts/test-copilot.sh` left for one run
(`requests.json`, the upstream's log of every request it got, and `result.json`). The requests
the API answered are laid out as it caches them and taken in order through the test upstream's
own cache rule (`tests/harness/fake_upstream/prompt_cache.py`: for Chat Completions, the longest
prefix shared with an earlier request in 128-token blocks from 1,024; for the Messages API, at
its `cache_control` breakpoints), and priced in input
tokens: fresh + 0.1 × read from the cache (+ 0.25 × written to it, on the Messages API, whose
writes cost 1.25× fresh input). A row per run, side by side: turns answered,
requests, input tokens, the share servable from cache, fresh input, the cost, the fresh input of
Copilot's summarization requests, and the least and median cached share of the requests of a
tool loop (those that carry a tool result after their last user text).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from tests.harness.fake_upstream.prompt_cache import PromptCache
from tokengauge.activity.record import SUMMARIZE_MARKS

CACHED_PRICE: Final = 0.1
"""A token read from the cache, as a share of a fresh one (OpenAI's and Anthropic's reads)."""
WRITE_SURCHARGE: Final = 0.25
"""What a token written to Anthropic's cache costs over a fresh one (5-minute writes: 1.25×)."""
MODEL_ROUTES: Final = {"chat": "openai", "responses": "openai", "messages": "anthropic"}


@attrs.frozen
class Request:
    """One answered request: its true input, what the cache served, its kind."""

    input: int
    cached: int
    kind: str
    """"summary", "loop" (a tool loop's: results after the last user text) or "other"."""
    written: int = 0
    """Tokens written to the cache (Anthropic's)."""

    @property
    def fresh(self) -> int:
        return self.input - self.cached


@attrs.frozen
class Run:
    label: str
    turns: str
    requests: list[Request]

    def row(self) -> list[str]:
        spent = sum(r.input for r in self.requests)
        cached = sum(r.cached for r in self.requests)
        fresh = spent - cached
        written = sum(r.written for r in self.requests)
        cost = fresh + CACHED_PRICE * cached + WRITE_SURCHARGE * written
        summaries = sum(r.fresh for r in self.requests if r.kind == "summary")
        loops = [r.cached / r.input for r in self.requests if r.kind == "loop" and r.input]
        loop = f"{min(loops):.2f} / {statistics.median(loops):.2f}" if loops else "–"
        return [
            self.label,
            self.turns,
            str(len(self.requests)),
            f"{spent:,}",
            f"{cached / spent:.1%}" if spent else "–",
            f"{fresh:,}",
            f"**{round(cost):,}**",
            f"{summaries:,} ({sum(r.kind == 'summary' for r in self.requests)})",
            loop,
        ]


HEADER: Final = [
    "provider",
    "turns ok",
    "requests",
    "input tokens",
    "servable from cache",
    "fresh input",
    "cost (fresh + 0.1 × cached + 0.25 × written)",
    "summaries' fresh input (requests)",
    "tool-loop requests cached, least / median",
]


def run(directory: Path, encoding: str, label: str | None) -> Run:
    """The figures of one run's log."""
    logged = json.loads((directory / "requests.json").read_text())
    result_file = directory / "result.json"
    result = json.loads(result_file.read_text()) if result_file.exists() else {}
    cache = PromptCache()
    requests = []
    for record in logged:
        dialect = MODEL_ROUTES.get(record.get("route"))
        body = record.get("json")
        if dialect is None or record.get("status") != 200 or not isinstance(body, dict):
            continue
        total = int(record.get("prompt_tokens") or 0)
        use = cache.use(body, dialect, encoding, total)
        requests.append(Request(total, use.read, kind_of(body), use.written))
    turns = f"{result.get('turnsOk', '?')}/{result.get('turns', '?')}"
    name = label or f"{result.get('vendor', directory.name)} {result.get('skew', '')}".strip()
    return Run(name, turns, requests)


def kind_of(body: Mapping[str, Any]) -> str:
    """A summarization (Copilot's instruction in the last user text), a tool loop's request, or
    another."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    texts = [(i, _text(m)) for i, m in enumerate(messages) if m.get("role") == "user"]
    texts = [(i, t) for i, t in texts if t]
    if texts and any(mark in texts[-1][1] for mark in SUMMARIZE_MARKS):
        return "summary"
    last_user = texts[-1][0] if texts else -1
    results = any(_has_results(m) for m in messages[last_user + 1 :])
    return "loop" if results else "other"


def _has_results(message: Mapping[str, Any]) -> bool:
    """A tool message (Chat Completions) or a user message of `tool_result` blocks (Messages)."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return message.get("role") == "tool" or any(
        isinstance(b, Mapping) and b.get("type") == "tool_result" for b in blocks
    )


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(p.get("text", "") for p in parts if isinstance(p, Mapping))


def table(runs: Sequence[Run]) -> str:
    """The runs side by side (Markdown)."""
    rows = [HEADER, ["---"] * len(HEADER), *(r.row() for r in runs)]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR[=LABEL]")
    parser.add_argument("--encoding", default="o200k_base")
    args = parser.parse_args(argv)
    named = [spec.partition("=") for spec in args.runs]
    print(table([run(Path(d), args.encoding, label or None) for d, _, label in named]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
