"""The ladder's bench for each test (`ladders`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.calibration.ladders import SETTINGS, Ladder
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger


@pytest.fixture
def ladder(tmp_path: Path) -> Ladder:
    return Ladder(Gauge(SETTINGS, Ledger(tmp_path / "ledger")))
