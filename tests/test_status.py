"""Tests for tokengauge.status: severity thresholds, status text and tooltip."""

from __future__ import annotations

import attrs
import pytest

from tokengauge.activity.cost import CostSource, CostSum
from tokengauge.calibration.request_estimate import MessageEstimate, RequestEstimate
from tokengauge.counting.request import RequestFeatures, TextCount, ToolWalk
from tokengauge.formatting import compact
from tokengauge.protocol import Status
from tokengauge.status import (
    Figures,
    ready_status,
    render_status,
    severity_for,
)


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
def test_severity_follows_the_input_budget_not_the_window(
    used: int, max_input: int, severity: str
) -> None:
    # The window is twice the budget: the window's share would be half of it.
    status = render_status(Figures("m", used, max_input, 2 * max_input))
    assert status.severity == severity


@pytest.mark.parametrize(
    ("used", "severity"),
    [
        pytest.param(68, "info", id="68%"),
        pytest.param(744, "info", id="74.4%-shown-74"),
        pytest.param(746, "warning", id="74.6%-shown-75"),
        pytest.param(83, "warning", id="83%"),
        pytest.param(896, "error", id="89.6%-shown-90"),
    ],
)
def test_the_colour_speaks_of_the_share_the_text_shows(used: int, severity: str) -> None:
    # A budget of 100 (or 1,000) in a window of 120 (1,200): a yellow 68% or a red 83% would
    # be the window's share coloured by the budget's.
    budget = 1000 if used > 100 else 100
    status = render_status(Figures("m", used, budget, budget * 6 // 5))
    assert status.text.endswith(f" / {compact(budget)} · {round(used / budget * 100)}%")
    assert status.severity == severity


def test_text_is_the_used_tokens_over_the_input_budget() -> None:
    # maxInputTokens 28.7k + maxOutputTokens 4.3k: a 33k window, a 28.7k input budget.
    status = render_status(Figures("GPT-4o", 18_400, 28_700, 33_000))
    assert isinstance(status, Status)
    assert status.text == "$(pulse) 18.4k / 28.7k · 64%"
    assert status.severity == "info"


@pytest.mark.parametrize(
    ("used", "budget", "text"),
    [
        pytest.param(0, 111_616, "$(pulse) 0 / 112k · 0%", id="empty"),
        pytest.param(950, 1000, "$(pulse) 950 / 1k · 95%", id="small"),
        pytest.param(1_048_576, 1_048_576, "$(pulse) 1.05M / 1.05M · 100%", id="full"),
        pytest.param(150_000, 100_000, "$(pulse) 150k / 100k · 150%", id="over"),
    ],
)
def test_render_status_text_table(used: int, budget: int, text: str) -> None:
    assert render_status(Figures("m", used, budget, budget * 2)).text == text


def test_tooltip_labels_both_figures() -> None:
    tooltip = render_status(Figures("GPT-4o", 18_400, 28_700, 33_000)).tooltip
    assert tooltip.startswith("**GPT-4o** — last request\n")
    assert "| **input, as the API counted it** | **18,400** |" in tooltip
    assert "18.4k of the model's window (33k = 28.7k input + 4.3k output): 56%" in tooltip
    assert "18.4k of the input budget (28.7k): 64%" in tooltip
    assert "| system prompt |" not in tooltip
    assert "| output |" not in tooltip
    assert "Correction factors" not in tooltip


def test_tooltip_of_an_earlier_session() -> None:
    status = render_status(Figures("GPT-4o", 18_400, 28_700, 33_000, 512), earlier=True)
    assert status.tooltip.startswith("**GPT-4o** — last request (in an earlier session)\n")
    assert "| output | 512 |" in status.tooltip
    assert status.text == "$(pulse) 18.4k / 28.7k · 64%"


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
    # The ratios the estimate was made with (before the response) are not those shown: the
    # tooltip shows the factors in use now, the ones the log printed after learning.
    before = {"text": 1.0, "cjk": 1.0, "tools": 1.0, "message": 3.0, "fixed": 3.0}
    now = {"text": 1.0704, "cjk": 0.75, "tools": 1.1, "message": 4.2, "fixed": 3.0}
    estimate = RequestEstimate(
        tools=5_250, fixed=3, messages=messages, features=features, ratios=before
    )
    message_total = 1_200 + 30_500 + 2_345
    total = 3_150 + 5_250 + 3 + message_total

    figures = Figures("Claude Sonnet 4.5", 41_234, 120_000, 128_000, output_tokens=812)
    status = render_status(figures, estimate, now)
    tooltip = status.tooltip
    lines = tooltip.splitlines()

    assert lines[0] == "**Claude Sonnet 4.5** — last request"
    assert "| system prompt | 3,150 |" in lines
    assert "| tool definitions | 5,250 |" in lines
    assert f"| messages (3, 2 counted by the API before) | {message_total:,} |" in lines
    assert f"| our estimate | {total:,} |" in lines
    assert "| **input, as the API counted it** | **41,234** |" in lines
    assert "| output | 812 |" in lines
    assert "| overhead per request | 3 |" in lines
    assert (
        "Correction factors (measured ÷ estimated): text 1.070, CJK text 0.750, "
        "tool definitions 1.100  " in lines
    )
    assert "Overhead the API adds: 4.2 tokens per message, 3.0 per request" in lines
    # Folded away, one click from sight: the last paragraph, in a closed <details>.
    folded = tooltip[tooltip.rindex("\n\n<details>") :]
    assert folded.startswith("\n\n<details><summary>Calibration</summary>\n\n")
    assert "Correction factors" in folded and folded.endswith("</details>")
    assert "1.000" not in tooltip
    assert "tiktoken" not in tooltip
    # A well-formed markdown table: a header, its separator, then only table rows, then a blank
    # line before the next paragraph.
    header = lines.index("| | tokens |")
    end = lines.index("", header)
    assert lines[header + 1] == "|---|---:|"
    assert all(line.startswith("|") and line.endswith("|") for line in lines[header:end])


@pytest.mark.parametrize(
    ("names", "text", "in_tooltip", "severity"),
    [
        pytest.param(["GPT-4o"], "$(pulse) 1 model ready", "(GPT-4o)", "info", id="one"),
        pytest.param(
            ["GPT-4o", "o3", "Claude Sonnet 4.5"],
            "$(pulse) 3 models ready",
            "(GPT-4o, o3, Claude Sonnet 4.5)",
            "info",
            id="three",
        ),
        pytest.param(
            [f"M{i}" for i in range(12)],
            "$(pulse) 12 models ready",
            "M7 and 4 more)",
            "info",
            id="many",
        ),
        pytest.param([], "$(pulse) no models", "Add Models…", "warning", id="none"),
    ],
)
def test_ready_status(names: list[str], text: str, in_tooltip: str, severity: str) -> None:
    status = ready_status(names)
    assert status.text == text
    assert in_tooltip in status.tooltip
    assert status.severity == severity
    assert "%" not in status.text


@pytest.mark.parametrize(
    ("source", "today", "conversation", "expected"),
    [
        pytest.param(
            "estimate",
            CostSum(1.5),
            None,
            ["| cost (estimated) | $0.05 |", "Today on this model: $1.50 (estimated)"],
            id="estimated",
        ),
        pytest.param(
            "reported",
            CostSum(1.5, 1.5),
            CostSum(0.0512, 0.0512),
            [
                "| cost (reported by the API) | $0.05 |",
                "This conversation: $0.05 (reported by the API)  ",
                "Today on this model: $1.50 (reported by the API)",
            ],
            id="reported",
        ),
        pytest.param(
            "reported",
            CostSum(1.5, 1.25),
            None,
            [
                "| cost (reported by the API) | $0.05 |",
                "Today on this model: $1.50 ($1.25 reported by the API, $0.25 estimated)",
            ],
            id="partly-estimated",
        ),
    ],
)
def test_tooltip_shows_the_cost_and_todays_total_and_where_they_come_from(
    source: CostSource, today: CostSum, conversation: CostSum | None, expected: list[str]
) -> None:
    figures = Figures(
        "GPT-4o",
        18_400,
        28_700,
        33_000,
        512,
        cost_usd=0.0512,
        cost_source=source,
        today_usd=today,
        conversation_usd=conversation,
    )
    lines = render_status(figures).tooltip.splitlines()
    for line in expected:
        assert line in lines
    unknown = render_status(Figures("GPT-4o", 18_400, 28_700, 33_000, 512)).tooltip
    assert "cost" not in unknown and "Today" not in unknown


def test_tooltip_says_what_was_read_from_the_cache_and_what_that_saved() -> None:
    figures = Figures("GPT-4o", 18_400, 28_700, 33_000, 512, cost_usd=0.03, cached_tokens=15_360)
    lines = render_status(figures).tooltip.splitlines()
    assert "| of which read from the cache | 15,360 (83%) |" in lines
    assert not any("saved by the cache" in line for line in lines)  # no cached price known
    saving = attrs.evolve(figures, cache_saved_usd=0.0192)
    assert "| saved by the cache (estimated) | $0.02 |" in render_status(saving).tooltip
    uncached = render_status(Figures("GPT-4o", 18_400, 28_700, 33_000, 512)).tooltip
    assert "cache" not in uncached


def test_tooltip_says_what_the_tool_documentation_saved() -> None:
    features = RequestFeatures(
        messages=(TextCount(900),),
        roles=("user",),
        digests=("a",),
        walk=ToolWalk(tools=39, json=3_685, left_out=8_823),
    )
    estimate = RequestEstimate(
        tools=3_870,
        fixed=3,
        messages=(MessageEstimate(tokens=950, source="estimate"),),
        features=features,
        ratios={},
        tools_saved=9_265,
    )
    figures = Figures(
        "Qwen3 Coder", 4_900, 28_000, 32_000, tool_docs="progressive", tool_docs_total=40_123
    )
    tooltip = render_status(figures, estimate).tooltip
    assert "| tool definitions (progressive) | 3,870 |" in tooltip.splitlines()
    assert (
        "Tool documentation `progressive` saved about 9,265 tokens on this request, "
        "40,123 in total (the usage history)"
    ) in tooltip
    full = attrs.evolve(estimate, tools_saved=0)
    assert "saved" not in render_status(Figures("Qwen3 Coder", 4_900, 28_000, 32_000), full).tooltip


def test_the_reasoning_sent_back_is_a_row_of_the_messages_only_when_there_is_some() -> None:
    messages = (MessageEstimate(tokens=1_000, source="estimate"),) * 2
    counts = (TextCount(900), TextCount(5_000))

    def tooltip(reasoning: int) -> list[str]:
        features = RequestFeatures(
            messages=counts,
            roles=("user", "assistant"),
            digests=("a", "b"),
            walk=ToolWalk(tools=0, json=0),
            reasoning=reasoning,
        )
        ratios = {"text": 1.25, "cjk": 1.0, "tools": 1.0, "message": 3.0, "fixed": 3.0}
        estimate = RequestEstimate(
            tools=0, fixed=3, messages=messages, features=features, ratios=ratios
        )
        figures = Figures("DeepSeek V4 Pro", 2_003, 128_000, 136_192)
        return render_status(figures, estimate, ratios).tooltip.splitlines()

    with_reasoning = tooltip(3_200)  # raw tokens, at the text's ratio in the estimate
    row = with_reasoning.index("| of which the model's reasoning, sent back | ~4,000 |")
    assert with_reasoning[row - 1].startswith("| messages (2, 0 counted by the API before)")
    assert not any("reasoning" in line for line in tooltip(0))
