"""Copilot's own count of messages: their OpenAI form, counted with o200k_base as Copilot does."""

from __future__ import annotations

import json
import math
import sys

from tokengauge.counting.copilot_view import CACHE_BYTES, CopilotView
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.messages import DataPart, Message, TextPart, ToolCallPart, ToolResultPart

O200K = EncodingRegistry().get("o200k_base")
VIEW = CopilotView(O200K)


def n(text: str) -> int:
    return len(O200K.encode_ordinary(text))


def test_a_text_message_is_3_plus_role_plus_text():
    message = Message(role="user", content=[TextPart("Review this "), TextPart("module.")])
    assert VIEW.message(message) == 3 + n("user") + n("Review this ") + n("module.")


def test_tool_calls_count_half_again_and_a_name_one_more():
    call = ToolCallPart("call_1", "read_file", {"filePath": "/a.py", "startLine": 1})
    message = Message(role="assistant", name="agent", content=[TextPart("Reading."), call])
    strings = n("call_1") + n("function") + n("read_file") + n(json.dumps(call.input))
    expected = 3 + n("assistant") + n("Reading.") + math.floor(1.5 * strings) + n("agent") + 1
    assert VIEW.message(message) == expected


def test_each_tool_result_is_a_tool_message_with_its_call_id():
    message = Message(
        role="user",
        content=[
            ToolResultPart("call_1", [TextPart("x = 1\n")]),
            ToolResultPart("call_2", [TextPart("y = 2\n"), DataPart("cache_control", "")]),
        ],
    )
    expected = sum(
        3 + n("tool") + n(text) + n(call)
        for text, call in (("x = 1\n", "call_1"), ("y = 2\n", "call_2"))
    )
    assert VIEW.message(message) == expected


def test_a_request_is_the_sum_of_its_messages():
    messages = [
        Message(role="system", content=[TextPart("Be brief.")]),
        Message(role="user", content=[TextPart("hi")]),
    ]
    assert VIEW.messages(messages) == sum(VIEW.message(m) for m in messages)


def test_a_million_spaces_are_counted_not_fatal():
    """Copilot's view of a chat holding 1,000,000 spaces (tiktoken alone panics on them)."""
    message = Message(role="user", content=[TextPart(" " * 1_000_000)])
    assert VIEW.message(message) > 3 + n("user")


def test_the_cache_is_bounded_by_bytes():
    view = CopilotView(O200K)
    texts = [f"{i} " + "語" * 100_000 for i in range(40)]  # 200 KB each, as Python holds them
    for text in texts:
        view._tokens(text)
    assert sum(sys.getsizeof(text) for text in view._cache) <= CACHE_BYTES
    assert texts[-1] in view._cache and texts[0] not in view._cache
