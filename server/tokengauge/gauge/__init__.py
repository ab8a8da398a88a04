"""The server's hub without the LSP (`hub.Gauge`) and the counts it answers with (`counts`)."""

from __future__ import annotations

from tokengauge.gauge.counts import COPILOT_MESSAGE_OVERHEAD
from tokengauge.gauge.hub import ErrorLearned, Gauge, UsageLearned

__all__ = ["COPILOT_MESSAGE_OVERHEAD", "ErrorLearned", "Gauge", "UsageLearned"]
