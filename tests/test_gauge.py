"""Gauge: which request the status bar follows, and what it shows."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from tokengauge.formatting import compact
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, TextPart, Tool, Usage
from tokengauge.protocol import RecordUsageParams
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings

SETTINGS = ServerSettings(
    providers=(ProviderSettings(id="test"),),
    models=(
        ModelSettings(id="gpt-4o", provider="test"),
        ModelSettings(id="claude-sonnet-4-5", provider="test"),
    ),
)
TOOLS = [Tool("read_file", "Read a file.", {"type": "object"})]


def system(text: str) -> Message:
    return Message(role="system", content=[TextPart(text)])


def user(text: str) -> Message:
    return Message(role="user", content=[TextPart(text)])


def report(
    gauge: Gauge, messages: list[Message], tools: list[Tool], tokens: int, model: str = "gpt-4o"
) -> None:
    gauge.record_usage(RecordUsageParams(model, messages, Usage(tokens, 10), tools))


AGENT = [system("You are an expert AI programming assistant."), user("review this " * 50)]


def test_copilots_helper_requests_do_not_move_the_status(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))

    def shown(messages: list[Message], tools: list[Tool], tokens: int) -> str:
        report(gauge, messages, tools, tokens)
        return gauge.status().text

    assert shown(AGENT, TOOLS, 900).startswith("$(pulse) 900 / 112k")
    # A chat title: no tools, two messages. A lone question without tools: one message.
    assert shown([system("You write short titles."), user("title please")], [], 60).startswith(
        "$(pulse) 900 /"
    )
    assert shown([user("status please")], [], 40).startswith("$(pulse) 900 /")
    # Three messages without tools (ask mode, a summary) are a conversation; so is any request
    # with tools, however short.
    assert shown([*AGENT, user("and now?")], [], 950).startswith("$(pulse) 950 /")
    assert shown([user("go")], TOOLS, 910).startswith("$(pulse) 910 /")


def test_helper_requests_are_still_recorded_in_usage(tmp_path: Path):
    """...in the ledger's history and as the dashboard's latest request; not on the status."""
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    report(gauge, AGENT, TOOLS, 900)
    report(gauge, [system("You write short titles."), user("title please")], [], 60)
    assert [r["inputTokens"] for r in gauge.ledger.recent_usage()] == [900, 60]
    dashboard = gauge.usage_report()
    assert dashboard.latest is not None and dashboard.latest.input_tokens == 60
    assert dashboard.status is not None and dashboard.status.text.startswith("$(pulse) 900 /")


def test_no_history_says_how_many_models_are_ready(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    status = gauge.status()
    assert status.text == "$(pulse) 2 models ready"
    assert "GPT-4o, Claude Sonnet 4.5" in status.tooltip
    # A helper request alone leaves it so.
    report(gauge, [system("You write short titles."), user("title please")], [], 60)
    assert gauge.status().text == "$(pulse) 2 models ready"


def test_the_status_shows_the_share_of_the_input_budget(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    report(gauge, AGENT, TOOLS, 100_000, model="claude-sonnet-4-5")
    info = next(m for m in gauge.models() if m.id == "claude-sonnet-4-5")
    window = info.context_window  # in true tokens, where VS Code is told Copilot's units
    true_budget = gauge.max_input_tokens(gauge.model("claude-sonnet-4-5"))
    status = gauge.status()
    share = round(100_000 / true_budget * 100)
    assert status.text == f"$(pulse) 100k / {compact(true_budget)} · {share}%"
    assert f"100k of the model's window ({compact(window)} = " in status.tooltip
    assert f"{round(100_000 / window * 100)}%" in status.tooltip
    # 100k is 50% of the 200k window but 54% of the 184k budget: text and colour say the budget's.
    assert status.severity == "info"
    report(gauge, AGENT, TOOLS, 140_000, model="claude-sonnet-4-5")
    assert gauge.status().text.endswith(f"· {round(140_000 / true_budget * 100)}%")
    assert gauge.status().severity == "warning"  # 76% of the budget


def test_the_tooltip_shows_the_correction_factors_the_log_printed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    estimate = gauge.estimate(gauge.model("claude-sonnet-4-5"), AGENT, TOOLS)
    with caplog.at_level(logging.INFO, logger="tokengauge"):
        report(gauge, AGENT, TOOLS, round(estimate.raw_total * 1.3), model="claude-sonnet-4-5")
    logged = re.search(r"ratios text (\S+), CJK (\S+), tools ([^;]+);", caplog.text)
    assert logged is not None
    assert float(logged[1]) != pytest.approx(estimate.ratios["text"])  # it learned something
    text, cjk, tools = logged.groups()
    assert f"text {text}, CJK text {cjk}, tool definitions {tools}" in gauge.status().tooltip, (
        gauge.status().tooltip
    )


def test_a_new_session_starts_from_the_last_conversation(tmp_path: Path):
    first = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    report(first, AGENT, TOOLS, 18_400, model="claude-sonnet-4-5")
    report(first, [system("You write short titles."), user("title please")], [], 60)
    first.ledger.close()

    second = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    status = second.status()
    assert status.text.startswith("$(pulse) 18.4k / 184k · 10%")
    assert status.tooltip.startswith("**Claude Sonnet 4.5** — last request (in an earlier session)")
    assert "| output | 10 |" in status.tooltip
    second.ledger.close()

    # A model no longer offered: back to the models ready.
    gone = ServerSettings(providers=SETTINGS.providers, models=SETTINGS.models[:1])
    third = Gauge(gone, Ledger(tmp_path / "ledger"))
    assert third.status().text == "$(pulse) 1 model ready"


def test_each_request_records_its_cost_and_the_report_sums_them(tmp_path: Path):
    settings = ServerSettings(
        providers=(ProviderSettings(id="test"),),
        models=(
            ModelSettings(id="gpt-4o", provider="test"),  # built-in list prices: $2.50 / $10
            ModelSettings(id="acme-7b", provider="test", context_window=32_000),  # no price
        ),
    )
    gauge = Gauge(settings, Ledger(tmp_path / "ledger"))
    report(gauge, AGENT, TOOLS, 960)
    report(gauge, AGENT, TOOLS, 900, model="acme-7b")
    report(gauge, [*AGENT, user("and?")], TOOLS, 1_000)
    each = (960 * 2.5 + 10 * 10.0) / 1e6, (1_000 * 2.5 + 10 * 10.0) / 1e6
    history = gauge.ledger.recent_usage()
    assert [record.get("costUsd") for record in history] == [
        pytest.approx(each[0]),
        None,
        pytest.approx(each[1]),
    ]
    assert history[1]["costUsd"] is None  # no price known: no cost, not zero
    dashboard = gauge.usage_report()
    [cost] = dashboard.costs
    assert (cost.model_id, cost.requests) == ("gpt-4o", 2)
    assert cost.total_usd == cost.today_usd == pytest.approx(sum(each))
    assert dashboard.today_usd == pytest.approx(sum(each))
    tooltip = gauge.status().tooltip
    assert "| cost (estimated) | $0.0026 |" in tooltip.splitlines()
    assert "Today on this model: $0.0051 (estimated)" in tooltip
    assert all(record["costSource"] == "estimate" for record in history)


def test_the_cost_the_api_reports_wins_over_the_price_table(tmp_path: Path):
    settings = ServerSettings(
        providers=(ProviderSettings(id="test"),),
        models=(ModelSettings(id="gpt-4o", provider="test"),),  # $2.50 / $10 per million
    )
    gauge = Gauge(settings, Ledger(tmp_path / "ledger"))
    report(gauge, AGENT, TOOLS, 960)
    said = Usage(1_000, 10, cost_usd=0.25)  # far from the table's $0.0026: the API's word wins
    gauge.record_usage(RecordUsageParams("gpt-4o", [*AGENT, user("and?")], said, TOOLS))
    estimated = (960 * 2.5 + 10 * 10.0) / 1e6
    history = gauge.ledger.recent_usage()
    assert [(r["costUsd"], r["costSource"]) for r in history] == [
        (pytest.approx(estimated), "estimate"),
        (0.25, "reported"),
    ]
    [cost] = gauge.usage_report().costs
    assert cost.total_usd == pytest.approx(0.25 + estimated)
    assert cost.reported_usd == cost.today_reported_usd == 0.25
    tooltip = gauge.status().tooltip
    assert "| cost (reported by the API) | $0.25 |" in tooltip.splitlines()
    assert "Today on this model: $0.25 ($0.25 reported by the API, $0.0025 estimated)" in tooltip
    totals = gauge.dashboard()().totals
    assert (totals.reported_usd, totals.estimated_usd) == (0.25, pytest.approx(estimated))


def test_no_price_no_cost_in_the_report_or_the_tooltip(tmp_path: Path):
    settings = ServerSettings(
        providers=(ProviderSettings(id="test"),),
        models=(ModelSettings(id="acme-7b", provider="test", context_window=32_000),),
    )
    gauge = Gauge(settings, Ledger(tmp_path / "ledger"))
    report(gauge, AGENT, TOOLS, 900, model="acme-7b")
    dashboard = gauge.usage_report()
    assert (dashboard.costs, dashboard.today_usd) == ([], None)
    assert "cost" not in gauge.status().tooltip
    assert "Today" not in gauge.status().tooltip


def test_the_tooltip_gives_the_conversations_cost_and_todays(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))  # gpt-4o: list prices $2.50 / $10
    report(gauge, AGENT, TOOLS, 960)
    report(gauge, [*AGENT, user("and?")], TOOLS, 1_000)  # the same chat, one turn on
    report(gauge, [system("Another chat."), user("hello " * 40)], TOOLS, 300)  # another chat
    each = [(tokens * 2.5 + 10 * 10.0) / 1e6 for tokens in (960, 1_000, 300)]
    tooltip = gauge.status().tooltip
    assert "This conversation: $0.0008" in tooltip  # the last chat: its one request
    assert f"Today on this model: ${sum(each):.4f}" in tooltip
    report(gauge, [*AGENT, user("and?"), user("more")], TOOLS, 1_100)  # back to the first chat
    first = sum(each[:2]) + (1_100 * 2.5 + 100) / 1e6
    assert f"This conversation: ${first:.4f}" in gauge.status().tooltip


def test_a_picked_context_size_is_the_window_everything_uses_and_is_kept(tmp_path: Path):
    settings = ServerSettings(
        providers=(ProviderSettings(id="test"),),
        models=(ModelSettings(id="gpt-4.1", provider="test"),),
    )
    gauge = Gauge(settings, Ledger(tmp_path / "ledger"))
    model = gauge.model("gpt-4.1")
    [full] = gauge.models()
    assert full.context_window > 200_000 and full.choices is not None
    assert gauge.choose_context_size(model, 200_000) is True
    assert gauge.choose_context_size(model, 200_000) is False  # no change, nothing to re-list
    [small] = gauge.models()
    assert small.context_window == 200_000
    assert small.max_input_tokens + small.max_output_tokens == 200_000
    listed = compact(full.context_window)
    assert f"200k-token window (picked in the model's options; {listed} listed)" in small.tooltip
    assert "errors" not in small.tooltip
    assert gauge.max_input_tokens(model) < 200_000 and small.max_input_tokens < 200_000
    assert small.max_input_tokens < full.max_input_tokens
    report(gauge, AGENT, TOOLS, 100_000, model="gpt-4.1")
    assert gauge.status().text == "$(pulse) 100k / 184k · 54%"
    # A new session keeps the pick; picking the whole window again drops it.
    later = Gauge(settings, Ledger(tmp_path / "ledger"))
    assert later.models()[0].context_window == 200_000
    assert later.choose_context_size(later.model("gpt-4.1"), full.context_window) is True
    assert later.models()[0] == full
