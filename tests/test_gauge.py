"""Gauge: which request the status bar follows."""

from __future__ import annotations

from pathlib import Path

from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, TextPart, Tool, Usage
from tokengauge.protocol import RecordUsageParams
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings

SETTINGS = ServerSettings(
    providers=(ProviderSettings(id="test"),),
    models=(ModelSettings(id="gpt-4o", provider="test"),),
)
TOOLS = [Tool("read_file", "Read a file.", {"type": "object"})]


def system(text: str) -> Message:
    return Message(role="system", content=[TextPart(text)])


def user(text: str) -> Message:
    return Message(role="user", content=[TextPart(text)])


def test_copilots_helper_requests_do_not_replace_the_conversation(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))

    def report(messages: list[Message], tools: list[Tool], tokens: int) -> int | None:
        gauge.record_usage(RecordUsageParams("gpt-4o", messages, Usage(tokens, 10), tools))
        return gauge.last.input_tokens if gauge.last else None

    agent = [system("You are an expert AI programming assistant."), user("review this " * 50)]
    assert report(agent, TOOLS, 900) == 900
    # A chat title and a summary: no tools, a system prompt of their own.
    assert report([system("You write short titles."), user("title please")], [], 60) == 900
    summary = [system("Summarize the conversation."), user("history " * 40), user("go")]
    assert report(summary, [], 300) == 900
    # The same conversation without tools (ask mode), or a request with no system prompt (another
    # extension's plain request): the status follows them.
    assert report([*agent, user("and now?")], [], 950) == 950
    assert report(agent, TOOLS, 910) == 910
    assert report([user("status please")], [], 40) == 40
