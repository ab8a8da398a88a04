"""Cutting text: head + tail truncation, levelling texts, whole exchanges of history, the cap."""

from __future__ import annotations

import pytest

from tests.calibration.texts import log, result_texts
from tokengauge.calibration.trim import (
    MIN_KEPT_TOKENS,
    Truncator,
    apply,
    cap_tool_results,
    history_units,
    level,
    marker,
    tool_texts,
    turn_texts,
)
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.messages import Message, TextPart, ToolCallPart, ToolResultPart

ENCODING = EncodingRegistry().get("cl100k_base")
TRUNCATOR = Truncator(ENCODING)


def agent_turn(*results: str, history: int = 0) -> list[Message]:
    """A system prompt, `history` earlier exchanges, then a turn with one tool call per result."""
    messages = [Message(role="system", content=[TextPart("You are a careful assistant.")])]
    for i in range(history):
        messages.append(Message(role="user", content=[TextPart(f"old question {i} " * 40)]))
        messages.append(Message(role="assistant", content=[TextPart(f"old answer {i} " * 40)]))
    messages.append(Message(role="user", content=[TextPart("Why did the service fail?")]))
    for i, result in enumerate(results):
        call = ToolCallPart(f"c{i}", "read_file", {"path": f"logs/{i}.log"})
        messages.append(Message(role="assistant", content=[call]))
        messages.append(Message(role="user", content=[ToolResultPart(f"c{i}", [TextPart(result)])]))
    return messages


def tokens(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


def test_cut_keeps_the_beginning_and_the_end_on_token_boundaries():
    text = log("x", 400)
    cut, omitted = TRUNCATOR.cut(text, 300)
    total = tokens(text)
    assert omitted == total - 300
    head, tail = cut.split(marker(omitted))
    assert text.startswith(head) and text.endswith(tail)
    assert tokens(head) + tokens(tail) == pytest.approx(300, abs=2)
    assert "x line 0:" in head and "x line 399:" in tail


def test_cut_takes_a_million_spaces():
    """A tool result tiktoken alone panics on (`toolResultMaxTokens` cut it through tiktoken)."""
    text = "start" + " " * 1_000_000 + "end"
    cut, omitted = TRUNCATOR.cut(text, 300)
    assert omitted > 0 and cut.startswith("start") and cut.endswith("end")


def test_cut_leaves_short_text_alone_and_never_splits_a_character():
    assert TRUNCATOR.cut("short", 10) == ("short", 0)
    text = "日本語のテキスト、" * 300
    cut, omitted = TRUNCATOR.cut(text, 101)
    assert omitted > 0 and "\ufffd" not in cut
    head, tail = cut.split(marker(omitted))
    assert text.startswith(head) and text.endswith(tail)


def test_levelling_cuts_the_longest_texts_to_one_length():
    big, bigger, small = log("b", 600), log("c", 900), log("s", 40)
    messages = agent_turn(big, bigger, small)
    texts = tool_texts(messages, TRUNCATOR)
    cuts = level(texts, 8_000)
    cut = apply(messages, TRUNCATOR, cuts)
    assert cut.tool_results == 2 and cut.dropped == 0
    assert cut.tokens == pytest.approx(8_000, abs=len(texts))
    cut_big, cut_bigger, kept_small = result_texts(cut.messages)
    assert kept_small == small
    assert tokens(cut_big) == pytest.approx(tokens(cut_bigger), rel=0.1)
    assert cut_bigger.endswith(bigger[-200:]) and cut_bigger.startswith(bigger[:200])
    assert level(texts, 0) == {} and level([], 500) == {}


def test_levelling_never_goes_below_the_least_kept():
    messages = agent_turn(log("a", 300), log("b", 300))
    cuts = level(tool_texts(messages, TRUNCATOR), 10**6)
    assert set(cuts.values()) == {MIN_KEPT_TOKENS}


def test_history_goes_in_whole_exchanges_never_the_turn():
    messages = agent_turn(log("a", 30), history=3)
    units = history_units(messages)
    assert [sorted(u) for u in units] == [[1, 2], [1, 2, 3, 4], [1, 2, 3, 4, 5, 6]]
    kept = apply(messages, TRUNCATOR, {}, units[0]).messages
    assert kept[0] == messages[0] and kept[1].role == "user" and kept[1] == messages[3]
    assert apply(messages, TRUNCATOR, {}, units[-1]).messages == [messages[0], *messages[7:]]


def test_copilots_context_and_its_summary_never_go_with_the_history():
    """Copilot gives its environment and the summary of what it compacted away as user messages:
    the oldest, and the last that should go."""
    messages = agent_turn(log("a", 30), history=2)
    environment = Message("user", [TextPart("<environment_info>\nLinux\n</environment_info>")])
    summary = Message(
        "user", [TextPart("<conversation-summary>\nAll read.\n</conversation-summary>")]
    )
    messages[1:1] = [environment, summary]
    units = history_units(messages)
    assert all(1 not in unit and 2 not in unit for unit in units)
    kept = apply(messages, TRUNCATOR, {}, units[-1]).messages
    assert kept[:3] == [messages[0], environment, summary]


def test_the_turns_own_texts_are_found_and_cut_like_any_other():
    messages = agent_turn(log("a", 30))
    messages[1] = Message(role="user", content=[TextPart(log("pasted", 400)), TextPart("Why?")])
    texts = turn_texts(messages, TRUNCATOR)
    assert [(t.message, t.path) for t in texts] == [(1, (0,)), (1, (1,))]
    cut = apply(messages, TRUNCATOR, {texts[0].key: 300})
    pasted = cut.messages[1].content[0]
    assert isinstance(pasted, TextPart) and "tokens omitted" in pasted.value
    whole = log("pasted", 400)
    head, tail = pasted.value.split(marker(texts[0].tokens - 300))
    assert whole.startswith(head) and whole.endswith(tail) and "pasted line 399:" in tail
    assert cut.tool_results == 0 and cut.tokens == texts[0].tokens - 300
    assert turn_texts(messages[:1], TRUNCATOR) == []


def test_the_cap_cuts_every_longer_tool_result():
    long, short = log("l", 500), log("s", 10)
    capped = cap_tool_results(agent_turn(long, short), TRUNCATOR, 256)
    cut, kept = result_texts(capped.messages)
    assert kept == short
    assert tokens(cut) == pytest.approx(256 + tokens(marker(capped.tokens)), abs=3)
    assert capped.tool_results == 1 and capped.tokens == tokens(long) - 256
