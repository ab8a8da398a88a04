"""The reasoning each answer came with, remembered by its tool calls (`chat.reasoning`)."""

from __future__ import annotations

from tokengauge.chat.reasoning import ReasoningMemory, message_keys
from tokengauge.messages import Message, ThinkingPart, ToolCallPart


def test_numbered_tool_call_ids_recall_each_chat_s_own_reasoning():
    """Kimi K2 numbers its calls (`functions.<name>:<index>`): every chat's first call of a tool
    has the same id; each keeps the reasoning it came with."""
    memory = ReasoningMemory()
    messages = []
    for path in ("a.py", "b.py"):
        call = ToolCallPart("functions.read_file:0", "read_file", {"path": path, "limit": 40})
        message = Message("assistant", [call])
        memory.remember("kimi-k2.5", message_keys(message), thought(f"Read {path} first."))
        messages.append(message)
    recalled = [memory.recall("kimi-k2.5", message) for message in messages]
    assert [part.value if part else None for part in recalled] == [
        "Read a.py first.",
        "Read b.py first.",
    ]
    # The arguments as the client sends them back: the same object, its keys in another order.
    again = ToolCallPart("functions.read_file:0", "read_file", {"limit": 40, "path": "a.py"})
    assert memory.recall("kimi-k2.5", Message("assistant", [again])) == recalled[0]


def thought(text: str) -> ThinkingPart:
    return ThinkingPart(text, field="reasoning_content")
