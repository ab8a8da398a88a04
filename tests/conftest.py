"""Shared test helpers: paths to the real wire fixtures and the sample requests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WIRE = REPO.parent / "shared" / "fixtures" / "wire"
DATA = REPO / "tests" / "data"


@pytest.fixture
def wire() -> Path:
    """The directory of real API captures."""
    assert WIRE.is_dir(), f"wire fixtures not found at {WIRE}"
    return WIRE
