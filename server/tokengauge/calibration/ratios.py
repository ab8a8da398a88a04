"""The observed ratios of what the API counts to what Copilot counts, per model, kept in the ledger.

Two series per model: the messages' true size per token of Copilot's own count of them (what its
budget check meters, ARCHITECTURE §1), and the whole request's per token of an o200k count of it
(what the Agent Host meters). Each keeps the newest `WINDOW` ratios; windows sharing one ledger
add to the same series (`Ledger.update_document`), and a model's figure is their median.
"""

from __future__ import annotations

import collections
import math
import statistics
from typing import Final

from tokengauge.ledger.store import Ledger

WINDOW: Final = 12
"""How many recent ratios a series keeps."""
MIN_TOKENS: Final = 200
"""A request whose Copilot count is below this teaches no ratio (too small to be read)."""
LEAST_RATIO: Final = 0.05


class ObservedRatios:
    """The models' recent ratios, read from the ledger once and then kept in memory."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self._series: dict[str, collections.deque[float]] = {}

    def messages(self, model_id: str) -> float | None:
        """The median ratio of the messages' true size to Copilot's count (None before any)."""
        return _median(self._observed(_messages_key(model_id)))

    def whole(self, model_id: str) -> float | None:
        """The median ratio of the whole request's count to an o200k count (None before any)."""
        return _median(self._observed(_whole_key(model_id)))

    def observe_messages(self, model_id: str, true_size: float, copilot: int) -> None:
        """One more request: its messages' true size against Copilot's count of them."""
        if copilot >= MIN_TOKENS:
            self._observe(_messages_key(model_id), max(LEAST_RATIO, true_size / copilot))

    def observe_whole(self, model_id: str, actual: int, whole: int | None) -> None:
        """One more request: the API's count of it against an o200k count of the whole."""
        if whole and whole >= MIN_TOKENS:
            self._observe(_whole_key(model_id), max(LEAST_RATIO, actual / whole))

    def _observed(self, key: str) -> collections.deque[float]:
        ratios = self._series.get(key)
        if ratios is None:
            ratios = _recent(self.ledger.get_document(key))
            self._series[key] = ratios
        return ratios

    def _observe(self, key: str, ratio: float) -> None:
        """Add to the series the ledger holds (other windows sharing it observe too)."""

        def add(stored: object) -> object:
            return [*_recent(stored), ratio][-WINDOW:]

        self._series[key] = _recent(self.ledger.update_document(key, add))


def _recent(stored: object) -> collections.deque[float]:
    """The ratios of a stored list (what is not a positive number left out), the newest `WINDOW`."""
    values = [
        float(v)
        for v in (stored if isinstance(stored, list) else [])
        if isinstance(v, (int, float)) and math.isfinite(v) and v > 0
    ]
    return collections.deque(values, maxlen=WINDOW)


def _median(values: collections.deque[float]) -> float | None:
    return statistics.median(values) if values else None


def _messages_key(model_id: str) -> str:
    return f"copilot-ratio/{model_id}"


def _whole_key(model_id: str) -> str:
    return f"whole-ratio/{model_id}"
