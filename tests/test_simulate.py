"""The summarization simulator end to end: Copilot's agent loop as the real client runs it.

Runs `python -m bench.sim` as its user would (a real test upstream on 127.0.0.1, a real
`python -m tokengauge` over stdio, Copilot 0.67's loop in the simulator), twice:
- the seeded scenario on a small model (32k window, 20 tools, 12 turns) for true tokenizers that
  count 25% fewer, as many, and 25% more tokens than tokengauge assumes: tokengauge must summarize
  at least once and never overflow, nor even need the server's smaller-`max_tokens` retry;
- the Copilot host suite's scenario (recorded from the real client with tokengauge as its provider,
  `bench/data/copilot-host-*`) at all four recorded skews: the simulator, running the same server,
  must make the decisions the real Copilot made (the same summarizations of the same kind in the
  same order, each at the fill the host saw ±0.03, the same largest fill, no overflow). The
  recordings hold the server's answers of the commit they were made at: a change in what the
  server answers Copilot calls for new recordings (`bench/data/README.md`), made in the real client.
Where the summarization fires no longer depends on tokengauge's message answers: Copilot 0.67
measures what it renders with its own o200k_base tokenizer, so its fill follows the true tokenizer
(perfect counts summarize at medians 0.40 / 0.51 / 0.59 across the seeded skews); tokengauge moves
only `toolTokens` and the usage it reports.
The model of VS Code's Agent Host (`tests/harness/copilot/agent_host.py`) runs the host scenario
against the server at true scales 0.6–1.8, where every turn must be answered with nothing refused or
overflowing and every move of the declared window announced; and it is checked rule by rule on small
inputs, with no upstream and no server: its window is maxInputTokens + maxOutputTokens, it meters
the system prompt and the tools too, compacts in the background from 0.80 and blocks at 0.95, reads
the limits again before every request, and keeps only four data-part mime types.
"""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from tests.harness.copilot.agent_host import (
    AgentHostRuntime,
    Limits,
    RuntimeMeter,
    decide,
    history_message,
    runtime_window,
)
from tests.harness.copilot.records import Outcome
from tests.harness.copilot.scenario import RoundPlan, TurnPlan
from tokengauge.messages import DataPart, Message, TextPart, ThinkingPart, Tool, ToolCallPart

REPO = Path(__file__).resolve().parents[1]
SKEWS = (-0.25, 0.0, 0.25)
HOST_SKEWS = (-0.4, 0.0, 0.3, 0.6)
AGENT_HOST_SCALES = (0.6, 1.0, 1.45, 1.8)
TOLERANCE = 0.03


def simulate(out: Path, *options: str) -> dict[tuple[float, str], dict[str, object]]:
    figures = out / "figures.json"
    command = [
        sys.executable,
        "-m",
        "bench.sim",
        *options,
        f"--out={out}",
        f"--json={figures}",
    ]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert figures.exists(), f"no figures; exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert list(out.glob("*.svg")), "no plot was written"
    runs = json.loads(figures.read_text())["runs"]
    return {(run["skew"], run["variant"]): run for run in runs}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[float, str], dict[str, object]]:
    return simulate(
        tmp_path_factory.mktemp("simulate"),
        f"--skews={','.join(str(s) for s in SKEWS)}",
        "--variants=tokengauge",
        "--turns=12",
        "--window=32768",
        "--max-output=8192",
        "--tools=20",
    )


@pytest.fixture(scope="module")
def host_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[float, str], dict[str, object]]:
    return simulate(
        tmp_path_factory.mktemp("simulate-host"),
        "--scenario=host",
        f"--skews={','.join(str(s) for s in HOST_SKEWS)}",
        "--variants=tokengauge",
    )


def recorded_host(skew: float) -> dict[str, object]:
    path = REPO / "bench" / "data" / f"copilot-host-skew-{1 + skew:.1f}.json.gz"
    return json.loads(gzip.decompress(path.read_bytes()))["host"]


@pytest.mark.parametrize("skew", [pytest.param(s, id=f"skew{s * 100:+.0f}%") for s in SKEWS])
def test_tokengauge_summarizes_and_never_overflows(runs, skew):
    run = runs[(skew, "tokengauge")]
    assert run["overflows"] == 0, run
    assert run["summaries"] >= 1, run
    assert run["turns_ok"] == run["turns"], run
    assert run["resized"] == 0, run
    assert all(0 < fill < 1 for fill in run["fills"]), run


