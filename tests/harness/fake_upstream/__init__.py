"""A real HTTP test upstream (aiohttp on 127.0.0.1) that speaks the LLM APIs tokengauge calls.

Replays the wire fixtures, lists models in each provider's shape, runs a deterministic "model"
with a true token count and a context window, and injects faults; it records every request and
notices client disconnects. See ``server.py`` (Python API) and ``control.py`` (HTTP control API).

Names are imported lazily so that ``python -m tests.harness.fake_upstream.server`` does not
import the server module twice.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Chunking": "config",
    "Fault": "config",
    "ListedModel": "config",
    "ModelBehavior": "config",
    "Reply": "config",
    "Scripted": "config",
    "UpstreamConfig": "config",
    "PromptCount": "model",
    "count_prompt": "model",
    "tokens": "model",
    "SubprocessUpstream": "process",
    "upstream_command": "process",
    "RecordedRequest": "records",
    "Upstream": "server",
    "running_upstream": "server",
    "WIRE_DIR": "wire",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
