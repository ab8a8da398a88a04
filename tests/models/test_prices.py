"""The built-in list prices: found by the ids gateways and snapshots use, never guessed."""

from __future__ import annotations

import pytest

from tokengauge.models.known import KNOWN_MODELS
from tokengauge.models.prices import PRICES, known_pricing


@pytest.mark.parametrize(
    ("model_id", "input_price", "output_price"),
    [
        pytest.param("gpt-4o-2024-08-06", 2.50, 10.00, id="snapshot"),
        pytest.param("openai/gpt-4o-mini", 0.15, 0.60, id="gateway-prefix"),
        pytest.param("claude-sonnet-4-5-20250929", 3.00, 15.00, id="anthropic-dated"),
        pytest.param("deepseek-reasoner", 0.28, 0.42, id="deepseek"),
    ],
)
def test_known_prices(model_id: str, input_price: float, output_price: float) -> None:
    pricing = known_pricing(model_id)
    assert pricing is not None
    assert (pricing.input_per_m_tok, pricing.output_per_m_tok) == (input_price, output_price)


@pytest.mark.parametrize(
    "model_id",
    [
        pytest.param("gpt-4o-2024-05-13", id="own-row-without-price"),
        pytest.param("qwen3:8b", id="local-model"),
        pytest.param("some-unknown-model", id="unknown"),
    ],
)
def test_no_price_without_a_row(model_id: str) -> None:
    assert known_pricing(model_id) is None


def test_every_row_is_a_known_model_with_every_price() -> None:
    patterns = {model.pattern for model in KNOWN_MODELS}
    for pattern, pricing in PRICES.items():
        assert pattern in patterns
        assert pricing.cached_input_per_m_tok is not None
        assert pricing.cache_write_per_m_tok is not None
        assert pricing.cached_input_per_m_tok <= pricing.input_per_m_tok
        assert pricing.cache_write_per_m_tok >= pricing.input_per_m_tok
