"""Every wire fixture in `tests/data/wire` is used by some test, and the last few are used here."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO, WIRE
from tokengauge.upstream.discovery import litellm_sizes
from tokengauge.upstream.errors import HttpStatusError

FIXTURES = sorted(p.name for p in WIRE.iterdir() if p.name != "SOURCES.md")
TEST_SOURCES = "\n".join(
    path.read_text(encoding="utf-8")
    for path in (REPO / "tests").rglob("*.py")
    if path.name != Path(__file__).name
)
HEADER_FIXTURES = [
    ("error-anthropic-529-overloaded.headers.json", None, True),
    ("error-openai-429-headers.json", None, None),
    ("headers-anthropic-200-ratelimit.json", None, None),
    ("headers-openai-chat-200-ratelimit.json", None, None),
]
LITELLM_TABLE = "models-litellm-model-prices-excerpt.json"
USED_HERE = {name for name, *_ in HEADER_FIXTURES} | {LITELLM_TABLE}


def _used(name: str) -> bool:
    stem = name.split(".")[0]
    # Tests that iterate a glob (`*.sse`, `error-*`) cover every file of that kind.
    globbed = (name.endswith(".sse") and '"*.sse"' in TEST_SOURCES) or (
        name.startswith("error-") and "headers" not in name and '"error-*"' in TEST_SOURCES
    )
    return globbed or stem in TEST_SOURCES or name in USED_HERE


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_is_used(name: str):
    assert _used(name), f"no test uses {name}"


@pytest.mark.parametrize(("name", "retry_after", "should_retry"), HEADER_FIXTURES)
def test_recorded_headers_drive_the_retry_decision(
    name: str, retry_after: float | None, should_retry: bool | None
):
    recorded = json.loads((WIRE / name).read_text())
    headers = recorded.get("headers", recorded)
    flat = httpx.Headers({k: str(v) for k, v in headers.items() if k != "status"})
    error = HttpStatusError(int(recorded.get("status", 200)), "", flat)
    assert error.retry_after == retry_after
    assert error.should_retry is should_retry


def test_litellm_price_table_entries_read_as_model_info(wire: Path):
    table = json.loads((wire / LITELLM_TABLE).read_text())
    entries = [
        {"model_name": name, "model_info": info}
        for name, info in table.items()
        if name != "sample_spec"
    ]
    sizes = litellm_sizes({"data": entries})
    assert sizes, "the excerpt holds chat models"
    for name, model in sizes.items():
        assert model.context_window == table[name]["max_input_tokens"]
        assert model.max_output_tokens == table[name]["max_output_tokens"]


def test_litellm_price_table_costs_read_as_model_info_prices(wire: Path):
    table = json.loads((wire / LITELLM_TABLE).read_text())
    entries = [{"model_name": name, "model_info": info} for name, info in table.items()]
    prices = litellm_sizes({"data": entries})
    nova = prices["amazon.nova-2-lite-v1:0"].pricing
    assert nova is not None
    assert nova.input_per_m_tok == pytest.approx(
        table["amazon.nova-2-lite-v1:0"]["input_cost_per_token"] * 1e6
    )
    assert nova.cached_input_per_m_tok == pytest.approx(0.075)
    assert nova.output_per_m_tok == pytest.approx(2.5)
    assert nova.cache_write_per_m_tok is None
