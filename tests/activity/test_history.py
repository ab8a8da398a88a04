"""The usage history: every request recorded, its cost, the report's sums, and the last
conversation as the ledger keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.usage_reports import AGENT, SETTINGS, TOOLS, report, system, user
from tokengauge.activity.history import LastConversation
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Usage
from tokengauge.protocol import RecordUsageParams
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        pytest.param(
            {"modelId": "gpt-4o", "inputTokens": 900, "outputTokens": 12},
            LastConversation("gpt-4o", 900, 12),
            id="whole",
        ),
        pytest.param(
            {"modelId": "gpt-4o", "inputTokens": 900, "outputTokens": None},
            LastConversation("gpt-4o", 900),
            id="no-output",
        ),
        pytest.param({"modelId": "gpt-4o", "inputTokens": "900"}, None, id="text-count"),
        pytest.param({"modelId": "gpt-4o", "inputTokens": True}, None, id="boolean-count"),
        pytest.param({"modelId": 4, "inputTokens": 900}, None, id="numeric-id"),
        pytest.param([1, 2], None, id="not-an-object"),
        pytest.param(None, None, id="absent"),
    ],
)
def test_last_conversation_from_the_ledger(
    document: object, expected: LastConversation | None
) -> None:
    assert LastConversation.from_document(document) == expected
    if expected is not None:
        assert LastConversation.from_document(expected.to_document()) == expected


def test_helper_requests_are_still_recorded_in_usage(tmp_path: Path):
    """...in the ledger's history and as the dashboard's latest request; not on the status."""
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    report(gauge, AGENT, TOOLS, 900)
    report(gauge, [system("You write short titles."), user("title please")], [], 60)
    assert [r["inputTokens"] for r in gauge.ledger.recent_usage()] == [900, 60]
    dashboard = gauge.usage_report()
    assert dashboard.latest is not None and dashboard.latest.input_tokens == 60
    assert dashboard.status is not None and dashboard.status.text.startswith("$(pulse) 900 /")


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
    tooltip = gauge.bar.status().tooltip
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
    tooltip = gauge.bar.status().tooltip
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
    assert "cost" not in gauge.bar.status().tooltip
    assert "Today" not in gauge.bar.status().tooltip
