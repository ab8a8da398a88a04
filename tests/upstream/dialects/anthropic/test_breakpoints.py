"""The Messages body's own cache breakpoints, judged by the test upstream's Anthropic cache."""

from __future__ import annotations

from typing import Any

from tests.harness.fake_upstream.prompt_cache import PromptCache, breakpoint_error, laid
from tests.upstream.dialects.request_parts import (
    CACHE,
    EPHEMERAL_MARK,
    NO_OPTIONS,
    assistant,
    result,
    system,
    text,
    user,
)
from tokengauge.messages import Message, TextPart, ThinkingPart, Tool, ToolCallPart
from tokengauge.upstream.dialects.anthropic.request import build_anthropic_body

ENCODER = "o200k_base"
TOOLS = [Tool(f"tool_{n}", "does things " * 40, {"type": "object"}) for n in range(3)]
SYSTEM = system(TextPart("You are a careful agent. " * 200))


def body(messages: list[Message]) -> dict[str, Any]:
    return build_anthropic_body("claude", messages, TOOLS, NO_OPTIONS, 4096)


def marked(request: dict[str, Any]) -> list[str]:
    """Where the request's marks are: tool names, "system", or role:block index in its turn."""
    places = [t["name"] for t in request["tools"] if "cache_control" in t]
    places += ["system" for b in request.get("system", []) if "cache_control" in b]
    for n, turn in enumerate(request["messages"]):
        places += [f"{n}:{i}" for i, b in enumerate(turn["content"]) if "cache_control" in b]
    return places


def rounds(count: int, calls: int) -> list[Message]:
    """A user prompt, then `count` rounds of `calls` parallel tool calls and their results."""
    messages = [SYSTEM, user(TextPart("Fix the bug in the parser."))]
    for r in range(count):
        ids = [f"c{r}_{n}" for n in range(calls)]
        messages.append(assistant(*(ToolCallPart(i, "tool_0", {"n": i}) for i in ids)))
        messages.append(user(*(result(i, TextPart(f"result of {i}: " + "x " * 60)) for i in ids)))
    return messages


def test_a_tool_loop_request_marks_its_end_the_previous_end_the_system_and_the_tools() -> None:
    request = body(rounds(2, 1))
    assert marked(request) == ["tool_2", "system", "2:0", "4:0"]
    assert breakpoint_error(request) is None


def test_each_request_of_a_tool_loop_reads_the_whole_of_the_one_before() -> None:
    cache = PromptCache()
    before = None
    for count in range(1, 5):
        # 12 parallel calls a round: 24 blocks, past the API's 20-block lookback from the end.
        request = body(rounds(count, 12))
        size = laid(request, "anthropic", ENCODER)
        use = cache.use(request, "anthropic", ENCODER, size)
        if before is not None:
            assert use.read >= before
        before = size


def test_without_its_marks_nothing_is_cached() -> None:
    cache = PromptCache()
    for count in range(1, 3):
        request = body(rounds(count, 1))
        for block in [*request["tools"], *request["system"]]:
            block.pop("cache_control", None)
        for turn in request["messages"]:
            for block in turn["content"]:
                block.pop("cache_control", None)
        assert cache.use(request, "anthropic", ENCODER, 10_000).read == 0


def test_thinking_is_never_marked() -> None:
    signed = ThinkingPart("let me think", signature="sig")
    request = body([SYSTEM, user(TextPart("q")), assistant(TextPart("a"), signed)])
    assert request["messages"][-1]["content"][0]["type"] == "thinking"
    assert "cache_control" not in request["messages"][-1]["content"][0]
    assert "cache_control" in request["messages"][-1]["content"][1]
    assert breakpoint_error(request) is None


def test_a_clients_marks_fill_what_ours_leave_and_never_past_four() -> None:
    roomy = build_anthropic_body(
        "claude", [user(TextPart("a"), CACHE, TextPart("b"))], [], NO_OPTIONS, 4096
    )
    assert roomy["messages"] == [
        {"role": "user", "content": [text("a", **EPHEMERAL_MARK), text("b", **EPHEMERAL_MARK)]}
    ]
    messages = rounds(2, 1)
    messages[1] = user(TextPart("Fix the bug"), CACHE, TextPart("in the parser."))
    full = body(messages)
    assert marked(full) == ["tool_2", "system", "2:0", "4:0"]
    assert breakpoint_error(full) is None
