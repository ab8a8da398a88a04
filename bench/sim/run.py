"""One simulation run: a variant (how Copilot's counts are made, how requests go) at one skew.

Scenarios: `seeded` (`tests.harness.copilot.conversation`) or `host`
(`tests.harness.copilot.host_scenario`: the Copilot host suite's turns, recorded per skew).
Variants, all driven by the same Copilot loop over the same conversation and upstream:
- `tokengauge`: counts from a real `python -m tokengauge` over LSP, chats through `tokenGauge/chat`,
  so usage and overflows calibrate the server exactly as in production (fresh on-disk ledger);
- `exact`: perfect counts (`ExactCounter`: the true tokenizer's numbers, tool-schema strings scaled
  so that Copilot's formula gives the tools' true cost); chats through a tokengauge server as above;
- `calibration-off`: counts from a second, fresh server that never sees a chat (pure tiktoken and
  margins, factor 1 for ever); requests go straight to the upstream from the simulator with the
  server's `max_tokens` clamp and resize retry, computed from the uncalibrated estimate;
- `chars/4`: a plain provider: counts are `ceil(len / 4)` made here; requests go straight to the
  upstream with `max_tokens` = the model's output cap and no retry.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Final

import attrs

from bench import benchlib
from bench.sim.backends import CharsCounter, DirectSender, ExactCounter, LspChatSender, LspCounter
from tests.harness.copilot.agent import CopilotAgent
from tests.harness.copilot.conversation import ConversationGenerator
from tests.harness.copilot.host_scenario import HostScenario
from tests.harness.copilot.records import Counter, RunLog, Sender
from tests.harness.copilot.scenario import Scenario
from tests.harness.fake_upstream.config import ModelBehavior
from tests.harness.fake_upstream.model import count_prompt
from tests.harness.fake_upstream.server import Upstream
from tests.harness.lsp import LspServer, init_options, spawn_server
from tokengauge.counting.request import walk_strings
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.settings import parse_settings
from tokengauge.upstream.dialects.openai.request import openai_tool
from tokengauge.upstream.http import Timeouts, make_client

VARIANTS: Final = ("tokengauge", "exact", "calibration-off", "chars/4")
SCENARIOS: Final = ("seeded", "host")
MODEL_ID: Final = "sim-model"
PROVIDER_ID: Final = "sim"


@attrs.frozen
class Setup:
    """What every run of a simulation shares."""

    seed: int
    turns: int
    window: int
    max_output_tokens: int
    family: str
    tool_count: int
    scenario: str = "seeded"

    def scenario_at(self, skew: float) -> Scenario:
        """The conversation of this setup at this skew (the host's content is sized per skew)."""
        if self.scenario == "host":
            return HostScenario(1 + skew)
        return ConversationGenerator(self.seed, self.tool_count)

    def init_options(self, storage: Path, base_url: str) -> dict[str, Any]:
        """The server's `initializationOptions`: one OpenAI-dialect provider on the upstream."""
        provider = {
            "id": PROVIDER_ID,
            "dialect": "openai",
            "baseUrl": f"{base_url}/v1",
            "discover": False,
        }
        model = {
            "id": MODEL_ID,
            "provider": PROVIDER_ID,
            "name": "Simulated model",
            "family": self.family,
            "contextWindow": self.window,
            "maxOutputTokens": self.max_output_tokens,
        }
        return init_options(
            storage,
            [provider],
            [model],
            log_level="warning",
            connectTimeout=5,
            idleTimeout=60,
            maxAttempts=1,
        )


@attrs.frozen
class RunResult:
    """A finished run."""

    variant: str
    skew: float
    turns: int
    window: int
    max_input_tokens: int
    true_fixed: int
    """The model's true cost of a request with no messages and no tools."""
    true_tools: int
    """... and with no messages but every tool: the share of the tools, plus `true_fixed`."""
    log: RunLog
    seconds: float

    def true_messages(self, true_total: int, with_tools: bool) -> int:
        """The messages' share of a request's true size."""
        return true_total - (self.true_tools if with_tools else self.true_fixed)


@contextlib.asynccontextmanager
async def lsp_server(options: dict[str, Any]) -> AsyncIterator[LspServer]:
    """A fresh `python -m tokengauge`, initialized; its notifications are dropped."""
    async with spawn_server() as server:
        await server.initialize(options)
        yield server


@attrs.frozen
class Truth:
    """What the upstream's model really counts, for the exact counter."""

    tokenizer: ModelBehavior
    tools: int
    """The tools' share of a request's true size."""


@contextlib.asynccontextmanager
async def variant_parts(
    variant: str, setup: Setup, upstream: Upstream, storage: Path, scenario: Scenario, truth: Truth
) -> AsyncIterator[tuple[Counter, Sender, Callable[[], Awaitable[int]]]]:
    """The counter, the sender and the `maxInputTokens` source of a variant."""
    options = setup.init_options(storage, upstream.base_url)
    tool_strings = [s for tool in scenario.tools for s in walk_strings(tool)]
    if variant in ("tokengauge", "exact"):
        async with lsp_server(options) as server:
            counter = LspCounter(server, MODEL_ID, tool_strings)
            chat = LspChatSender(server, MODEL_ID, upstream)
            if variant == "exact":
                exact = ExactCounter(truth.tokenizer, scenario.tools, truth.tools)
                yield exact, chat, counter.max_input_tokens
            else:
                yield counter, chat, counter.max_input_tokens
        return
    gauge = Gauge(parse_settings(options), Ledger(None))
    model = gauge.offer.model(MODEL_ID)

    async def fixed_max_input() -> int:
        return gauge.max_input_tokens(model)

    async with make_client(Timeouts(5, 60)) as client:
        if variant == "calibration-off":
            async with lsp_server(options) as server:
                sender = DirectSender(client, gauge, MODEL_ID, upstream, "tokengauge")
                yield LspCounter(server, MODEL_ID, tool_strings), sender, fixed_max_input
            return
        if variant == "chars/4":
            sender = DirectSender(client, gauge, MODEL_ID, upstream, "plain")
            yield CharsCounter(), sender, fixed_max_input
            return
    raise ValueError(f"unknown variant {variant!r}; choose from {', '.join(VARIANTS)}")


async def run(
    variant: str,
    skew: float,
    setup: Setup,
    upstream: Upstream,
    true: ModelBehavior,
    progress: Callable[[int], None] | None = None,
) -> RunResult:
    """Run every turn of the conversation once with this variant (upstream already configured
    with `true`)."""
    scenario = setup.scenario_at(skew)
    empty: dict[str, Any] = {"model": MODEL_ID, "messages": []}
    true_fixed = count_prompt(empty, "openai", true).total
    tools = [openai_tool(tool) for tool in scenario.tools]
    true_tools = count_prompt({**empty, "tools": tools}, "openai", true).total
    truth = Truth(true, true_tools - true_fixed)
    started = benchlib.now()
    with tempfile.TemporaryDirectory(prefix="tokengauge-sim-") as tmp:
        parts = variant_parts(variant, setup, upstream, Path(tmp), scenario, truth)
        async with parts as (counter, sender, limit):
            agent = CopilotAgent(scenario, counter, sender, limit, setup.window)
            for index in range(setup.turns):
                await agent.run_turn(index, scenario.turn(index))
                if progress is not None:
                    progress(index + 1)
            max_input = await limit()
    return RunResult(
        variant=variant,
        skew=skew,
        turns=setup.turns,
        window=setup.window,
        max_input_tokens=max_input,
        true_fixed=true_fixed,
        true_tools=true_tools,
        log=agent.log,
        seconds=(benchlib.now() - started) / 1e9,
    )
