"""The status bar of a `Gauge`: which request it follows, and what it shows."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from tests.usage_reports import AGENT, SETTINGS, TOOLS, report, system, user
from tokengauge.formatting import compact
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, Tool
from tokengauge.settings import ServerSettings


def test_copilots_helper_requests_do_not_move_the_status(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))

    def shown(messages: list[Message], tools: list[Tool], tokens: int) -> str:
        report(gauge, messages, tools, tokens)
        return gauge.bar.status().text

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


def test_no_history_says_how_many_models_are_ready(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    status = gauge.bar.status()
    assert status.text == "$(pulse) 2 models ready"
    assert "GPT-4o, Claude Sonnet 4.5" in status.tooltip
    # A helper request alone leaves it so.
    report(gauge, [system("You write short titles."), user("title please")], [], 60)
    assert gauge.bar.status().text == "$(pulse) 2 models ready"


def test_the_status_shows_the_share_of_the_input_budget(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    report(gauge, AGENT, TOOLS, 100_000, model="claude-sonnet-4-5")
    info = next(m for m in gauge.models() if m.id == "claude-sonnet-4-5")
    window = info.context_window  # in true tokens, where VS Code is told Copilot's units
    true_budget = gauge.max_input_tokens(gauge.offer.model("claude-sonnet-4-5"))
    status = gauge.bar.status()
    share = round(100_000 / true_budget * 100)
    assert status.text == f"$(pulse) 100k / {compact(true_budget)} · {share}%"
    assert f"100k of the model's window ({compact(window)} = " in status.tooltip
    assert f"{round(100_000 / window * 100)}%" in status.tooltip
    # 100k is 50% of the 200k window but 54% of the 184k budget: text and colour say the budget's.
    assert status.severity == "info"
    report(gauge, AGENT, TOOLS, 140_000, model="claude-sonnet-4-5")
    assert gauge.bar.status().text.endswith(f"· {round(140_000 / true_budget * 100)}%")
    assert gauge.bar.status().severity == "warning"  # 76% of the budget


def test_the_tooltip_shows_the_correction_factors_the_log_printed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    estimate = gauge.counts.estimate(gauge.offer.model("claude-sonnet-4-5"), AGENT, TOOLS)
    with caplog.at_level(logging.INFO, logger="tokengauge"):
        report(gauge, AGENT, TOOLS, round(estimate.raw_total * 1.3), model="claude-sonnet-4-5")
    logged = re.search(r"ratios text (\S+), CJK (\S+), tools ([^;]+);", caplog.text)
    assert logged is not None
    assert float(logged[1]) != pytest.approx(estimate.ratios["text"])  # it learned something
    text, cjk, tools = logged.groups()
    assert f"text {text}, CJK text {cjk}, tool definitions {tools}" in gauge.bar.status().tooltip, (
        gauge.bar.status().tooltip
    )


def test_a_new_session_starts_from_the_last_conversation(tmp_path: Path):
    first = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    report(first, AGENT, TOOLS, 18_400, model="claude-sonnet-4-5")
    report(first, [system("You write short titles."), user("title please")], [], 60)
    first.ledger.close()

    second = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    status = second.bar.status()
    assert status.text.startswith("$(pulse) 18.4k / 184k · 10%")
    assert status.tooltip.startswith("**Claude Sonnet 4.5** — last request (in an earlier session)")
    assert "| output | 10 |" in status.tooltip
    second.ledger.close()

    # A model no longer offered: back to the models ready.
    gone = ServerSettings(providers=SETTINGS.providers, models=SETTINGS.models[:1])
    third = Gauge(gone, Ledger(tmp_path / "ledger"))
    assert third.bar.status().text == "$(pulse) 1 model ready"


def test_the_tooltip_gives_the_conversations_cost_and_todays(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))  # gpt-4o: list prices $2.50 / $10
    report(gauge, AGENT, TOOLS, 960)
    report(gauge, [*AGENT, user("and?")], TOOLS, 1_000)  # the same chat, one turn on
    report(gauge, [system("Another chat."), user("hello " * 40)], TOOLS, 300)  # another chat
    each = [(tokens * 2.5 + 10 * 10.0) / 1e6 for tokens in (960, 1_000, 300)]
    tooltip = gauge.bar.status().tooltip
    assert "This conversation: $0.0008" in tooltip  # the last chat: its one request
    assert f"Today on this model: ${sum(each):.4f}" in tooltip
    report(gauge, [*AGENT, user("and?"), user("more")], TOOLS, 1_100)  # back to the first chat
    first = sum(each[:2]) + (1_100 * 2.5 + 100) / 1e6
    assert f"This conversation: ${first:.4f}" in gauge.bar.status().tooltip
