"""The chat: one `tokenGauge/chat` request counted, fitted, sent, streamed and learned from
(ARCHITECTURE §3, §8)."""

from __future__ import annotations

from tokengauge.chat.runner import ChatError, ChatRunner, ChatSink, openai_usage

__all__ = ["ChatError", "ChatRunner", "ChatSink", "openai_usage"]
