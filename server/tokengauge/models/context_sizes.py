"""Sizes a person picked for a model, kept in the ledger, each a window smaller than the model's
own: its context size (`CONTEXT_SIZES`: its budgets, its `maxInputTokens` and the status bar then
use it) or the window Copilot is told so that it summarizes sooner (`COMPACTIONS`). Picking the
model's own window (or a larger one) drops the choice."""

from __future__ import annotations

from typing import Final

from tokengauge.ledger.store import Ledger
from tokengauge.models.catalog import ModelSpec

CONTEXT_SIZES: Final = "context-sizes"
COMPACTIONS: Final = "compaction-windows"


class ContextSizes:
    """One kind of picked size, by model id (`document`: the ledger's name for them)."""

    def __init__(self, ledger: Ledger, document: str = CONTEXT_SIZES) -> None:
        self.ledger = ledger
        self.document = document
        stored = ledger.get_document(document)
        self._sizes: dict[str, int] = {
            str(k): v
            for k, v in (stored.items() if isinstance(stored, dict) else [])
            if isinstance(v, int) and not isinstance(v, bool) and v > 0
        }

    def limit(self, model: ModelSpec) -> int | None:
        """The window picked for a model, if smaller than its own."""
        size = self._sizes.get(model.id)
        return size if size is not None and size < model.context_window else None

    def choose(self, model: ModelSpec, size: int) -> bool:
        """Pick a context size for a model; whether that changed its window."""
        before = self.limit(model)
        if size < model.context_window:
            self._sizes[model.id] = size
        else:
            self._sizes.pop(model.id, None)
        if self.limit(model) == before:
            return False
        self.ledger.set_document(self.document, dict(self._sizes))
        return True
