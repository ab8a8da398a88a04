"""The Copilot host suite's scenario, replayed in the simulator (`--scenario host`).

`scripts/test-copilot.sh` runs the real Copilot Chat 0.67 agent for 12 turns per skew against a
test upstream whose true count is `o200k_base × skew` (text and the tools' JSON) + 7 per message
+ 3, in a 40,000-token window, with tokengauge serving a model `sim` of family `claude-sonnet-4`
(maxOutputTokens 4,096). `python -m bench.sim.host_extract` derived from its dumps what Copilot sent
(`bench/data/copilot-host-*.json.gz`): Copilot's system prompt, environment message and 39 tool
schemas, its compaction and Simple-mode summary texts, and per skew each turn's user message as
Copilot wrapped it, the read_file rounds the upstream scripted (with the files' text as results),
and Copilot's own helper requests (progress messages, the chat title). The model's answer is the
suite's fixed reply, whose `<summary>` tags make the summary text.
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any, Final

import attrs

from tests.harness.copilot.scenario import RoundPlan, TurnPlan
from tokengauge.messages import Message, Tool, structure

DATA: Final = Path(__file__).resolve().parents[3] / "bench" / "data"
COMMON: Final = "copilot-host-common.json.gz"
SEED: Final = 20_261_124


def data_path(scale: float) -> Path:
    """The per-skew file for a true scale (0.7, 1.0, 1.3, 1.6 are recorded)."""
    return DATA / f"copilot-host-skew-{scale:.1f}.json.gz"


def recorded_scales() -> list[float]:
    """The scales there is a recording of."""
    return sorted(float(p.name[18:-8]) for p in DATA.glob("copilot-host-skew-*.json.gz"))


@functools.lru_cache(maxsize=8)
def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: regenerate it with python -m bench.sim.host_extract"
        )
    data: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return data


def _message(value: Any) -> Message:
    return structure(value, Message, "recorded message")


@attrs.frozen
class HostSetup:
    """How the suite set the upstream and the model for one skew."""

    scale: float
    encoding: str
    per_message_overhead: int
    per_tool_overhead: int
    fixed_overhead: int
    error_style: str
    window: int
    family: str
    max_output_tokens: int
    turns: int


def host_setup(scale: float) -> HostSetup:
    """The suite's setup for this scale, from its recording."""
    data = _load(data_path(scale))
    true = data["true_tokenizer"]
    return HostSetup(
        scale=float(true["scale"]),
        encoding=true["encoding"],
        per_message_overhead=int(true["per_message_overhead"]),
        per_tool_overhead=int(true["per_tool_overhead"]),
        fixed_overhead=int(true["fixed_overhead"]),
        error_style=true["error_style"],
        window=int(data["window"]),
        family=data["model"]["family"],
        max_output_tokens=int(data["model"]["maxOutputTokens"]),
        turns=len(data["turns"]),
    )


class HostScenario:
    """The host suite's turns at one skew, as a `Scenario`."""

    def __init__(self, scale: float) -> None:
        common = _load(DATA / COMMON)
        data = _load(data_path(scale))
        self.seed = SEED
        prefix = data.get("prefix") or [common["system"], common["environment"]]
        self.prefix = [_message(m) for m in prefix]
        self.tools = [structure(t, Tool, "recorded tool") for t in common["tools"]]
        self.compaction = _message(common["compaction"])
        self.simple_system = _message(common["simple"]["system"])
        self.simple_ask = _message(common["simple"]["ask"])
        self.simple_header: str = common["simple"]["header"]
        self._summary: str = data.get("summary") or common["summary"]
        self._answer = _message(data["answer"])
        self._turns: list[dict[str, Any]] = data["turns"]

    def __len__(self) -> int:
        return len(self._turns)

    def turn(self, index: int) -> TurnPlan:
        """Turn `index` as recorded (cycled past the last one, without its helper requests)."""
        turn = self._turns[index % len(self._turns)]
        rounds = [
            RoundPlan(
                _message(r["assistant"]),
                None if r["results"] is None else _message(r["results"]),
            )
            for r in turn["rounds"]
        ]
        recorded = turn["helpers"] if index < len(self._turns) else []
        helpers = tuple(tuple(_message(m) for m in h) for h in recorded)
        return TurnPlan(
            turn["kind"],
            _message(turn["request"]),
            turn["query"],
            (*rounds, RoundPlan(self._answer, None)),
            helpers,
        )

    def summary(self, number: int, turns: int) -> str:
        """The suite's reply yields the same summary every time."""
        return self._summary
