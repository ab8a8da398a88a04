"""The chat: one `tokenGauge/chat` request counted, fitted, sent, streamed and learned from
(ARCHITECTURE §3, §8)."""

from __future__ import annotations

from tokengauge.chat.output import ChatError, ChatSink, openai_usage
from tokengauge.chat.runner import ChatRunner

__all__ = ["ChatError", "ChatRunner", "ChatSink", "openai_usage"]
