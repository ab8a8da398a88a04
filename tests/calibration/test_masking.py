"""Observation masking: older tool rounds' results as stubs, in steps, errors kept."""

from __future__ import annotations

import pytest

from tokengauge.calibration.masking import hidden_rounds, mask_old_results
from tokengauge.messages import DataPart, Message, TextPart, ToolCallPart, ToolResultPart

LONG = "line of a file\n" * 80
FAILING = (
    "collected 12 items\n"
    + "ok\n" * 200
    + "FAILED tests/test_ledger.py::test_lock - AssertionError\n"
)


def rounds(count: int, result: str = LONG) -> list[Message]:
    messages = [Message("user", [TextPart("Fix the ledger. " * 60)])]
    for n in range(count):
        messages.append(Message("assistant", [ToolCallPart(f"c{n}", "read_file", {"n": n})]))
        messages.append(Message("user", [ToolResultPart(f"c{n}", [TextPart(result)])]))
    return messages


def sent(messages: list[Message]) -> dict[str, str]:
    return {
        part.call_id: "".join(p.value for p in part.content if isinstance(p, TextPart))
        for m in messages
        for part in m.content
        if isinstance(part, ToolResultPart)
    }


@pytest.mark.parametrize(
    ("count", "keep", "hidden"),
    [(3, 4, 0), (4, 4, 0), (7, 4, 0), (8, 4, 4), (11, 4, 4), (12, 4, 8), (5, 1, 4), (9, 0, 0)],
)
def test_rounds_are_hidden_in_steps_of_the_setting(count: int, keep: int, hidden: int) -> None:
    assert hidden_rounds(count, keep) == hidden


def test_older_rounds_go_as_stubs_that_say_how_to_get_them_again() -> None:
    masked = mask_old_results(rounds(8), 4)
    results = sent(masked.messages)
    assert masked.results == 4 and masked.chars == 4 * len(LONG)
    for n in range(4):
        assert results[f"c{n}"].startswith(f"[The result of the read_file call c{n} (")
        assert "call read_file again" in results[f"c{n}"]
    assert all(results[f"c{n}"] == LONG for n in range(4, 8))
    assert masked.messages[0] == rounds(8)[0]  # the person's message as it was


def test_a_stub_keeps_the_error_lines() -> None:
    masked = mask_old_results(rounds(2, FAILING), 1)
    stub = sent(masked.messages)["c0"]
    assert "FAILED tests/test_ledger.py::test_lock - AssertionError" in stub
    assert "ok" not in stub.split("Its error lines:")[1]


def test_each_request_hides_the_same_as_the_one_before_until_the_next_step() -> None:
    earlier = mask_old_results(rounds(9), 4).messages
    later = mask_old_results(rounds(11), 4).messages
    assert later[: len(earlier)] == earlier  # the prefix holds between steps


def test_short_results_and_results_with_images_go_whole() -> None:
    messages = rounds(4, "ok")
    image = ToolResultPart("c0", [TextPart(LONG), DataPart("image/png", "iVBO")])
    messages[2] = Message("user", [image])
    masked = mask_old_results(messages, 1)
    assert masked.results == 0 and masked.messages == messages
