"""The recovery ladder: each rung alone, rungs together, their order, and the refusal."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.calibration.ladders import FLOOR, SAFETY, TOOLS, Ladder, aim, request
from tests.calibration.texts import log, result_texts
from tokengauge.calibration.ladder import CannotFit, Room
from tokengauge.calibration.trim import (
    MIN_KEPT_TOKENS,
    apply,
    history_units,
    marker,
    shortest,
    tool_texts,
)
from tokengauge.messages import (
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from tokengauge.models import budget
from tokengauge.settings import ToolDocs
from tokengauge.upstream.tool_docs import tool_forms


def test_a_request_that_fits_is_left_alone(ladder: Ladder):
    messages = request(results=[log("a", 50)], history=2)
    fitted = ladder.climb(messages, ladder.room(ladder.size(messages)))
    assert not fitted.changed and fitted.removed == {}
    assert fitted.messages == messages and fitted.tools == TOOLS
    assert fitted.output_floor == FLOOR and fitted.tool_docs is None


def reasoning_request(results: Sequence[str] = ()) -> list[Message]:
    """Two earlier exchanges whose tool calls a Chat Completions server's reasoning came with
    (one signed, as OpenRouter's), then the turn, its own call with its reasoning."""
    thought = ThinkingPart(log("thought", 300), field="reasoning_content")
    signed = ThinkingPart(log("signed", 300), field="reasoning", details=[{"signature": "c2ln"}])
    messages = [Message(role="system", content=[TextPart("You are a careful assistant.")])]
    for i, part in enumerate((thought, signed)):
        call = ToolCallPart(f"old{i}", "tool_0", {"path": f"old/{i}"})
        messages.append(Message(role="user", content=[TextPart(f"old question {i}")]))
        messages.append(Message(role="assistant", content=[part, call]))
        messages.append(Message(role="user", content=[ToolResultPart(f"old{i}", [TextPart("ok")])]))
    messages.append(Message(role="user", content=[TextPart("Why did the build fail?")]))
    current = ThinkingPart(log("current", 300), field="reasoning_content")
    messages.append(Message(role="assistant", content=[current, ToolCallPart("c0", "tool_0", {})]))
    messages.append(
        Message(
            role="user",
            content=[ToolResultPart("c0", [TextPart(r) for r in results] or [TextPart("ok")])],
        )
    )
    return messages


def reasonings(messages: Sequence[Message]) -> list[str]:
    return [p.value for m in messages for p in m.content if isinstance(p, ThinkingPart)]


def test_earlier_plain_reasoning_goes_first_and_only_as_far_as_needed(ladder: Ladder):
    messages = reasoning_request(results=[log("b", 400)])
    fitted = ladder.climb(messages, ladder.room(ladder.size(messages) - 1_500))
    assert set(fitted.removed) == {"reasoning"} and fitted.reasoning == 1
    old, signed, current = reasonings(fitted.messages)
    assert "tokens omitted" in old and old.startswith("thought line 0:")
    # What a signature goes with, and what the current tool loop must have back, stay whole.
    assert (signed, current) == tuple(reasonings(messages)[1:])
    assert result_texts(fitted.messages) == result_texts(messages)


def test_tool_results_only_once_the_earlier_reasoning_is_cut_in_full(ladder: Ladder):
    messages = reasoning_request(results=[log("b", 900)])
    fitted = ladder.climb(messages, ladder.room(ladder.size(messages) - 6_000))
    assert set(fitted.removed) == {"reasoning", "toolResults"}
    [old, *_] = reasonings(fitted.messages)
    assert len(ladder.truncator.tokens(old)) <= MIN_KEPT_TOKENS + 20
    assert reasonings(fitted.messages)[1:] == reasonings(messages)[1:]


def test_tool_results_first_and_only_as_far_as_needed(ladder: Ladder):
    messages = request(results=[log("b", 600), log("c", 900), log("s", 40)], history=3)
    target = ladder.size(messages) - 8_000
    fitted = ladder.climb(messages, ladder.room(target))
    assert set(fitted.removed) == {"toolResults"} and fitted.tool_results == 2
    assert fitted.removed["toolResults"] >= 8_000
    assert target - 600 <= ladder.size(fitted.messages) <= target  # not cut much more than needed
    big, bigger, small = result_texts(fitted.messages)
    assert small == log("s", 40) and bigger.startswith("c line 0:") and "c line 899:" in bigger
    assert "tokens omitted" in big
    assert len(fitted.messages) == len(messages)


@pytest.mark.parametrize(("lines", "over"), [(50, 279), (55, 427), (60, 242), (60, 575)])
def test_a_small_overage_of_many_results_cuts_each_a_little(ladder: Ladder, lines: int, over: int):
    # Six results of about the same length a little over the target: each pass at levelling
    # them must lower their common length, or the ladder gives up and cuts all six to the least.
    messages = request(results=[log(f"r{i}", lines + i) for i in range(6)])
    target = ladder.size(messages) - over
    fitted = ladder.climb(messages, ladder.room(target))
    sizes = [len(ladder.truncator.tokens(text)) for text in result_texts(fitted.messages)]
    assert min(sizes) > MIN_KEPT_TOKENS + 100
    assert aim(target) - 600 <= ladder.size(fitted.messages) <= aim(target)


def test_then_the_oldest_exchanges_with_every_result_cut_in_full(ladder: Ladder):
    messages = request(results=[log("a", 300)], history=6)
    fitted = ladder.climb(messages, ladder.room(ladder.size(messages) - 6_000))
    assert set(fitted.removed) == {"toolResults", "history"}
    assert 0 < fitted.dropped < 12 and fitted.dropped % 2 == 0
    assert fitted.messages[0] == messages[0] and fitted.messages[1].role == "user"
    assert "old question 0 " not in str(fitted.messages)  # the oldest went first
    assert "Why did the build fail?" in str(fitted.messages)
    [result] = result_texts(fitted.messages)
    assert len(ladder.truncator.tokens(result)) <= MIN_KEPT_TOKENS + 20
    # Only as far as needed: one exchange fewer left out would not fit.
    exchanges = fitted.dropped // 2
    fewer = history_units(messages)[exchanges - 2] if exchanges > 1 else frozenset()
    cuts = shortest(tool_texts(messages, ladder.truncator))
    kept = apply(messages, ladder.truncator, cuts, fewer).messages
    assert ladder.size(fitted.messages) <= aim(ladder.size(messages) - 6_000)
    assert ladder.size(kept) > aim(ladder.size(messages) - 6_000)


@pytest.mark.parametrize(
    ("docs", "wanted"),
    [
        pytest.param("full", "progressive", id="full-goes-progressive-first"),
        pytest.param("progressive", "minimal", id="progressive-goes-minimal"),
    ],
)
def test_then_the_tools_in_a_smaller_form(ladder: Ladder, docs: ToolDocs, wanted: str):
    # tool_0 was called: progressive keeps it whole and shortens the seven others.
    messages = request(results=["built in 3 s"])
    forms = dict(tool_forms(TOOLS, messages, "full"))
    progressive = ladder.size(messages, forms["progressive"])
    minimal = ladder.size(messages, forms["minimal"])
    usual = ladder.size(messages, forms[docs])
    fits = progressive if docs == "full" else minimal
    fitted = ladder.climb(messages, ladder.room(fits), docs)
    assert set(fitted.removed) == {"toolDocs"} and fitted.tool_docs == wanted
    assert fitted.tools == forms[wanted] and fitted.messages == messages
    assert fitted.removed["toolDocs"] == usual - fits
    assert [t.name for t in fitted.tools] == [t.name for t in TOOLS]


def test_then_the_output_floor_only_as_low_as_needed(ladder: Ladder):
    messages = request(log("pasted", 600))
    size = ladder.size(messages, [])
    room = ladder.room(size - 1_500)  # fits with 2,596 left for the answer
    fitted = ladder.climb(messages, room, tools=[])
    assert set(fitted.removed) == {"output"} and fitted.messages == messages
    assert fitted.output_floor == FLOOR - 1_500 and fitted.removed["output"] == 1_500


def test_the_output_floor_keeps_room_for_a_tool_call_the_conversation_made(ladder: Ladder):
    content = {"path": "src/app.py", "content": log("code", 400)}
    call = ToolCallPart("c1", "create_file", content)
    messages = request(log("pasted", 600))
    messages[1:1] = [
        Message(role="user", content=[TextPart("Write the file.")]),
        Message(role="assistant", content=[call]),
        Message(role="user", content=[ToolResultPart("c1", [TextPart("created")])]),
    ]
    largest = len(ladder.truncator.tokens("create_file" + str(content).replace("'", '"')))
    least = budget.least_output_floor(FLOOR, largest)
    assert least > budget.LEAST_OUTPUT_FLOOR
    room = Room(ladder.size(messages[:1] + messages[4:], []) + 1_024 + SAFETY, SAFETY, FLOOR, least)
    fitted = ladder.climb(messages, room, tools=[])
    assert fitted.output_floor >= least


def test_last_the_turns_own_message_head_and_tail(ladder: Ladder):
    pasted = log("pasted", 900)
    messages = request(pasted)
    room = ladder.room(ladder.size(messages, []) - 3_000 - (FLOOR - 1_024))
    fitted = ladder.climb(messages, room, tools=[])
    assert set(fitted.removed) == {"output", "userMessage"}
    assert fitted.output_floor == 1_024
    [sent] = [p for p in fitted.messages[1].content if isinstance(p, TextPart)]
    assert "tokens omitted" in sent.value and marker(0)[:3] in sent.value
    head, tail = sent.value.split("\n[… ")
    assert pasted.startswith(head) and "pasted line 899:" in tail
    assert 3_000 <= fitted.removed["userMessage"] <= 3_600


def test_every_rung_together_in_order(ladder: Ladder):
    messages = request(log("pasted", 900), history=4, results=[log("r", 400), log("s", 300)])
    forms = dict(tool_forms(TOOLS, messages, "full"))
    floor_least = 1_024
    every_other_rung = apply(
        messages,
        ladder.truncator,
        shortest(tool_texts(messages, ladder.truncator)),
        history_units(messages)[-1],
    ).messages
    in_full = ladder.size(every_other_rung, forms["minimal"])
    room = ladder.room(in_full - 2_000 - (FLOOR - floor_least))
    fitted = ladder.climb(messages, room)
    assert list(fitted.removed) == ["toolResults", "history", "toolDocs", "output", "userMessage"]
    assert fitted.dropped == 8 and fitted.tool_results == 2 and fitted.tool_docs == "minimal"
    assert fitted.output_floor == floor_least
    assert "Runs step 3 of the build." in str(fitted.tools) and "option number 5" not in str(
        fitted.tools
    )
    described = fitted.describe()
    for words in ("2 tool results", "8 earlier messages", "minimal", "1,024", "your message"):
        assert words in described


def test_a_later_rung_is_not_taken_while_the_earlier_ones_suffice(ladder: Ladder):
    # Minimal tools alone would fit too; cutting the results and dropping history come first.
    messages = request(results=[log("r", 400)], history=6)
    forms = dict(tool_forms(TOOLS, messages, "full"))
    saved_by_tools = ladder.size(messages) - ladder.size(messages, forms["minimal"])
    room = ladder.room(ladder.size(messages) - saved_by_tools // 2)
    fitted = ladder.climb(messages, room)
    assert "toolDocs" not in fitted.removed and fitted.tools == TOOLS
    assert set(fitted.removed) <= {"toolResults", "history"}


def test_nothing_left_to_cut_is_refused_with_the_figures(ladder: Ladder):
    system = Message(role="system", content=[TextPart(log("rules", 400))])
    messages = [system, Message(role="user", content=[TextPart("Hi")])]
    with pytest.raises(CannotFit) as caught:
        ladder.climb(messages, ladder.room(500), tools=[])
    assert caught.value.target == ladder.room(500).target(1_024)
    assert caught.value.estimate.system > 500
