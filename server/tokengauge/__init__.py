"""tokengauge: token counting, calibration and budgets for VS Code language-model chat providers."""

from __future__ import annotations

__version__ = "0.1.0"
