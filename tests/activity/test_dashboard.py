"""The dashboard's sums: per day and model, per conversation, and in all."""

from __future__ import annotations

import datetime
import json
import math

import pytest

from tokengauge.activity.cost import start_of_day
from tokengauge.activity.dashboard import build, kept_since, models_seen
from tokengauge.activity.record import RequestRecord, read_record

NOW = datetime.datetime(2026, 11, 24, 15, 0).timestamp()
TODAY = start_of_day(NOW)
YESTERDAY = TODAY - 3_600


def record(time: float, model: str = "gpt-4o", **fields: object) -> RequestRecord:
    base: dict[str, object] = {
        "time": time,
        "model_id": model,
        "kind": "turn",
        "outcome": "answered",
        "estimated_tokens": 1_000,
        "window": 128_000,
        "max_input_tokens": 111_616,
        "conversation": "c1",
        "input_tokens": 1_000,
        "output_tokens": 100,
    }
    return RequestRecord(**{**base, **fields})  # type: ignore[arg-type]


RECORDS = [
    record(YESTERDAY, cost_usd=0.5, cached_tokens=200),
    record(TODAY + 60, cost_usd=0.25, cached_tokens=600, kind="summarize"),
    record(TODAY + 120, model="acme-7b", conversation="c2"),  # no price: no cost
    record(
        TODAY + 180,
        outcome="failed",
        error="rate limited (429)",
        input_tokens=None,
        output_tokens=None,
        retries=2,
    ),
    record(TODAY + 240, kind="helper", conversation=None, cost_usd=0.01),
]


def test_days_sum_tokens_and_known_costs_per_model():
    data = build(RECORDS, [], NOW, 30)
    rows = {(row.day, row.model_id): row for row in data.days}
    today, yesterday = (datetime.date.fromtimestamp(t).isoformat() for t in (NOW, YESTERDAY))
    assert rows[yesterday, "gpt-4o"].cost_usd == 0.5
    gpt = rows[today, "gpt-4o"]
    assert (gpt.requests, gpt.input_tokens, gpt.cached_tokens, gpt.output_tokens) == (
        3,
        2_000,
        600,
        200,
    )
    assert gpt.cost_usd == pytest.approx(0.26) and gpt.unpriced == 0
    acme = rows[today, "acme-7b"]
    assert (acme.cost_usd, acme.unpriced) == (None, 1)  # unknown, not zero


def test_conversations_and_totals():
    data = build(RECORDS, [], NOW, 30)
    c1, c2 = data.conversations
    assert (c1.id, c1.requests, c1.summarizations, c1.input_tokens) == ("c1", 3, 1, 2_000)
    assert c1.cost_usd == pytest.approx(0.75) and c1.models == ["gpt-4o"]
    assert (c2.id, c2.cost_usd) == ("c2", None)
    totals = data.totals
    assert (totals.requests, totals.failed, totals.input_tokens) == (5, 1, 4_000)
    assert totals.cost_usd == pytest.approx(0.76)
    assert totals.today_usd == pytest.approx(0.26)
    assert totals.cache_hit_rate == pytest.approx(800 / 4_000)


def test_sums_of_money_keep_the_reported_and_the_estimated_parts_apart():
    records = [
        record(YESTERDAY, cost_usd=0.5, cost_source="reported"),
        record(TODAY + 60, cost_usd=0.25, cost_source="reported"),
        record(TODAY + 120, cost_usd=0.125),  # the price table's
        record(TODAY + 180, model="acme-7b", conversation="c2", cost_usd=0.0625),
    ]
    data = build(records, [], NOW, 30)
    day = datetime.date.fromtimestamp(NOW).isoformat()
    rows = {(row.day, row.model_id): row for row in data.days}
    gpt = rows[day, "gpt-4o"]
    assert (gpt.cost_usd, gpt.reported_usd, gpt.estimated_usd) == (0.375, 0.25, 0.125)
    acme = rows[day, "acme-7b"]
    assert (acme.reported_usd, acme.estimated_usd) == (None, 0.0625)
    c1, c2 = data.conversations
    assert (c1.cost_usd, c1.reported_usd, c1.estimated_usd) == (0.875, 0.75, 0.125)
    assert (c2.reported_usd, c2.estimated_usd) == (None, 0.0625)
    totals = data.totals
    assert (totals.cost_usd, totals.reported_usd, totals.estimated_usd) == (0.9375, 0.75, 0.1875)
    assert (totals.today_reported_usd, totals.today_estimated_usd) == (0.25, 0.1875)
    assert [row.cost_source for row in data.requests] == ["reported"] * 2 + ["estimate"] * 2
    wire = data.to_json()
    assert wire["requests"][0]["costSource"] == "reported"
    assert wire["totals"]["todayEstimatedUsd"] == 0.1875


