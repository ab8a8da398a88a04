"""The recovery ladder's test bench: a model's estimates over requests of tool results and
earlier exchanges, in a window chosen per test."""

from __future__ import annotations

import math
from collections.abc import Sequence

from tokengauge.calibration.ladder import STEP_ROUNDS, STEP_SHARE, Estimate, Fitted, Room, climb
from tokengauge.calibration.precedent import Decisions
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.calibration.trim import Truncator
from tokengauge.gauge import Gauge
from tokengauge.messages import Message, TextPart, Tool, ToolCallPart, ToolResultPart
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings, ToolDocs
from tokengauge.upstream.tool_docs import tool_forms

SETTINGS = ServerSettings(
    providers=(ProviderSettings(id="test"),),
    models=(ModelSettings(id="claude-sonnet-4-5", provider="test"),),
)
SAFETY = 128
FLOOR = 4_096


def documented_tool(i: int) -> Tool:
    """A tool whose documentation is most of its JSON."""
    words = " ".join(f"The option number {j} changes how step {i} behaves." for j in range(12))
    return Tool(
        name=f"tool_{i}",
        description=f"Runs step {i} of the build. {words}",
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": f"Where step {i} runs. {words}"},
                "mode": {"type": "string", "enum": ["fast", "full"], "description": words},
            },
            "required": ["path"],
        },
    )


TOOLS = [documented_tool(i) for i in range(8)]


def request(
    question: str = "Why did the build fail?",
    *,
    history: int = 0,
    results: Sequence[str] = (),
    call: str = "tool_0",
) -> list[Message]:
    """A system prompt, `history` earlier exchanges, the turn's question, and one tool call of
    `call` per result."""
    messages = [Message(role="system", content=[TextPart("You are a careful assistant.")])]
    for i in range(history):
        messages.append(Message(role="user", content=[TextPart(f"old question {i} " * 40)]))
        messages.append(Message(role="assistant", content=[TextPart(f"old answer {i} " * 40)]))
    messages.append(Message(role="user", content=[TextPart(question)]))
    for i, result in enumerate(results):
        part = ToolCallPart(f"c{i}", call, {"path": f"logs/{i}.log"})
        messages.append(Message(role="assistant", content=[part]))
        messages.append(Message(role="user", content=[ToolResultPart(f"c{i}", [TextPart(result)])]))
    return messages


class Ladder:
    """A model's estimates and the ladder over them, with a window chosen per test."""

    def __init__(self, gauge: Gauge) -> None:
        self.gauge = gauge
        self.model = gauge.offer.model("claude-sonnet-4-5")
        self.truncator = Truncator(gauge.counts.counter(self.model).text.encoding)

    def estimate(self, tools: Sequence[Tool] = TOOLS) -> Estimate:
        def estimate(messages: Sequence[Message], sent: Sequence[Tool]) -> RequestEstimate:
            given = tools if len(sent) == len(tools) else None
            return self.gauge.counts.estimate(self.model, messages, sent, given, remember=False)

        return estimate

    def size(self, messages: Sequence[Message], tools: Sequence[Tool] = TOOLS) -> int:
        return self.estimate()(messages, tools).total

    def room(self, fits: int, least_floor: int = 1_024) -> Room:
        """A window in which `fits` input tokens just fit beside the usual output floor."""
        return Room(fits + FLOOR + SAFETY, SAFETY, FLOOR, least_floor)

    def climb(
        self,
        messages: Sequence[Message],
        room: Room,
        docs: ToolDocs = "full",
        tools=TOOLS,
        since: Decisions | None = None,
    ) -> Fitted:
        forms = tool_forms(tools, messages, docs) if tools else [(docs, [])]
        fitted = climb(messages, forms, self.truncator, self.estimate(tools), room, since)
        assert self.size(fitted.messages, fitted.tools) <= room.target(fitted.output_floor)
        return fitted


def aim(target: int, grown: int = 0) -> int:
    """Where a rung cuts to: as far as needed, and past it by the step a conversation that grew
    by `grown` tokens since its last request takes (`STEP_ROUNDS`, at most `STEP_SHARE`)."""
    return target - min(STEP_ROUNDS * grown, math.ceil(target * STEP_SHARE))
