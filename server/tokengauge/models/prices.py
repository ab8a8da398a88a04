"""List prices of well-known models, in US dollars per million tokens, by `models.known` entry.

The last source of a model's prices, after settings and discovery; a model not here has no
known price (and its requests no cost). Each figure is the vendor's list price for its own API,
read from the page named above its rows; a gateway that charges differently (a proxy's markup, a
cloud's regional price) should be priced in settings or by its own model list. Anthropic's cache
write is the 5-minute write (1.25x input; the 1-hour write costs 2x and is not told apart in
usage), and its prices are those up to 200K input tokens. OpenAI and DeepSeek bill a cache write
as ordinary input, so their rows give the input price for it.

Beside the table: a model's prices in words (`price_text`), and what a cost an API reports may be
(`reported_usd`: a finite amount no larger than the dearest price over the largest window).
"""

from __future__ import annotations

import math
import re
from typing import Final

from tokengauge.formatting import format_price
from tokengauge.models.known import lookup_known_model
from tokengauge.settings import MAX_PRICE_PER_M_TOK, MAX_TOKENS, Pricing

PER: Final = 1_000_000
"""Prices are per million tokens."""
MAX_REQUEST_COST_USD: Final = MAX_PRICE_PER_M_TOK * MAX_TOKENS / PER
"""The most one request is taken to cost: the dearest price over the largest window. A
reported cost beyond it (or below 0, or not a number) is no reported cost."""
_AMOUNT: Final = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?")
"""A cost as a header writes it: ASCII digits (Python's `float` would also take `1_000` and a
full-width `５`)."""
USD_TICKS: Final = 10_000_000_000
"""xAI's `cost_in_usd_ticks` per US dollar."""


def _P(input_: float, cached: float, write: float, output: float) -> Pricing:
    """One row: input, cached input (cache read), cache write, output; reasoning is output."""
    return Pricing(
        input_per_m_tok=input_,
        output_per_m_tok=output,
        cached_input_per_m_tok=cached,
        cache_write_per_m_tok=write,
    )


# Columns: input, cached input, cache write, output ($ per million tokens).
PRICES: Final[dict[str, Pricing]] = {
    # --- OpenAI: https://platform.openai.com/docs/pricing (Standard tier) ----------------------
    "gpt-5": _P(1.25, 0.125, 1.25, 10.00),
    "gpt-5-mini": _P(0.25, 0.025, 0.25, 2.00),
    "gpt-5-nano": _P(0.05, 0.005, 0.05, 0.40),
    "gpt-4.1": _P(2.00, 0.50, 2.00, 8.00),
    "gpt-4.1-mini": _P(0.40, 0.10, 0.40, 1.60),
    "gpt-4.1-nano": _P(0.10, 0.025, 0.10, 0.40),
    "gpt-4o": _P(2.50, 1.25, 2.50, 10.00),
    "gpt-4o-mini": _P(0.15, 0.075, 0.15, 0.60),
    "o3": _P(2.00, 0.50, 2.00, 8.00),
    "o3-mini": _P(1.10, 0.55, 1.10, 4.40),
    "o4-mini": _P(1.10, 0.275, 1.10, 4.40),
    # --- Anthropic: https://docs.anthropic.com/en/docs/about-claude/pricing --------------------
    "claude-opus-4-5": _P(5.00, 0.50, 6.25, 25.00),
    "claude-opus-4-1": _P(15.00, 1.50, 18.75, 75.00),
    "claude-opus-4": _P(15.00, 1.50, 18.75, 75.00),
    "claude-sonnet-4-5": _P(3.00, 0.30, 3.75, 15.00),
    "claude-sonnet-4": _P(3.00, 0.30, 3.75, 15.00),
    "claude-3-7-sonnet": _P(3.00, 0.30, 3.75, 15.00),
    "claude-haiku-4-5": _P(1.00, 0.10, 1.25, 5.00),
    "claude-3-5-haiku": _P(0.80, 0.08, 1.00, 4.00),
    "claude-3-haiku": _P(0.25, 0.03, 0.30, 1.25),
    # --- DeepSeek: https://api-docs.deepseek.com/quick_start/pricing (V3.2, since 2025-09-29;
    # cache hit / cache miss / output, the same for both models) ---------------------------------
    "deepseek-chat": _P(0.28, 0.028, 0.28, 0.42),
    "deepseek-reasoner": _P(0.28, 0.028, 0.28, 0.42),
}
"""Keyed by `KnownModel.pattern`, so a snapshot or gateway spelling of a model finds its row and
a model with its own row (`gpt-4o-2024-05-13`, priced differently) does not take another's."""


def known_pricing(model_id: str) -> Pricing | None:
    """The list prices of the model the built-in table knows by this id; None if not listed."""
    known = lookup_known_model(model_id)
    return PRICES.get(known.pattern) if known is not None else None


def price_text(pricing: Pricing | None) -> str | None:
    """A model's prices in words: `$2.50 in, $1.25 cached, $10.00 out per 1M tokens`."""
    if pricing is None:
        return None
    parts = [f"{format_price(pricing.input_per_m_tok)} in"]
    if pricing.cached_input_per_m_tok is not None:
        parts.append(f"{format_price(pricing.cached_input_per_m_tok)} cached")
    parts.append(f"{format_price(pricing.output_per_m_tok)} out")
    return ", ".join(parts) + " per 1M tokens"


def plausible_cost(amount: float, tokens: int) -> bool:
    """Whether a request of `tokens` (input and output) can have cost `amount`: at most the
    dearest price for each of its tokens."""
    return amount <= MAX_PRICE_PER_M_TOK * tokens / PER


def reported_usd(value: object, per_usd: int = 1) -> float | None:
    """A cost an API reported (`value` in units of `1 / per_usd` dollars: a JSON number, or the
    text of a header) in US dollars; None for anything that is not a finite amount from 0 to
    `MAX_REQUEST_COST_USD` (a hostile figure must not make a sum infinite)."""
    if isinstance(value, str):
        text = value.strip()
        if not _AMOUNT.fullmatch(text):
            return None  # LiteLLM writes `None` when it knows no cost
        value = float(text)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        amount = value / per_usd
    except OverflowError:  # an integer of hundreds of digits
        return None
    return amount if math.isfinite(amount) and 0 <= amount <= MAX_REQUEST_COST_USD else None
