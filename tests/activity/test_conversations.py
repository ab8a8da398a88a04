"""Grouping requests into Copilot chats from the messages they share, and telling their kinds."""

from __future__ import annotations

import base64

import pytest

from tokengauge.activity.conversations import (
    Conversations,
    Placement,
    marked,
    marker,
    request_kind,
)
from tokengauge.counting.request import message_digest
from tokengauge.messages import DataPart, Message, TextPart, ToolCallPart, ToolResultPart

SYSTEM = Message("system", [TextPart("You are an expert AI programming assistant.")])
TITLES = Message("system", [TextPart("You are an expert in crafting pithy titles for chats.")])
ENVIRONMENT = Message("user", [TextPart("<environment_info>Linux</environment_info>\n…")])


def user(text: str) -> Message:
    return Message("user", [TextPart(text)])


def assistant(text: str) -> Message:
    return Message("assistant", [TextPart(text)])


def place(
    conversations: Conversations,
    messages: list[Message],
    tools: int = 3,
    calls: tuple[ToolCallPart, ...] = (),
    answer: str = "",
) -> Placement:
    kind = request_kind(messages, tools, helper_max_messages=2)
    digests = [message_digest(m) for m in messages]
    return conversations.place(messages, digests, kind, answer, calls)


@pytest.mark.parametrize(
    ("messages", "tools", "kind"),
    [
        pytest.param([TITLES, user("title for: fix the parser")], 0, "helper", id="title"),
        pytest.param([user("what is this?")], 0, "helper", id="one-message"),
        pytest.param([SYSTEM, user("fix it")], 3, "turn", id="with-tools"),
        pytest.param(
            [Message("system", [TextPart("You are an AI programming assistant.")]), user("why?")],
            0,
            "turn",
            id="ask-mode-question",
        ),
        pytest.param([SYSTEM, ENVIRONMENT, user("and now?")], 0, "turn", id="ask-mode"),
        pytest.param(
            [SYSTEM, user("history…"), user("Summarize the conversation history so far, …")],
            0,
            "summarize",
            id="foreground-summary",
        ),
        pytest.param(
            [SYSTEM, ENVIRONMENT, user("q"), user("The history must be compacted now. …")],
            3,
            "summarize",
            id="background-compaction",
        ),
    ],
)
def test_kinds(messages: list[Message], tools: int, kind: str):
    assert request_kind(messages, tools, helper_max_messages=2) == kind


def test_a_chat_stays_one_conversation_and_another_chat_is_another():
    conversations = Conversations()
    first = [SYSTEM, ENVIRONMENT, user("fix the parser")]
    a1 = place(conversations, first).conversation
    # A tool-call round resends the turn; the next turn resends the chat so far.
    a2 = place(conversations, [*first, assistant("call read_file"), user("result: …")])
    a3 = place(conversations, [*first, assistant("call read_file"), user("result: …"), user("ok?")])
    # Another chat of the same workspace opens with the same environment message.
    b1 = place(conversations, [SYSTEM, ENVIRONMENT, user("write the docs")])
    b2 = place(conversations, [SYSTEM, ENVIRONMENT, user("write the docs"), assistant("done")])
    assert a1 is not None and a1 == a2.conversation == a3.conversation
    assert b1.conversation is not None and b1.conversation == b2.conversation != a1


def test_the_tool_calls_of_an_answer_tie_the_next_request_to_it():
    """Copilot's agent renders the turn's user message anew once tool calls follow it."""
    conversations = Conversations()
    read = ToolCallPart("c1", "read_file", {"path": "a.py"})
    first = place(
        conversations, [SYSTEM, ENVIRONMENT, user("<reminder/>fix the parser")], calls=(read,)
    )
    call = Message("assistant", [ToolCallPart("c1", "read_file", {"path": "a.py"})])
    result = Message("user", [ToolResultPart("c1", [TextPart("print(1)")])])
    second = place(conversations, [SYSTEM, ENVIRONMENT, user("fix the parser"), call, result])
    other = place(conversations, [SYSTEM, ENVIRONMENT, user("write the docs")])
    assert first.conversation == second.conversation != other.conversation


