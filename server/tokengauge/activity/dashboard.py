"""The dashboard's data: the usage history's request records, summed per day, model and
conversation (`extension/dashboard/data.ts` is the same shape on the other side).

Sums of tokens are over the requests the API reported usage for; sums of money over those with a
known cost (a day or conversation none of whose requests has one shows no cost, never zero). A
sum of money never mixes silently what the API reported with what the price table estimated:
beside each `cost_usd` stand its `reported_usd` and `estimated_usd` parts (None: no such part).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from tokengauge.activity.cost import CostSource, start_of_day
from tokengauge.activity.record import RequestRecord
from tokengauge.messages import unstructure
from tokengauge.models.catalog import ModelSpec

SECONDS_PER_DAY = 86_400


@attrs.frozen
class RequestRow:
    """A request record with its key (`seq`)."""

    seq: int
    time: float
    model_id: str
    conversation: str | None
    kind: str
    outcome: str
    error: str | None
    estimated_tokens: int
    input_tokens: int | None
    cached_tokens: int
    cache_write_tokens: int
    output_tokens: int | None
    reasoning_tokens: int
    cost_usd: float | None
    cost_source: str
    cache_saved_usd: float | None
    window: int
    max_input_tokens: int
    trimmed_tokens: int
    ladder: dict[str, int]
    tool_docs_saved: int
    retries: int
    summarized: bool
    ratios: dict[str, float]
    cut: bool


@attrs.frozen
class DayModelRow:
    """One model's requests of one local day."""

    day: str
    model_id: str
    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    reported_usd: float | None = None
    estimated_usd: float | None = None
    unpriced: int = 0
    """Requests answered without a known cost."""


@attrs.frozen
class ConversationRow:
    """One conversation's requests."""

    id: str
    started: float
    ended: float
    requests: int
    summarizations: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    models: list[str]
    reported_usd: float | None = None
    estimated_usd: float | None = None


@attrs.frozen
class PricingRow:
    """A model's prices per million tokens."""

    input: float
    output: float
    cached_input: float | None
    cache_write: float | None
    reasoning: float | None


@attrs.frozen
class ModelRow:
    """A model as the dashboard names and sizes it."""

    id: str
    name: str
    window: int
    max_input_tokens: int
    pricing: PricingRow | None


@attrs.frozen
class Totals:
    """The whole history's sums."""

    requests: int
    failed: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    cost_usd: float | None
    today_usd: float | None
    cache_hit_rate: float | None
    """Cached ÷ input tokens of the requests with usage; None without any."""
    tool_docs_saved: int = 0
    """Tokens the tools' reduced documentation left out, over all the requests."""
    tool_docs_requests: int = 0
    """Requests that sent some tools' documentation reduced."""
    reported_usd: float | None = None
    estimated_usd: float | None = None
    today_reported_usd: float | None = None
    today_estimated_usd: float | None = None
    cache_saved_usd: float | None = None
    """What reading from the cache saved against fresh input, where the model's cached-input
    price was known; None when no such request read the cache."""


@attrs.frozen
class DashboardData:
    """`tokenGauge/dashboard`, and the data of `tokengauge report`."""

    generated: float
    retention_days: int
    models: list[ModelRow]
    requests: list[RequestRow]
    days: list[DayModelRow]
    conversations: list[ConversationRow]
    totals: Totals

    def to_json(self) -> dict[str, Any]:
        """The camelCase JSON the dashboard reads."""
        data: dict[str, Any] = unstructure(self)
        return data


def build(
    records: Sequence[RequestRecord],
    models: Iterable[ModelRow],
    now: float,
    retention_days: int,
) -> DashboardData:
    """The dashboard of `records` (oldest first) at time `now`."""
    return DashboardData(
        generated=now,
        retention_days=retention_days,
        models=list(models),
        requests=[_row(record) for record in records],
        days=_days(records),
        conversations=_conversations(records),
        totals=_totals(records, start_of_day(now)),
    )


def model_row(model: ModelSpec, window: int, max_input_tokens: int) -> ModelRow:
    """A model offered, with its sizes (true tokens) and its prices if known."""
    pricing = model.pricing
    prices = (
        None
        if pricing is None
        else PricingRow(
            input=pricing.input_per_m_tok,
            output=pricing.output_per_m_tok,
            cached_input=pricing.cached_input_per_m_tok,
            cache_write=pricing.cache_write_per_m_tok,
            reasoning=pricing.reasoning_per_m_tok,
        )
    )
    return ModelRow(model.id, model.name, window, max_input_tokens, prices)


