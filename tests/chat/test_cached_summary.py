"""`chat.cached_summary`: Copilot's foreground summary told apart, and asked over the last request.

Copilot 0.67 renders the conversation for its summary whole (Full mode) or as one message of
chunks (Simple mode); either way the tail since the last request, from that request's answer on,
is what the model has not seen yet, and a tail that does not begin with that answer is not used.
"""

from __future__ import annotations

from typing import Final

from tokengauge.chat.cached_summary import (
    ASK_MARK,
    INSTRUCTIONS_MARK,
    SIMPLE_MARK,
    TAIL_LEAD,
    Sent,
    aligned_messages,
    foreground_summary,
)
from tokengauge.messages import Message, TextPart, Tool, ToolCallPart, ToolResultPart

INSTRUCTIONS: Final = f"{INSTRUCTIONS_MARK} of the entire conversation."
ASK: Final = f"{ASK_MARK}, paying special attention to the most recent tool results."
CALL: Final = ToolCallPart("c1", "read_file", {"path": "ledger.py"})
RESULT: Final = "def post(entry): audit.write(entry.checksum)"


def text(role: str, value: str) -> Message:
    return Message(role, [TextPart(value)])  # type: ignore[arg-type]


SYSTEM: Final = text("system", "You are an expert AI programming assistant.")
QUESTION: Final = text("user", "Which function of ledger.py is riskiest?")
PREVIOUS: Final = Sent(
    (SYSTEM, QUESTION), (Tool("read_file", "Read a file.", {}),), (), "Let me read it.", (CALL,)
)


def full_mode() -> list[Message]:
    answer = Message("assistant", [TextPart("Let me read it."), CALL])
    result = Message("user", [ToolResultPart("c1", [TextPart(RESULT)])])
    return [text("system", INSTRUCTIONS), QUESTION, answer, result, text("user", ASK)]


def test_only_copilots_foreground_summary_is_taken_apart() -> None:
    summary = foreground_summary(full_mode())
    assert summary is not None
    assert (summary.instructions, summary.ask, len(summary.history)) == (INSTRUCTIONS, ASK, 3)
    background = [SYSTEM, QUESTION, text("user", "The conversation must be compacted now.")]
    assert foreground_summary(background) is None
    assert foreground_summary([SYSTEM, QUESTION, text("user", ASK)]) is None  # not its system


def test_full_mode_is_asked_over_the_last_request_with_its_tail_as_chunks() -> None:
    summary = foreground_summary(full_mode())
    assert summary is not None
    messages = aligned_messages(summary, PREVIOUS)
    assert messages is not None and messages[:2] == [SYSTEM, QUESTION]
    [final] = messages[2:]
    [part] = final.content
    assert isinstance(part, TextPart) and final.role == "user"
    assert part.value == (
        f"{TAIL_LEAD}\n<assistant>\nLet me read it.\n</assistant>\n"
        f'<tool>\nUsed tool "read_file" with arguments: {{"path": "ledger.py"}}\n{RESULT}\n</tool>'
        f"\n\n{INSTRUCTIONS}\n\n{ASK}"
    )


def test_simple_modes_tail_is_its_last_round_as_copilot_wrote_it() -> None:
    tail = (
        '<assistant>\nLet me read it.\n</assistant>\n<tool>\nUsed tool "read_file" with '
        f"arguments: {{}}\n{RESULT}\n</tool>"
    )
    compressed = f"{SIMPLE_MARK}:\n<user>\nWhich function?\n</user>\n{tail}\n"
    summary = foreground_summary(
        [text("system", INSTRUCTIONS), text("user", compressed), text("user", ASK)]
    )
    assert summary is not None
    messages = aligned_messages(summary, PREVIOUS)
    assert messages is not None
    assert messages[-1] == text("user", f"{TAIL_LEAD}\n{tail}\n\n{INSTRUCTIONS}\n\n{ASK}")


def test_a_tail_that_does_not_begin_with_the_last_answer_is_not_used() -> None:
    summary = foreground_summary(full_mode())
    assert summary is not None
    other_call = Sent(
        PREVIOUS.messages,
        PREVIOUS.tools,
        (),
        "Let me read it.",
        (ToolCallPart("c2", "grep_search", {"query": "post"}),),
    )
    other_text = Sent(PREVIOUS.messages, PREVIOUS.tools, (), "The riskiest is post().", (CALL,))
    assert aligned_messages(summary, other_call) is None
    assert aligned_messages(summary, other_text) is None
    no_answer = [text("system", INSTRUCTIONS), QUESTION, text("user", ASK)]
    summary = foreground_summary(no_answer)
    assert summary is not None and aligned_messages(summary, PREVIOUS) is None