def test_numbered_tool_call_ids_tie_no_two_chats():
    """Kimi K2 numbers its calls (`functions.<name>:<index>`): every chat's first call of a tool
    has the same id; its arguments tell the chats apart."""
    conversations = Conversations()
    chats = []
    for path in ("a.py", "b.py"):
        read = ToolCallPart("functions.read_file:0", "read_file", {"path": path})
        turn = user(f"<reminder/>explain {path}")
        first = place(conversations, [SYSTEM, ENVIRONMENT, turn], calls=(read,))
        result = Message("user", [ToolResultPart(read.call_id, [TextPart("print(1)")])])
        again = [SYSTEM, ENVIRONMENT, user(f"explain {path}"), Message("assistant", [read]), result]
        chats.append((first.conversation, place(conversations, again).conversation))
    (a1, a2), (b1, b2) = chats
    assert a1 == a2 and b1 == b2 and a1 != b1


def test_an_answer_resent_ties_the_next_turn_to_it():
    """The turn's user message comes back without its context; the answer comes back as it was."""
    conversations = Conversations()
    answer = "The parser failed on nested lists because the tokenizer dropped the closing bracket."
    first = place(
        conversations, [SYSTEM, ENVIRONMENT, user("<context>…</context>fix it")], answer=answer
    )
    second = place(
        conversations, [SYSTEM, ENVIRONMENT, user("fix it"), assistant(answer), user("and?")]
    )
    short = place(conversations, [SYSTEM, ENVIRONMENT, user("q"), assistant("Done."), user("why?")])
    assert first.conversation == second.conversation != short.conversation


def test_a_summary_continues_the_conversation_it_summarized():
    conversations = Conversations()
    chat = [SYSTEM, ENVIRONMENT, user("fix the parser"), assistant("reading…")]
    a = place(conversations, chat).conversation
    other = place(conversations, [SYSTEM, ENVIRONMENT, user("unrelated")]).conversation
    place(conversations, [*chat, user("more")])  # the summarized chat is the last active
    # Copilot's foreground summary: the history as one text, nothing shared.
    summary = place(
        conversations,
        [
            SYSTEM,
            user("fix the parser / reading…"),
            user("Summarize the conversation history so far"),
        ],
        tools=0,
    )
    summary_text = user("<conversation-summary>The parser was fixed.</conversation-summary>")
    after = place(conversations, [SYSTEM, ENVIRONMENT, summary_text, user("next step")])
    again = place(conversations, [SYSTEM, ENVIRONMENT, summary_text, user("next step"), user("…")])
    assert (summary.kind, summary.conversation) == ("summarize", a)
    assert (after.conversation, after.summarized) == (a, True)
    assert (again.conversation, again.summarized) == (a, False)
    assert other != a


def test_an_ask_mode_chat_is_one_conversation():
    conversations = Conversations()
    first = place(conversations, [SYSTEM, user("<prompt>what is a token?</prompt>")], tools=0)
    second = place(
        conversations,
        [SYSTEM, user("<prompt>what is a token?</prompt>"), assistant("A piece."), user("more?")],
        tools=0,
    )
    other = place(conversations, [SYSTEM, user("<prompt>unrelated</prompt>")], tools=0)
    assert first.kind == second.kind == "turn"
    assert first.conversation == second.conversation != other.conversation


def test_helpers_belong_to_no_conversation():
    conversations = Conversations()
    assert place(conversations, [TITLES, user("a title please")], tools=0) == Placement(
        "helper", None
    )


def encoded(data: bytes) -> str:
    return base64.b64encode(data).decode()


def marker_part(text: str) -> DataPart:
    return DataPart("stateful_marker", encoded(text.encode()))


