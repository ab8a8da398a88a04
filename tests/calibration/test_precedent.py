"""The ladder's decisions kept per conversation (`calibration.precedent`): the next request of a
conversation takes what the last one took, whether or not it needs it, so that its prefix is the
last one's; it goes further only when that is not enough, by a step the requests after it fit in."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.calibration.ladders import Ladder, aim, request
from tests.calibration.texts import log, result_texts
from tokengauge.calibration.precedent import Decisions
from tokengauge.messages import Message, TextPart, ToolCallPart, ToolResultPart


def next_round(messages: Sequence[Message], call_id: str, result: str) -> list[Message]:
    """`messages`, then a tool loop's next round: a call and its result."""
    call = ToolCallPart(call_id, "tool_0", {"path": f"logs/{call_id}.log"})
    return [
        *messages,
        Message(role="assistant", content=[call]),
        Message(role="user", content=[ToolResultPart(call_id, [TextPart(result)])]),
    ]


def taken(fitted_decisions: Decisions | None) -> Decisions:
    assert fitted_decisions is not None
    return fitted_decisions


def grown_over(ladder: Ladder, over: int) -> tuple[list[Message], Decisions, int]:
    """A conversation whose last request fitted (the ladder took nothing), and the round after
    it, which does not fit by `over` tokens: its messages, the last request's decisions and the
    input target."""
    messages = request(results=[log("b", 600), log("c", 900)], history=3)
    following = next_round(messages, "c8", log("s", 300))
    target = ladder.size(following) - over
    first = ladder.climb(messages, ladder.room(target))
    assert not first.changed
    return following, taken(first.decisions), target


def test_a_conversation_that_grew_is_cut_a_step_past_what_it_needs(ladder: Ladder):
    messages, since, target = grown_over(ladder, 2_000)
    grown = ladder.size(messages) - ladder.size(since.given)
    fitted = ladder.climb(messages, ladder.room(target), since=since)
    assert set(fitted.removed) == {"toolResults"}
    # Past the target by twice what the conversation grew: the next rounds fit with these cuts.
    assert aim(target, grown) - 600 <= ladder.size(fitted.messages) <= aim(target, grown)
    assert aim(target, grown) < target - grown
    # A request that continues none is cut only as far as it needs.
    alone = ladder.climb(messages, ladder.room(target))
    assert target - 600 <= ladder.size(alone.messages) <= target


def test_the_next_round_takes_the_same_cuts_though_it_would_fit_with_others(ladder: Ladder):
    messages, since, target = grown_over(ladder, 2_000)
    room = ladder.room(target)
    first = ladder.climb(messages, room, since=since)
    following = next_round(messages, "c9", log("t", 40))
    second = ladder.climb(following, room, since=taken(first.decisions))
    assert second.messages[: len(first.messages)] == first.messages
    assert result_texts(second.messages)[-1] == log("t", 40)  # the new round whole
    # Decided alone, the same request is cut to other lengths: its prefix breaks.
    alone = ladder.climb(following, room)
    assert alone.messages[: len(first.messages)] != first.messages


def test_rounds_within_the_step_keep_the_prefix_and_one_past_it_cuts_further(ladder: Ladder):
    messages, since, target = grown_over(ladder, 2_000)
    room = ladder.room(target)
    fitted = ladder.climb(messages, room, since=since)
    kept = 0
    for i in range(24):  # rounds of about 500 tokens: a step holds a few
        before, messages = fitted, next_round(messages, f"r{i}", log(f"r{i}", 40))
        fitted = ladder.climb(messages, room, since=taken(before.decisions))
        if fitted.messages[: len(before.messages)] != before.messages:
            break
        kept += 1
    else:
        pytest.fail("no round went past the step")
    assert kept >= 1
    # Cut further, never back: every text cut before is as short or shorter now.
    held, now = taken(before.decisions).cuts, taken(fitted.decisions).cuts
    assert all(now[key] <= keep for key, keep in held.items())
    assert ladder.size(fitted.messages) <= target


def test_exchanges_left_out_stay_out_though_the_next_request_would_fit_with_them(
    ladder: Ladder,
):
    messages = request(results=[log("a", 300)], history=6)
    first = ladder.climb(messages, ladder.room(ladder.size(messages) - 6_000))
    assert first.dropped
    following = next_round(messages, "c9", "ok")
    roomy = ladder.room(ladder.size(following) + 1_000)  # the window grew: all of it would fit
    assert not ladder.climb(following, roomy).changed
    second = ladder.climb(following, roomy, since=taken(first.decisions))
    assert second.dropped == first.dropped
    assert second.messages[: len(first.messages)] == first.messages


def test_the_tools_stay_in_the_form_the_last_request_sent(ladder: Ladder):
    messages = request(results=["built in 3 s"])
    first = ladder.climb(messages, ladder.room(ladder.size(messages) - 2_000))
    assert first.tool_docs is not None
    following = next_round(messages, "c9", "ok")
    roomy = ladder.room(ladder.size(following) + 1_000)
    second = ladder.climb(following, roomy, since=taken(first.decisions))
    assert second.tools == first.tools and second.tool_docs == first.tool_docs


def test_only_a_conversation_that_goes_on_is_taken_as_one():
    messages = request(results=["built in 3 s"], history=2)
    decisions = Decisions(tuple(messages))
    assert decisions.continued_by(next_round(messages, "c9", "ok"))
    assert not decisions.continued_by(messages)  # nothing new: not the next request
    compacted = [messages[0], Message(role="user", content=[TextPart("<summary>…</summary>")])]
    assert not decisions.continued_by([*compacted, *messages[2:], *messages[-2:]])