@pytest.mark.parametrize("skew", [pytest.param(s, id=f"host{1 + s:.1f}") for s in HOST_SKEWS])
def test_the_simulator_decides_as_the_real_copilot(host_runs, skew):
    run, host = host_runs[(skew, "tokengauge")], recorded_host(skew)
    assert run["overflows"] == host["overflows"] == 0, run
    assert run["turns_ok"] == run["turns"], run
    assert list(run["kinds"]) == [s["kind"] for s in host["summaries"]], (run, host)
    pairs = zip(run["fills"], (s["fill"] for s in host["summaries"]), strict=True)
    assert all(abs(ours - theirs) <= TOLERANCE for ours, theirs in pairs), (run, host)
    assert abs(run["largest_fill"] - host["largest_fill"]) <= TOLERANCE, (run, host)


@pytest.fixture(scope="module")
def agent_host_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[float, dict[str, object]]:
    out = tmp_path_factory.mktemp("simulate-agent-host")
    figures = out / "figures.json"
    scales = ",".join(str(scale) for scale in AGENT_HOST_SCALES)
    command = [
        sys.executable,
        "-m",
        "bench.sim",
        "--runtime=agent-host",
        "--scenario=host",
        f"--scales={scales}",
        f"--json={figures}",
    ]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert figures.exists(), f"no figures; exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    runs = json.loads(figures.read_text())["runs"]
    return {round(1 + run["skew"], 2): run for run in runs}


@pytest.mark.parametrize("scale", AGENT_HOST_SCALES)
def test_the_agent_host_keeps_its_sessions_alive(agent_host_runs, scale):
    """The Agent Host, modelled (it cannot run here), on the host scenario: every turn answered,
    nothing refused or overflowing, and every change of the declared window announced."""
    run = agent_host_runs[scale]
    assert run["turns_ok"] == run["turns"] and run["failed_turns"] == 0, run
    assert run["overflows"] == 0 and run["refused"] == 0, run
    assert run["unannounced"] == 0, run
    assert run["largest_fill"] <= 0.95, run


@pytest.mark.parametrize("skew", [pytest.param(s, id=f"host{1 + s:.1f}") for s in HOST_SKEWS])
def test_tokengauge_in_the_host_scenario_never_overflows(host_runs, skew):
    run = host_runs[(skew, "tokengauge")]
    assert run["overflows"] == 0, run
    assert run["summaries"] >= 1, run
    assert run["turns_ok"] == run["turns"], run
    assert run["largest_fill"] <= 1, run


# --- the Agent Host's runtime, rule by rule on small inputs (no upstream, no server) -------------


def test_the_agent_host_window_is_input_plus_output():
    assert runtime_window(35_904, 4_096) == 40_000
    assert Limits(35_904, 4_096).window == 40_000


@pytest.mark.parametrize(
    ("count", "compacting", "expected"),
    [
        pytest.param(31_999, False, "none", id="below-0.80"),
        pytest.param(32_000, False, "background", id="at-0.80"),
        pytest.param(37_999, False, "background", id="below-0.95"),
        pytest.param(34_000, True, "none", id="one-compaction-at-a-time"),
        pytest.param(38_000, False, "block", id="at-0.95"),
        pytest.param(38_000, True, "block", id="at-0.95-while-compacting"),
    ],
)
def test_the_agent_host_compacts_at_080_and_blocks_at_095(count, compacting, expected):
    assert decide(count, 40_000, compacting) == expected


def test_only_four_data_part_mime_types_survive_in_the_agent_host_history():
    kept = [
        TextPart("done"),
        ThinkingPart("why"),
        ToolCallPart("c1", "read_file", {"path": "a.py"}),
        *(DataPart(m, "eA==") for m in ("cache_control", "stateful_marker", "thinking")),
        DataPart("context_management", "eA=="),
    ]
    dropped = [DataPart(m, "eA==") for m in ("usage", "application/json", "image/png")]
    message = Message("assistant", [*kept[:3], dropped[0], *kept[3:], *dropped[1:]])
    assert history_message(message).content == kept
    image = Message("user", [TextPart("look"), DataPart("image/png", "eA==")])
    assert history_message(image) == image, "the user's images go on to the model"