def models_seen(records: Sequence[RequestRecord]) -> list[ModelRow]:
    """The models of `records`, sized as their newest request saw them (no names, no prices:
    what a report outside VS Code knows)."""
    newest = {record.model_id: record for record in records}
    return [
        ModelRow(model_id, model_id, record.window, record.max_input_tokens, None)
        for model_id, record in sorted(newest.items())
    ]


def kept_since(now: float, retention_days: int) -> float:
    """The oldest time a record is kept at, `retention_days` before `now`."""
    return now - retention_days * SECONDS_PER_DAY


def _row(record: RequestRecord) -> RequestRow:
    fields = attrs.asdict(record, recurse=False)
    return RequestRow(seq=record.seq, **fields)


def _add(total: float | None, cost: float | None) -> float | None:
    if cost is None:
        return total
    return cost if total is None else total + cost


def _day(time: float) -> str:
    return datetime.datetime.fromtimestamp(time).date().isoformat()


def _days(records: Sequence[RequestRecord]) -> list[DayModelRow]:
    rows: dict[tuple[str, str], DayModelRow] = {}
    for record in records:
        key = (_day(record.time), record.model_id)
        row = rows.get(key) or DayModelRow(*key)
        answered = record.input_tokens is not None
        rows[key] = attrs.evolve(
            row,
            requests=row.requests + 1,
            input_tokens=row.input_tokens + (record.input_tokens or 0),
            cached_tokens=row.cached_tokens + record.cached_tokens,
            output_tokens=row.output_tokens + (record.output_tokens or 0),
            cost_usd=_add(row.cost_usd, record.cost_usd),
            reported_usd=_add(row.reported_usd, _reported(record)),
            estimated_usd=_add(row.estimated_usd, _estimated(record)),
            unpriced=row.unpriced + (answered and record.cost_usd is None),
        )
    return sorted(rows.values(), key=lambda row: (row.day, row.model_id))


def _conversations(records: Sequence[RequestRecord]) -> list[ConversationRow]:
    grouped: dict[str, list[RequestRecord]] = {}
    for record in records:
        if record.conversation is not None:
            grouped.setdefault(record.conversation, []).append(record)
    rows = [
        ConversationRow(
            id=conversation,
            started=members[0].time,
            ended=members[-1].time,
            requests=len(members),
            summarizations=sum(member.kind == "summarize" for member in members),
            input_tokens=sum(member.input_tokens or 0 for member in members),
            output_tokens=sum(member.output_tokens or 0 for member in members),
            cost_usd=known_cost(members),
            models=list(dict.fromkeys(member.model_id for member in members)),
            reported_usd=known_cost(members, "reported"),
            estimated_usd=known_cost(members, "estimate"),
        )
        for conversation, members in grouped.items()
    ]
    return sorted(rows, key=lambda row: row.started)


def known_cost(records: Iterable[RequestRecord], source: CostSource | None = None) -> float | None:
    """The sum of the known costs of `records` (of those from `source` only, if given); None
    when none is known (never zero for it)."""
    return _sum_known(
        record.cost_usd for record in records if source is None or record.cost_source == source
    )


def _sum_known(amounts: Iterable[float | None]) -> float | None:
    total: float | None = None
    for amount in amounts:
        total = _add(total, amount)
    return total


def _reported(record: RequestRecord) -> float | None:
    return record.cost_usd if record.cost_source == "reported" else None


def _estimated(record: RequestRecord) -> float | None:
    return record.cost_usd if record.cost_source == "estimate" else None


def _totals(records: Sequence[RequestRecord], today: float) -> Totals:
    answered = [record for record in records if record.input_tokens is not None]
    input_tokens = sum(record.input_tokens or 0 for record in answered)
    cached = sum(record.cached_tokens for record in answered)
    todays = [record for record in records if record.time >= today]
    return Totals(
        requests=len(records),
        failed=sum(record.outcome == "failed" for record in records),
        input_tokens=input_tokens,
        cached_tokens=cached,
        output_tokens=sum(record.output_tokens or 0 for record in answered),
        cost_usd=known_cost(records),
        today_usd=known_cost(todays),
        cache_hit_rate=cached / input_tokens if input_tokens else None,
        tool_docs_saved=sum(record.tool_docs_saved for record in records),
        tool_docs_requests=sum(record.tool_docs_saved > 0 for record in records),
        reported_usd=known_cost(records, "reported"),
        estimated_usd=known_cost(records, "estimate"),
        today_reported_usd=known_cost(todays, "reported"),
        today_estimated_usd=known_cost(todays, "estimate"),
        cache_saved_usd=_sum_known(record.cache_saved_usd for record in answered),
    )