@pytest.mark.parametrize(
    ("data", "found"),
    [
        pytest.param(marker_part("sim\\" + marker("0a1b2c3d")), "0a1b2c3d", id="ours"),
        pytest.param(marker_part("gpt-5\\resp_68af01"), None, id="another-providers"),
        pytest.param(
            marker_part('sim\\{"tokenGauge": {"conversation": "<b>x</b>"}}'), None, id="odd-id"
        ),
        pytest.param(marker_part("sim\\[1, 2]"), None, id="not-an-object"),
        pytest.param(marker_part("sim\\" + "[" * 1_000 + "]" * 1_000), None, id="nested-deep"),
        pytest.param(marker_part("sim\\" + "[" * 200 + "]" * 200), None, id="nested"),
        pytest.param(
            marker_part("sim\\" + marker("0a1b2c3d")[:-1] + ', "x": "' + "y" * 900 + '"}'),
            None,
            id="too-long-to-be-ours",
        ),
        pytest.param(DataPart("stateful_marker", "%%% not base64"), None, id="not-base64"),
        pytest.param(
            DataPart("stateful_marker", base64.b64encode(b"\xff\xfe").decode()), None, id="not-utf8"
        ),
        pytest.param(
            DataPart("usage", base64.b64encode(marker("0a1b2c3d").encode()).decode()),
            None,
            id="other-mime",
        ),
    ],
)
def test_only_our_own_markers_name_a_conversation(data: DataPart, found: str | None):
    messages = [Message("user", [TextPart("Hi")]), Message("assistant", [TextPart("Hello"), data])]
    assert marked(messages) == found


def test_a_marker_wins_over_everything_the_messages_share():
    conversations = Conversations()
    first = [SYSTEM, user("question one")]
    one = place(conversations, first).conversation
    other = place(conversations, [SYSTEM, user("question two")]).conversation
    assert one != other
    # Shares its messages with the first chat, brings back the marker of the second.
    brought = [
        *first,
        Message("assistant", [TextPart("answer"), marker_part(f"m\\{marker(str(other))}")]),
    ]
    assert place(conversations, brought).conversation == other


def test_a_conversation_told_before_sending_is_the_one_the_request_is_placed_in():
    conversations = Conversations()

    def ahead_then_place(messages: list[Message], tools: int = 3) -> tuple[str | None, Placement]:
        kind = request_kind(messages, tools, helper_max_messages=2)
        digests = [message_digest(m) for m in messages]
        told = conversations.ahead(messages, digests, kind)
        return told, conversations.place(messages, digests, kind, ahead=told)

    first = [SYSTEM, ENVIRONMENT, user("fix the parser")]
    digests = [message_digest(m) for m in first]
    # Told twice before it is placed, a new conversation is new each time: nothing is kept.
    assert conversations.ahead(first, digests, "turn") != conversations.ahead(
        first, digests, "turn"
    )
    new, placed = ahead_then_place(first)
    followed, again = ahead_then_place([*first, assistant("reading the parser…"), user("and?")])
    other, elsewhere = ahead_then_place([SYSTEM, ENVIRONMENT, user("write the docs")])
    helper, titled = ahead_then_place([TITLES, user("title for: fix the parser")], tools=0)
    assert new is not None and placed.conversation == new
    assert followed == again.conversation == new
    assert other == elsewhere.conversation not in (None, new)
    assert helper is None and titled.conversation is None


def runtime_system(session: str) -> Message:
    """The Agents window runtime's system prompt of `session` (its lines about the session)."""
    folder = f"/home/me/.copilot/session-state/{session}"
    return Message(
        "system", [TextPart(f"You are the GitHub Copilot CLI.\nSession folder: {folder}\n")]
    )


def test_the_agents_window_runtime_s_sessions_are_told_apart_by_their_folder():
    """Two sessions that say the same, and what one sends after its compaction (nothing shared)."""
    conversations = Conversations()
    one, two = (runtime_system(f"{n}b1b369c-6f3b-4bc0-b19d-6d98b9fb5b41") for n in ("e", "f"))
    turn = [user("read part-1.txt"), assistant("Read it: notes of the project.")]
    first = place(conversations, [one, *turn, user("read part-2.txt")])
    other = place(conversations, [two, *turn, user("read part-2.txt")])
    summary = user("Some of the conversation history has been summarized…<summary>…</summary>")
    after = place(conversations, [one, summary, user("read part-7.txt")])
    assert first.conversation == after.conversation != other.conversation
    windows = Message("system", [TextPart(one.content[0].value.replace("/", "\\"))])
    assert place(conversations, [windows, user("next")]).conversation == first.conversation
