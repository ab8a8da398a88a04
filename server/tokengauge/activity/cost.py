"""What a request cost: its usage priced per kind of token, and the totals of the usage history.

The rules (`request_cost`):

* fresh input -- everything the model read (`Usage.total_input_tokens`) less cache reads and
  cache writes -- at the input price;
* cache reads at the cached-input price, else the input price (a cache hit never costs more than
  fresh input, so this can over-state a cost but never under-state it);
* cache writes at the cache-write price; without one a request that wrote the cache has no known
  cost (writes cost more than input at Anthropic, so the input price would under-state it);
* output at the output price, except its reasoning tokens at the reasoning price (else the
  output price). Both APIs count reasoning inside the output (OpenAI's `completion_tokens`
  includes `reasoning_tokens`, Anthropic's `output_tokens` includes thinking), so the reasoning
  tokens are taken out of the output before it is priced: nothing is counted twice.

No pricing: no cost (None), never a guess.

The price table is a guess beside what the API itself says a response cost: OpenRouter's
`usage.cost`, xAI's `usage.cost_in_usd_ticks`, a LiteLLM proxy's `x-litellm-response-cost`
header. Where the response states its cost (`Usage.cost_usd`), that is the request's cost, marked
`reported`; the price table's is marked `estimate` (`request_cost_of`). Every reported figure is
read by `models.prices.reported_usd`: a number from 0 to the most one request can cost, anything
else none at all.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable, Mapping
from typing import Literal, TypeGuard

import attrs

from tokengauge.formatting import format_usd
from tokengauge.messages import Usage
from tokengauge.models.prices import PER, plausible_cost, reported_usd
from tokengauge.settings import Pricing

CostSource = Literal["reported", "estimate"]
"""Where a request's cost comes from: the API's own figure, or the price table."""


def request_cost_of(usage: Usage, pricing: Pricing | None) -> tuple[float | None, CostSource]:
    """A response's cost and where it comes from: what the API reported, else the price
    table's estimate (None when neither is known). A reported cost more than the dearest price
    for each of the request's tokens is no reported cost."""
    reported = reported_usd(usage.cost_usd)
    tokens = usage.total_input_tokens + usage.output_tokens
    if reported is not None and plausible_cost(reported, tokens):
        return reported, "reported"
    return request_cost(usage, pricing), "estimate"


def request_cost(usage: Usage, pricing: Pricing | None) -> float | None:
    """The cost in US dollars of one response's `usage` at `pricing`; None when unknown."""
    if pricing is None:
        return None
    write_price = pricing.cache_write_per_m_tok
    if usage.cache_write_tokens > 0 and write_price is None:
        return None
    read_price = pricing.cached_input_per_m_tok
    reasoning_price = pricing.reasoning_per_m_tok
    fresh = max(usage.total_input_tokens - usage.cache_read_tokens - usage.cache_write_tokens, 0)
    reasoning = min(usage.reasoning_tokens, usage.output_tokens)
    priced = (
        (fresh, pricing.input_per_m_tok),
        (usage.cache_read_tokens, pricing.input_per_m_tok if read_price is None else read_price),
        (usage.cache_write_tokens, write_price or 0.0),
        (usage.output_tokens - reasoning, pricing.output_per_m_tok),
        (reasoning, pricing.output_per_m_tok if reasoning_price is None else reasoning_price),
    )
    return sum(tokens * price for tokens, price in priced) / PER


def cache_saving(usage: Usage, pricing: Pricing | None) -> float | None:
    """US dollars the cache reads of `usage` saved against the same tokens as fresh input, at
    `pricing`; None when nothing was read from the cache or no cached-input price is known."""
    read_price = None if pricing is None else pricing.cached_input_per_m_tok
    if pricing is None or read_price is None or usage.cache_read_tokens <= 0:
        return None
    return usage.cache_read_tokens * max(pricing.input_per_m_tok - read_price, 0.0) / PER


@attrs.frozen
class CostTotal:
    """The known costs of one model's requests in the usage history."""

    total_usd: float = 0.0
    today_usd: float = 0.0
    requests: int = 0
    """Requests with a known cost."""
    reported_usd: float = 0.0
    """The part of `total_usd` the API reported (the rest is the price table's estimate)."""
    today_reported_usd: float = 0.0
    """The part of `today_usd` the API reported."""


def cost_totals(records: Iterable[Mapping[str, object]], today: float) -> dict[str, CostTotal]:
    """Per model, the sum of the usage records' `costUsd`, and of those since `today` (a
    timestamp: the start of the day), each with its reported part (`costSource`; a record
    without one is an estimate); records without a cost are left out."""
    totals: dict[str, CostTotal] = {}
    for record in records:
        cost, model_id, time = record.get("costUsd"), record.get("modelId"), record.get("time")
        if not _is_amount(cost) or not isinstance(model_id, str):
            continue
        was = totals.get(model_id, CostTotal())
        recent = _is_amount(time) and time >= today
        reported = cost if record.get("costSource") == "reported" else 0.0
        totals[model_id] = CostTotal(
            was.total_usd + cost,
            was.today_usd + (cost if recent else 0.0),
            was.requests + 1,
            was.reported_usd + reported,
            was.today_reported_usd + (reported if recent else 0.0),
        )
    return totals


@attrs.frozen
class CostSum:
    """A sum of known costs, and the part of it the API reported (None: no part)."""

    total_usd: float
    reported_usd: float | None = None

    def text(self) -> str:
        """The sum in words, its parts told apart (`split_text`)."""
        return split_text(self.total_usd, self.reported_usd)


def split_text(total: float, reported: float | None) -> str:
    """A sum of costs in words that never passes an estimate off as a reported figure, its
    `reported` part given (None: no part): `$0.42 (reported by the API)`, `$0.42 (estimated)`,
    or `$0.42 ($0.40 reported by the API, $0.02 estimated)`."""
    if reported is None:
        return f"{format_usd(total)} (estimated)"
    reported = min(max(reported, 0.0), total)
    estimated = total - reported
    if math.isclose(estimated, 0.0, abs_tol=1e-12 + total * 1e-9):  # the sums' rounding
        return f"{format_usd(total)} (reported by the API)"
    return (
        f"{format_usd(total)} ({format_usd(reported)} reported by the API, "
        f"{format_usd(estimated)} estimated)"
    )


def start_of_day(now: float) -> float:
    """The timestamp of the local midnight that began the day of `now`."""
    day = datetime.datetime.fromtimestamp(now).date()
    return datetime.datetime.combine(day, datetime.time()).timestamp()


def _is_amount(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
