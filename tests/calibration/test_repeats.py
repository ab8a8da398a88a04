"""A tool result that repeats an earlier one goes as a reference to it; nothing else changes."""

from __future__ import annotations

from tokengauge.calibration.repeats import LEAST_CHARS, refer_repeats
from tokengauge.messages import DataPart, Message, TextPart, ToolCallPart, ToolResultPart

FILE = "def post(entry):\n    audit.write(entry.checksum)\n" * 40
EDITED = FILE.replace("checksum", "digest")


def read(call_id: str, result: str | list, path: str = "src/ledger.py") -> list[Message]:
    """One round: the call to read `path` and its result."""
    content = result if isinstance(result, list) else [TextPart(result)]
    return [
        Message("assistant", [ToolCallPart(call_id, "read_file", {"filePath": path})]),
        Message("user", [ToolResultPart(call_id, content)]),
    ]


def result_texts(messages: list[Message]) -> dict[str, str]:
    return {
        part.call_id: "".join(p.value for p in part.content if isinstance(p, TextPart))
        for message in messages
        for part in message.content
        if isinstance(part, ToolResultPart)
    }


def test_a_later_copy_is_a_reference_to_the_first_and_the_prefix_stays():
    asked = [
        Message("system", [TextPart("You are an AI programming assistant.")]),
        Message("user", [TextPart("Review src/ledger.py.")]),
        *read("c1", FILE),
        *read("c2", EDITED),  # the file changed: a new text, sent whole
        *read("c3", FILE),  # the first text again
        *read("c4", FILE),
    ]
    referred = refer_repeats(asked)
    texts = result_texts(referred.messages)
    assert texts["c1"] == FILE and texts["c2"] == EDITED
    for later in ("c3", "c4"):
        assert texts[later].startswith("[Exactly the same result as the read_file call c1 above")
        assert f"{len(FILE):,} characters" in texts[later]
    assert (referred.results, referred.chars) == (2, 2 * len(FILE))
    # What was sent before the repeat is sent as it was: the cached prefix stays a prefix.
    first_repeat = asked.index(read("c3", FILE)[1])
    assert referred.messages[:first_repeat] == asked[:first_repeat]
    # The same request again references the same copies (what the next request sends again).
    assert refer_repeats(asked).messages == referred.messages


def test_user_messages_errors_short_results_and_images_always_go_whole():
    error = "ERROR: the file src/gone.py could not be found.\n" + "x" * LEAST_CHARS
    short = "ok\n" * (LEAST_CHARS // 4)
    image = [TextPart(FILE), DataPart("image/png", "aGVsbG8=")]
    asked = [
        Message("user", [TextPart(FILE)]),
        Message("user", [TextPart(FILE)]),  # the person pasted it twice: theirs to decide
        *read("e1", error),
        *read("e2", error),
        *read("s1", short),
        *read("s2", short),
        *read("i1", image),
        *read("i2", image),
    ]
    referred = refer_repeats(asked)
    assert referred.messages == asked and referred.results == 0


def test_a_result_with_no_call_in_view_is_referenced_by_its_id():
    asked = [Message("user", [ToolResultPart("gone", [TextPart(FILE)])]), *read("c2", FILE)]
    texts = result_texts(refer_repeats(asked).messages)
    assert texts["c2"].startswith("[Exactly the same result as call gone above")