def test_an_older_record_without_a_cost_source_is_an_estimate():
    stored = record(TODAY, cost_usd=0.5, cost_source="reported").to_json()
    assert read_record(stored) == record(TODAY, cost_usd=0.5, cost_source="reported")
    del stored["costSource"]
    older = read_record(stored)
    assert older is not None and older.cost_source == "estimate"
    stored["costSource"] = "guessed"  # damage: not a record
    assert read_record(stored) is None


def test_what_the_cache_saved_sums_where_it_is_known():
    records = [
        record(YESTERDAY, cached_tokens=200_000, cache_saved_usd=0.25),
        record(TODAY, cached_tokens=600_000, cache_saved_usd=0.75),
        record(TODAY + 60, model="acme-7b", cached_tokens=500_000),  # no cached price: unknown
    ]
    data = build(records, [], NOW, 30)
    assert data.totals.cache_saved_usd == pytest.approx(1.0)
    assert [row.cache_saved_usd for row in data.requests] == [0.25, 0.75, None]
    assert data.to_json()["totals"]["cacheSavedUsd"] == pytest.approx(1.0)
    assert build(records[2:], [], NOW, 30).totals.cache_saved_usd is None  # never zero for it
    stored = records[0].to_json()
    stored["cacheSavedUsd"] = math.inf
    assert (read_record(stored) or records[0]).cache_saved_usd is None


def test_nothing_yet():
    data = build([], [], NOW, 7)
    assert (data.requests, data.days, data.conversations) == ([], [], [])
    assert (data.totals.cost_usd, data.totals.cache_hit_rate) == (None, None)


def test_rows_keep_each_record_with_a_stable_key():
    data = build(RECORDS, models_seen(RECORDS), NOW, 30)
    assert [row.seq for row in data.requests] == sorted({round(r.time * 1e6) for r in RECORDS})
    assert [model.id for model in data.models] == ["acme-7b", "gpt-4o"]
    json = data.to_json()
    assert json["requests"][3]["error"] == "rate limited (429)"
    assert json["totals"]["cacheHitRate"] == pytest.approx(0.2)


def test_stored_records_read_back_and_others_are_skipped():
    stored = RECORDS[3].to_json()
    assert read_record(stored) == RECORDS[3]
    assert read_record({"kind": "usage", "time": NOW, "modelId": "gpt-4o"}) is None  # older form
    assert read_record({**stored, "window": 0}) is None
    assert read_record({**stored, "outcome": "exploded"}) is None


def test_a_stored_infinite_cost_reads_as_unknown():
    """A price of 1e308 made costs infinite, kept in the history for the whole retention: read
    back, they must leave the dashboard's sums numbers JSON can carry."""
    stored = record(TODAY + 300).to_json()  # as an older server wrote it (JSON's "Infinity")
    read = read_record(stored | {"costUsd": math.inf, "ratios": {"text": math.nan, "cjk": 1.5}})
    assert read is not None and read.cost_usd is None and read.ratios == {"cjk": 1.5}
    data = build([*RECORDS, read], models_seen(RECORDS), NOW, 30).to_json()
    json.dumps(data, allow_nan=False)
    assert data["totals"]["requests"] == len(RECORDS) + 1
    assert data["totals"]["costUsd"] == pytest.approx(0.76)


def test_retention():
    assert kept_since(NOW, 30) == NOW - 30 * 86_400
