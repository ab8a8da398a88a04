"""Requests reported to a `Gauge` as the API would have answered them: what the tests of the
status bar, the usage history and the model offer feed it."""

from __future__ import annotations

from tokengauge.gauge import Gauge
from tokengauge.messages import Message, TextPart, Tool, Usage
from tokengauge.protocol import RecordUsageParams
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings

SETTINGS = ServerSettings(
    providers=(ProviderSettings(id="test"),),
    models=(
        ModelSettings(id="gpt-4o", provider="test"),
        ModelSettings(id="claude-sonnet-4-5", provider="test"),
    ),
)
TOOLS = [Tool("read_file", "Read a file.", {"type": "object"})]


def system(text: str) -> Message:
    return Message(role="system", content=[TextPart(text)])


def user(text: str) -> Message:
    return Message(role="user", content=[TextPart(text)])


def report(
    gauge: Gauge, messages: list[Message], tools: list[Tool], tokens: int, model: str = "gpt-4o"
) -> None:
    gauge.record_usage(RecordUsageParams(model, messages, Usage(tokens, 10), tools))


AGENT = [system("You are an expert AI programming assistant."), user("review this " * 50)]
