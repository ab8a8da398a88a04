"""The cost the API reports wins, end to end: the real captures of responses that state their cost
(`tests/data/wire`) replayed by the test upstream, through the chat, into the usage history, the
status tooltip and the dashboard's data, each cost marked reported or estimated."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Scripted, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import chat_options, chat_params, conversation, text_message

PRICING = {"inputPerMTok": 2.0, "outputPerMTok": 8.0}


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """The server on a fresh test upstream, with a priced model in the Chat Completions and the
    Responses dialect (the price table gives every request an estimate the reports must beat)."""
    async with running_upstream(UpstreamConfig()) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        options = chat_options(
            str(tmp_path / "storage"),
            up.base_url,
            providers=[
                {"id": "up-openai", "dialect": "openai", "baseUrl": up.base_url + "/v1"},
                {"id": "up-responses", "dialect": "responses", "baseUrl": up.base_url + "/v1"},
            ],
            models=[
                {"id": "chat-priced", "provider": "up-openai", "pricing": PRICING},
                {"id": "responses-priced", "provider": "up-responses", "pricing": PRICING},
            ],
        )
        await initialize(lsp_client, options)
        yield
        await lsp_client.shutdown_session()


def turn(question: str) -> list[dict[str, object]]:
    """A conversation turn (not one of Copilot's helpers: the status follows it)."""
    return [
        *conversation(question + " " + "total = compute(x, y) + 1\n" * 40),
        text_message("assistant", "It adds."),
        text_message("user", "Why?"),
    ]


@pytest.mark.parametrize(
    ("fixture", "model", "cost"),
    [
        pytest.param(
            "openrouter-chat-stream-cached-reasoning-usage",
            "chat-priced",
            0.00333825,
            id="openrouter-usage-cost",
        ),
        pytest.param(
            "xai-chat-stream-reasoning-cost", "chat-priced", 0.000146625, id="xai-chat-ticks"
        ),
        pytest.param(
            "xai-responses-stream-completed-cost",
            "responses-priced",
            0.017764,
            id="xai-responses-ticks",
        ),
        pytest.param(
            "litellm-chat-stream-cost-header", "chat-priced", 2.85e-05, id="litellm-header"
        ),
    ],
)
async def test_the_cost_a_response_states_is_the_requests_cost(
    client: LanguageClient, fixture: str, model: str, cost: float
):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    upstream.script(Scripted(fixture=fixture))
    await call(client, "tokenGauge/chat", chat_params(model, turn("What does this do?")))
    [row] = (await call(client, "tokenGauge/dashboard", {}))["requests"]
    assert (row["costUsd"], row["costSource"]) == (pytest.approx(cost), "reported")
    usage = await call(client, "tokenGauge/usage", {})
    [stored] = usage["history"]
    assert (stored["costUsd"], stored["costSource"]) == (pytest.approx(cost), "reported")
    [total] = usage["costs"]
    assert total["reportedUsd"] == total["totalUsd"] == pytest.approx(cost)
    assert "(reported by the API)" in usage["status"]["tooltip"]


async def test_reported_and_estimated_costs_are_told_apart_in_every_sum(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    upstream.script(Scripted(fixture="xai-chat-stream-reasoning-cost"))
    await call(client, "tokenGauge/chat", chat_params("chat-priced", turn("First?")))
    # The test upstream's own model answers next: its usage states no cost, the table prices it.
    await call(client, "tokenGauge/chat", chat_params("chat-priced", turn("Second?")))
    _, answered = upstream.model_requests
    estimated = (answered.prompt_tokens * 2.0 + answered.output_tokens * 8.0) / 1e6
    data = await call(client, "tokenGauge/dashboard", {})
    reported, priced = data["requests"]
    assert (reported["costSource"], priced["costSource"]) == ("reported", "estimate")
    assert priced["costUsd"] == pytest.approx(estimated)
    totals = data["totals"]
    assert totals["reportedUsd"] == pytest.approx(0.000146625)
    assert totals["estimatedUsd"] == pytest.approx(estimated)
    assert totals["costUsd"] == pytest.approx(0.000146625 + estimated)
    assert (totals["todayReportedUsd"], totals["todayEstimatedUsd"]) == (
        pytest.approx(0.000146625),
        pytest.approx(estimated),
    )
    [day] = data["days"]
    assert (day["reportedUsd"], day["estimatedUsd"]) == (
        pytest.approx(0.000146625),
        pytest.approx(estimated),
    )
    tooltip = (await call(client, "tokenGauge/usage", {}))["status"]["tooltip"]
    assert "| cost (estimated) |" in tooltip
    assert "reported by the API, " in tooltip and " estimated)" in tooltip
