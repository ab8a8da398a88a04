"""Shared test helpers: paths to the real wire fixtures, the sample requests and the VSIXes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.harness.fake_upstream.wire import WIRE_DIR as WIRE

# The CI machine has 2 cores and runs LSP subprocesses beside hypothesis: timing is not a failure.
settings.register_profile("tokengauge", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tokengauge")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"


def vsix_path(target: str) -> Path:
    """The VSIX `scripts/build-vsix.sh` writes for a platform (`linux-x64`, …)."""
    version = json.loads((REPO / "package.json").read_text())["version"]
    return REPO / f"tokengauge-{version}-{target}.vsix"


@pytest.fixture
def wire() -> Path:
    """The directory of real API captures."""
    assert WIRE.is_dir(), f"wire fixtures not found at {WIRE}"
    return WIRE
