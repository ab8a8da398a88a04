"""The notes Token Gauge writes into answers (`notes`), and the history without them."""

from __future__ import annotations

from tokengauge.calibration.ladder import Fitted
from tokengauge.messages import Message, TextPart, ToolCallPart
from tokengauge.notes import cut_note, ladder_note, without_notes


def test_the_ladders_note_is_left_out_of_the_history_again():
    fitted = Fitted([], [], 1_024, dropped=4, removed={"history": 3_000, "output": 3_072})
    note = ladder_note("Sim", fitted)
    assert note.startswith("*Token Gauge: this request did not fit Sim's window")
    assert "4 earlier messages left out" in note and "limited to 1,024 tokens" in note
    answer = Message("assistant", [TextPart(note + "Reviewed."), ToolCallPart("c1", "f", {})])
    assert without_notes(answer) == Message(
        "assistant", [TextPart("Reviewed."), ToolCallPart("c1", "f", {})]
    )
    only = Message("assistant", [TextPart(note), ToolCallPart("c1", "f", {})])
    assert without_notes(only).content == [ToolCallPart("c1", "f", {})]
    quoted = Message("user", [TextPart(note + "what does this mean?")])
    assert without_notes(quoted) == quoted  # the person's own words stay


def test_the_note_of_a_cut_closes_an_open_code_block_and_leaves_the_history_again():
    note = cut_note("Qwen3", 8192, 11636, fence_open=True)
    assert note.startswith("\n```\n\n*Token Gauge: the server read only 8,192 tokens of this")
    assert "request's 11,636" in note
    answer = "Here is the fix:\n```python\nx = 1" + note
    message = Message(role="assistant", content=[TextPart(answer)])
    assert without_notes(message).content == [TextPart("Here is the fix:\n```python\nx = 1\n```")]
    assert not cut_note("Qwen3", 8192, 11636).startswith("\n```")
