"""The context size a person picked for a model, kept in the ledger: a window smaller than the
model's own, which its budgets, its `maxInputTokens` and the status bar then use. Picking the
model's own window (or a larger one) drops the choice."""

from __future__ import annotations

from typing import Final

from tokengauge.ledger.store import Ledger
from tokengauge.models.catalog import ModelSpec

DOCUMENT: Final = "context-sizes"


class ContextSizes:
    """The picked context sizes, by model id."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        document = ledger.get_document(DOCUMENT)
        self._sizes: dict[str, int] = {
            str(k): v
            for k, v in (document.items() if isinstance(document, dict) else [])
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
        self.ledger.set_document(DOCUMENT, dict(self._sizes))
        return True
