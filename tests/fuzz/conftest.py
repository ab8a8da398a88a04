"""The fuzz suites' long-lived server (one per module) and test upstream, and their budget.

`TG_FUZZ_EXAMPLES` scales every suite's number of examples (1 is the CI budget, well under a
minute in all); `TG_FUZZ_REPORT` names a JSON file to which each suite adds its figures; with
`TG_FUZZ_RANDOM` set the examples are drawn afresh (CI draws the same ones every run).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fuzz.pipe_client import PipeServer
from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.process import SubprocessUpstream
from tests.lsp.chat_helpers import chat_options

SCALE = float(os.environ.get("TG_FUZZ_EXAMPLES", "1"))
DERANDOMIZE = "TG_FUZZ_RANDOM" not in os.environ


def budget(examples: int) -> int:
    """`examples` scaled by `TG_FUZZ_EXAMPLES`."""
    return max(1, round(examples * SCALE))


def report(suite: str, figures: dict[str, Any]) -> None:
    """Add a suite's figures to the `TG_FUZZ_REPORT` file, if one is named."""
    path = os.environ.get("TG_FUZZ_REPORT")
    if not path:
        return
    found = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    found[suite] = figures
    Path(path).write_text(json.dumps(found, indent=2))


@pytest.fixture(scope="module")
def upstream() -> Iterator[SubprocessUpstream]:
    with SubprocessUpstream(UpstreamConfig()) as up:
        yield up


@pytest.fixture(scope="module")
def server(
    upstream: SubprocessUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PipeServer]:
    directory = tmp_path_factory.mktemp("fuzz")
    options = chat_options(str(directory / "storage"), upstream.base_url, maxAttempts=1)
    options["models"].append(
        {
            "id": "local-small",
            "provider": "up-openai",
            "contextWindow": 8192,
            "maxOutputTokens": 2048,
            "family": "llama-3.1",
        }
    )
    running = PipeServer(options, directory / "stderr.log")
    yield running
    running.close()
