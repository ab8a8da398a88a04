"""One Agent Host run: the runtime of `tests.harness.copilot.agent_host` against the fake upstream,
through a real tokengauge, at one skew.

The runtime reads the model's limits from the server's `tokenGauge/models` answer before every
request (VS Code's bridge lists the models again when the provider fires its change event; the
server's `tokenGauge/modelsChanged` notifications are recorded, so a limit that changed without
one shows in the figures), and sends every request through `tokenGauge/chat`, so the server's
send path, calibration and safety net act as in production (fresh on-disk ledger). Scenarios: the
seeded one, or the Copilot host suite's, whose content is recorded per true scale: a skew without
a recording of its own takes the nearest one's (its true tokenizer is the skew's all the same).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from bench import benchlib
from bench.sim.backends import LspChatSender
from bench.sim.run import MODEL_ID, Setup
from tests.harness.copilot.agent_host import AgentHostRuntime, AhLog, Limits
from tests.harness.copilot.conversation import ConversationGenerator
from tests.harness.copilot.host_scenario import HostScenario, recorded_scales
from tests.harness.copilot.scenario import Scenario
from tests.harness.fake_upstream.server import Upstream
from tests.harness.lsp import LspServer, plain_client, spawn_server
from tokengauge.protocol import ACTIVITY, MODELS, MODELS_CHANGED


@attrs.frozen
class AgentHostOptions:
    """How the runtime is modelled (see `tests.harness.copilot.agent_host`)."""

    factor: float = 1.0
    """The runtime's correction of its count for the model's name (1: a name it does not know)."""
    use_usage: bool = False
    """Meter max(own count, last `prompt_tokens`) instead of the own count alone."""
    retry_overflow: bool = False
    """Compact and retry once when a request is refused as too long."""


@attrs.frozen
class AgentHostResult:
    """A finished run."""

    skew: float
    turns: int
    window: int
    """The model's true window."""
    content_scale: float | None
    """The host recording whose content ran (None: the seeded scenario)."""
    log: AhLog
    notifications: int
    """`tokenGauge/modelsChanged` notifications the server sent."""
    seconds: float


class ServerLimits:
    """The model's limits as the server lists them; `announced` is set by the server's
    `tokenGauge/modelsChanged` until the next read."""

    def __init__(self) -> None:
        self.server: LspServer | None = None
        self.announced = False
        self.notifications = 0

    def on_models_changed(self, params: Any) -> None:
        """The server's notification."""
        self.announced = True
        self.notifications += 1

    async def read(self) -> Limits:
        """`tokenGauge/models`, this model's `maxInputTokens` and `maxOutputTokens`."""
        if self.server is None:
            raise RuntimeError("no server to ask")
        models = await self.server.request(MODELS, {})
        info = next(m for m in models if m["id"] == MODEL_ID)
        self.announced = False
        return Limits(int(info["maxInputTokens"]), int(info["maxOutputTokens"]))


def content_scale(scale: float) -> float:
    """The recorded host scale nearest to `scale` (the lower one on a tie)."""
    return min(recorded_scales(), key=lambda s: (round(abs(s - scale), 6), s))


def agent_host_scenario(setup: Setup, skew: float) -> tuple[Scenario, float | None]:
    """The conversation, and the host recording it comes from."""
    if setup.scenario == "host":
        scale = content_scale(1 + skew)
        return HostScenario(scale), scale
    return ConversationGenerator(setup.seed, setup.tool_count), None


async def run_agent_host(
    skew: float,
    setup: Setup,
    upstream: Upstream,
    options: AgentHostOptions,
    progress: Callable[[int], None] | None = None,
) -> AgentHostResult:
    """Every turn of the conversation once, the upstream already set to the skew's true model."""
    scenario, scale = agent_host_scenario(setup, skew)
    limits = ServerLimits()
    # pygls marks its handlers with attributes: a plain function, not a bound method
    handlers = {
        MODELS_CHANGED: lambda params: limits.on_models_changed(params),
        ACTIVITY: lambda params: None,
    }
    client = plain_client(handlers)
    started = benchlib.now()
    with tempfile.TemporaryDirectory(prefix="tokengauge-agent-host-") as tmp:
        async with spawn_server(client) as server:
            await server.initialize(setup.init_options(Path(tmp), upstream.base_url))
            limits.server = server
            runtime = AgentHostRuntime(
                scenario,
                LspChatSender(server, MODEL_ID, upstream),
                limits,
                setup.window,
                factor=options.factor,
                use_usage=options.use_usage,
                retry_overflow=options.retry_overflow,
            )
            for index in range(setup.turns):
                await runtime.run_turn(index, scenario.turn(index))
                if progress is not None:
                    progress(index + 1)
    return AgentHostResult(
        skew=skew,
        turns=setup.turns,
        window=setup.window,
        content_scale=scale,
        log=runtime.log,
        notifications=limits.notifications,
        seconds=(benchlib.now() - started) / 1e9,
    )