def test_the_agent_host_meters_the_system_prompt_and_the_tools_too():
    meter = RuntimeMeter()
    system = Message("system", [TextPart("You are a careful agent. " * 20)])
    user = Message("user", [TextPart("hello")])
    tool = Tool("read_file", "Read a file.", {"type": "object", "properties": {}})
    assert meter.request([system, user], 0) > meter.request([user], 0)
    assert meter.request([user], meter.tools([tool])) > meter.request([user], 0)


@attrs.define
class StubLimits:
    limits: Limits
    announced: bool = False
    reads: int = 0

    async def read(self) -> Limits:
        self.reads += 1
        self.announced = False
        return self.limits


@attrs.define
class StubSender:
    sent: list[list[Message]] = attrs.field(factory=list)
    refuse: bool = False

    async def send(self, messages, tools, estimate) -> Outcome:
        self.sent.append(list(messages))
        if self.refuse:
            return Outcome(False, overflow=True, detail="overflow: too long")
        return Outcome(True, true_tokens=estimate)


SYSTEM = Message("system", [TextPart("You are an agent.")])


class StubScenario:
    def __init__(self):
        self.seed = 0
        self.prefix = [SYSTEM]
        self.tools: list[Tool] = []
        self.compaction = Message("user", [TextPart("Summarize the conversation now.")])

    def summary(self, number, turns):
        return f"summary {number}"


def _said(text):
    return Message("assistant", [TextPart(text)])


def _asked(text):
    return Message("user", [TextPart(text)])


def _runtime():
    limits, sender = StubLimits(Limits(10**6, 0)), StubSender()
    runtime = AgentHostRuntime(StubScenario(), sender, limits, true_window=10**6)
    runtime.history = [_asked("read a.py " * 50), _said("a.py says " * 50), _asked("and b.py?")]
    return runtime, limits, sender


def _window_at(runtime, ratio):
    return math.ceil(runtime.count(runtime.prompt()) / ratio)


async def test_a_background_compaction_summarises_by_the_next_request():
    runtime, limits, sender = _runtime()
    history = list(runtime.history)
    limits.limits = Limits(_window_at(runtime, 0.85), 0)
    await runtime.step()
    kinds = [r.kind for r in runtime.log.requests]
    assert kinds == ["compaction", "main"]
    assert runtime.log.requests[-1].started and not runtime.log.requests[-1].compacted
    assert sender.sent[-1] == [SYSTEM, *history], "this request goes out whole"
    runtime.history.append(_said("b.py says hi"))
    await runtime.step()
    assert runtime.log.requests[-1].compacted
    summary = runtime.history[0].content[0].value
    assert "summary 0" in summary
    assert runtime.history[1:] == [_said("b.py says hi")], "what came after the start stays"
    assert limits.reads == 2, "the limits are read again before every request"


async def test_at_095_the_request_waits_for_a_compaction():
    runtime, limits, sender = _runtime()
    limits.limits = Limits(_window_at(runtime, 0.96), 0)
    await runtime.step()
    main = runtime.log.requests[-1]
    assert [r.kind for r in runtime.log.requests] == ["compaction", "main"]
    assert main.blocked and main.compacted
    assert sender.sent[-1][2:] == [_asked("and b.py?")], "the latest exchange is kept whole"
    assert main.count < runtime.log.compactions[0].count


async def test_a_window_change_is_picked_up_and_an_unannounced_one_counted():
    runtime, limits, _ = _runtime()
    await runtime.step()
    limits.limits, limits.announced = Limits(500_000, 0), True
    await runtime.step()
    limits.limits = Limits(400_000, 0)
    await runtime.step()
    assert runtime.log.windows == [10**6, 500_000, 400_000]
    assert runtime.log.unannounced == 1
    assert [r.window for r in runtime.log.requests] == [10**6, 500_000, 400_000]
    assert [r.announced for r in runtime.log.requests] == [False, True, False]


async def test_a_failed_request_fails_the_turn():
    runtime, _, sender = _runtime()
    sender.refuse = True
    plan = TurnPlan("ask", _asked("c.py?"), "c.py?", (RoundPlan(_said("c.py says"), None),))
    await runtime.run_turn(3, plan)
    assert runtime.log.failed_turns == [3]
    assert runtime.history[-1] == _asked("c.py?"), "the request stays in history, no answer"
