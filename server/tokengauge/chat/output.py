"""What a chat gives out (ARCHITECTURE §3): its parts, status and notices through a `ChatSink`,
the usage Copilot reads when it ends, and its failure as a `ChatError`."""

from __future__ import annotations

from typing import Any, Protocol

from tokengauge.calibration.ladder import Fitted
from tokengauge.messages import Usage
from tokengauge.protocol import ChatPart, ChatResult, Status, TrimReport, UsagePart


class ChatError(Exception):
    """A chat that failed; `kind` says why, the message says it to a person, and `brief` in a
    few words (for the status bar)."""

    def __init__(self, kind: str, message: str, brief: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.brief = brief or kind.replace("_", " ")


class ChatSink(Protocol):
    """Where a chat's output goes (the language server, or a test)."""

    def part(self, request_id: str, part: ChatPart) -> None: ...
    def status(self, status: Status) -> None: ...
    def models_changed(self) -> None: ...
    def calibration_changed(self, model_id: str) -> None: ...
    def activity(self) -> None: ...
    def notice(self, message: str, setting: str | None) -> None: ...


def openai_usage(usage: Usage, prompt_tokens: int) -> dict[str, Any]:
    """The OpenAI-style usage JSON that Copilot reads from a `usage` data part, the input in the
    units the model's window is declared in (`prompt_tokens`: what Copilot's compaction compares
    with `maxInputTokens`)."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def trim_report(fitted: Fitted) -> TrimReport | None:
    """What the ladder did, for the response's last part; None if it did nothing."""
    if not fitted.changed:
        return None
    return TrimReport(
        tool_results=fitted.tool_results,
        messages=fitted.dropped,
        tokens=fitted.tokens,
        tool_docs=fitted.tool_docs,
        output_floor=fitted.output_floor if "output" in fitted.removed else None,
        removed=fitted.removed,
    )


def ending(
    usage: Usage, prompt: int, estimated: bool, fitted: Fitted, finish: str | None
) -> tuple[UsagePart, ChatResult]:
    """The answer's last part and the chat's result: the usage (`estimated` when the API sent
    none; `prompt` in Copilot's units), what the ladder did, and why the answer stopped."""
    data = openai_usage(usage, prompt)
    trimmed = trim_report(fitted)
    part = UsagePart(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        total_input_tokens=usage.total_input_tokens,
        estimated=estimated,
        data=data,
        trimmed=trimmed,
    )
    return part, ChatResult(data, finish or "stop", trimmed)
