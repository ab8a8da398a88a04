"""Tests for tokengauge.status: compact numbers, severity thresholds, status text and tooltip."""

from __future__ import annotations

import pytest

from tokengauge.calibration.estimates import MessageEstimate, RequestEstimate
from tokengauge.counting.request import RequestFeatures, TextCount, ToolWalk
from tokengauge.protocol import Status
from tokengauge.status import compact, render_status, severity_for


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
    ("fill", "severity"),
    [
        pytest.param(0.0, "info", id="empty"),
        pytest.param(0.7499, "info", id="below-warning"),
        pytest.param(0.75, "warning", id="at-warning"),
        pytest.param(0.8999, "warning", id="below-error"),
        pytest.param(0.90, "error", id="at-error"),
        pytest.param(1.5, "error", id="over"),
    ],
)
def test_severity_thresholds(fill: float, severity: str) -> None:
    assert severity_for(fill) == severity


@pytest.mark.parametrize(
    ("used", "max_input", "severity"),
    [
        pytest.param(74, 100, "info", id="74%"),
        pytest.param(75, 100, "warning", id="75%"),
        pytest.param(89, 100, "warning", id="89%"),
        pytest.param(90, 100, "error", id="90%"),
        pytest.param(3, 4, "warning", id="3/4"),
        pytest.param(9, 10, "error", id="9/10"),
        pytest.param(1, 0, "error", id="no-budget"),
    ],
)
def test_render_status_severity(used: int, max_input: int, severity: str) -> None:
    assert render_status("m", used, max_input).severity == severity


def test_render_status_text() -> None:
    status = render_status("GPT-4o", 41_234, 120_000)
    assert isinstance(status, Status)
    assert status.text == "$(pulse) 41.2k / 120k · 34%"
    assert status.severity == "info"


@pytest.mark.parametrize(
    ("used", "max_input", "text"),
    [
        pytest.param(0, 111_616, "$(pulse) 0 / 112k · 0%", id="empty"),
        pytest.param(950, 1000, "$(pulse) 950 / 1k · 95%", id="small"),
        pytest.param(1_048_576, 1_048_576, "$(pulse) 1.05M / 1.05M · 100%", id="full"),
        pytest.param(150_000, 100_000, "$(pulse) 150k / 100k · 150%", id="over"),
    ],
)
def test_render_status_text_table(used: int, max_input: int, text: str) -> None:
    assert render_status("m", used, max_input).text == text


def test_tooltip_without_estimate() -> None:
    tooltip = render_status("GPT-4o", 41_234, 120_000).tooltip
    assert "**GPT-4o**" in tooltip
    assert "| **input (API)** | **41,234** |" in tooltip
    assert "| input budget | 120,000 |" in tooltip
    assert "| system |" not in tooltip
    assert "| output |" not in tooltip
    assert "API ÷ tiktoken" not in tooltip


def test_tooltip_rows_per_category() -> None:
    messages = (
        MessageEstimate(tokens=3_150, source="estimate"),
        MessageEstimate(tokens=1_200, source="actual", actual=1_176),
        MessageEstimate(tokens=30_500, source="estimate"),
        MessageEstimate(tokens=2_345, source="actual", actual=2_299),
    )
    counts = (TextCount(3_000), TextCount(1_150), TextCount(29_000, 120), TextCount(2_300))
    features = RequestFeatures(
        messages=counts,
        roles=("system", "user", "assistant", "user"),
        digests=("a", "b", "c", "d"),
        walk=ToolWalk(tools=3, json=5_000),
    )
    ratios = {"text": 1.0412, "cjk": 0.75, "tools": 1.1, "message": 4.2, "fixed": 3.0}
    estimate = RequestEstimate(
        tools=5_250, fixed=3, messages=messages, features=features, ratios=ratios
    )
    message_total = 1_200 + 30_500 + 2_345
    total = 3_150 + 5_250 + 3 + message_total

    status = render_status("Claude Sonnet 4.5", 41_234, 120_000, estimate, output_tokens=812)
    tooltip = status.tooltip
    lines = tooltip.splitlines()

    assert lines[0].startswith("**Claude Sonnet 4.5**")
    assert "| system | 3,150 |" in lines
    assert "| tools | 5,250 |" in lines
    assert f"| messages (3, 2 from API actuals) | {message_total:,} |" in lines
    assert f"| our estimate | {total:,} |" in lines
    assert "| **input (API)** | **41,234** |" in lines
    assert "| output | 812 |" in lines
    assert "| input budget | 120,000 |" in lines
    assert "| request overhead | 3 |" in lines
    assert "| API ÷ tiktoken: text, CJK, tools | 1.041, 0.750, 1.100 |" in lines
    assert "| overhead per message, per request | 4.2, 3.0 |" in lines
    # A well-formed markdown table: a header, its separator, then only table rows.
    table = lines[lines.index("| | tokens |") :]
    assert table[1] == "|---|---:|"
    assert all(line.startswith("|") and line.endswith("|") for line in table)
