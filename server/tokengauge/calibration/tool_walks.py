"""The tools of each model's next request, as counted (`ToolWalk`), kept in the ledger.

Copilot counts the tools' strings one by one; what their scale must make of them depends on the
tools the model's next request will carry, so the last tools seen are remembered per model and
outlive a restart.
"""

from __future__ import annotations

from tokengauge.counting.request import ToolWalk
from tokengauge.ledger.store import Ledger


class ToolWalks:
    """The remembered tools per model, read from the ledger once."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self._walks: dict[str, ToolWalk | None] = {}

    def get(self, model_id: str) -> ToolWalk | None:
        """The tools of the model's next request, if any were seen."""
        if model_id not in self._walks:
            self._walks[model_id] = _walk_from(self.ledger.get_document(_key(model_id)))
        return self._walks[model_id]

    def remember(self, model_id: str, walk: ToolWalk) -> bool:
        """Take `walk` as the model's next tools; False if it already was."""
        if self.get(model_id) == walk:
            return False
        self._walks[model_id] = walk
        document = {"tools": walk.tools, "json": walk.json, "raws": list(walk.raws)}
        self.ledger.set_document(_key(model_id), document)
        return True


def _key(model_id: str) -> str:
    return f"toolwalk/{model_id}"


def _walk_from(document: object) -> ToolWalk | None:
    if not isinstance(document, dict):
        return None
    tools, json_tokens, raws = document.get("tools"), document.get("json"), document.get("raws")
    if not isinstance(tools, int) or not isinstance(json_tokens, int) or not isinstance(raws, list):
        return None
    if not all(isinstance(r, int) and r >= 0 for r in raws):
        return None
    return ToolWalk(tools, json_tokens, tuple(raws))
