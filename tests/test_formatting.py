"""Tests for tokengauge.formatting: compact token counts and dollars."""

from __future__ import annotations

import pytest

from tokengauge.formatting import compact, format_usd


@pytest.mark.parametrize(
    ("n", "text"),
    [
        pytest.param(0, "0", id="zero"),
        pytest.param(950, "950", id="950"),
        pytest.param(999, "999", id="999"),
        pytest.param(1000, "1k", id="1k"),
        pytest.param(1050, "1.1k", id="1.05k-rounds"),
        pytest.param(1234, "1.2k", id="1.2k"),
        pytest.param(41234, "41.2k", id="41.2k"),
        pytest.param(99999, "100k", id="99999"),
        pytest.param(120000, "120k", id="120k"),
        pytest.param(128000, "128k", id="128k"),
        pytest.param(111_616, "112k", id="112k"),
        pytest.param(999_999, "1M", id="999999"),
        pytest.param(1_000_000, "1M", id="1M"),
        pytest.param(1_048_576, "1.05M", id="1.05M"),
        pytest.param(1_500_000, "1.5M", id="1.5M"),
        pytest.param(10_000_000, "10M", id="10M"),
    ],
)
def test_compact(n: int, text: str) -> None:
    assert compact(n) == text


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        pytest.param(0.0, "$0.00", id="nothing"),
        pytest.param(1234.5, "$1,234.50", id="dollars"),
        pytest.param(0.01, "$0.01", id="a-cent"),
        pytest.param(0.0042, "$0.0042", id="below-a-cent"),
        pytest.param(0.00004, "< $0.0001", id="tiny"),
    ],
)
def test_format_usd(amount: float, text: str) -> None:
    assert format_usd(amount) == text
