"""`toolDocs` end to end over LSP: under `progressive` the first request of a turn carries each
tool's minimal signature; once the conversation holds a call to a tool, that tool goes whole from
the next turn on (within the tool loop the tools stay as they were, so the API's cached prefix
holds); the model's call made against the minimal form is answered like any other. Copilot's
count of the tools (its formula over the full tools' strings, at the scale we give) follows what
is sent, and the status and the dashboard say what was saved."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Reply, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import PartLog, chat_options, chat_params
from tests.lsp.helpers import text_message
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.request import ToolWalk, tool_json, walk_strings
from tokengauge.counting.scales import copilot_tools
from tokengauge.messages import Tool, structure
from tokengauge.upstream.tool_docs import minimal_tool

COPILOT_TOOLS: list[dict[str, Any]] = json.loads(
    gzip.decompress(
        (Path(__file__).parents[2] / "bench" / "data" / "copilot-host-common.json.gz").read_bytes()
    )
)["tools"]
O200K = EncodingRegistry().get("o200k_base")

READ_FILE = {
    "name": "read_file",
    "description": "Read a file. Give the path, and optionally a line range; lines are 1-based.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The absolute path."},
            "startLine": {"type": "integer", "description": "The first line."},
        },
        "required": ["path"],
    },
}
LIST_DIR = {
    "name": "list_dir",
    "description": "List a directory. Folders end in a slash.",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The directory."}},
        "required": ["path"],
    },
}
ASK = '<tg-tool-calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tg-tool-calls>'


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    reply = Reply(scripted_calls=True, documented_only=True)
    async with running_upstream(UpstreamConfig(reply=reply)) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        models = [
            {"id": "gpt-4o", "provider": "up-openai", "toolDocs": "progressive"},
            {"id": "gpt-4o-full", "provider": "up-openai", "family": "gpt-4o"},
            {
                "id": "gpt-4o-minimal",
                "provider": "up-openai",
                "family": "gpt-4o",
                "toolDocs": "minimal",
            },
        ]
        await initialize(
            lsp_client, chat_options(str(tmp_path / "storage"), up.base_url, models=models)
        )
        yield
        await lsp_client.shutdown_session()


def functions(request: Any) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in request.json["tools"]}


def with_its_result(
    client: LanguageClient, params: dict[str, Any], messages: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The call the answer to `params` made, and `messages` followed by it and its result."""
    [tool_call] = [p for p in client.part_log.of(params["requestId"]) if p["type"] == "toolCall"]  # type: ignore[attr-defined]
    result = {
        "type": "toolResult",
        "callId": tool_call["callId"],
        "content": [{"type": "text", "value": "x = 1"}],
    }
    follow = [
        *messages,
        {"role": "assistant", "content": [tool_call]},
        {"role": "user", "content": [result]},
    ]
    return tool_call, follow


async def test_tools_go_minimal_until_called_and_whole_from_the_next_turn(
    client: LanguageClient,
):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    tools = [READ_FILE, LIST_DIR]
    messages = [text_message("user", f"Read a.py. {ASK}")]
    first = chat_params("gpt-4o", messages, tools=tools)
    await call(client, "tokenGauge/chat", first)
    sent = functions(upstream.model_requests[0])
    assert sent["read_file"] == {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "startLine": {"type": "integer"}},
            "required": ["path"],
        },
    }
    assert sent["list_dir"]["description"] == "List a directory."
    # The call the model made against the minimal form came through, and went back answered,
    # with the tools as they were: the tool loop's requests keep their prefix.
    tool_call, follow = with_its_result(client, first, messages)
    assert (tool_call["name"], tool_call["input"]) == ("read_file", {"path": "a.py"})
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", follow, tools=tools))
    second = upstream.model_requests[1]
    assert second.status == 200
    assert second.json["tools"] == upstream.model_requests[0].json["tools"]
    # The next turn shows the called tool whole.
    turn = [*follow, text_message("assistant", "a.py sets x."), text_message("user", "Why?")]
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", turn, tools=tools))
    third = upstream.model_requests[2]
    again = functions(third)
    assert again["read_file"]["description"] == READ_FILE["description"]
    assert again["read_file"]["parameters"] == READ_FILE["inputSchema"]
    assert again["list_dir"]["description"] == "List a directory."  # not called: still minimal
    # The upstream counted fewer tool tokens for the minimal forms.
    assert second.prompt_tools < third.prompt_tools


async def test_a_tool_loop_keeps_its_tools_though_copilot_compacted_it(client: LanguageClient):
    """Copilot may summarize in the middle of a tool loop: the loop's next request, its history
    replaced, still sends the tools as the loop's last request did."""
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    tools = [READ_FILE, LIST_DIR]
    messages = [text_message("user", f"Read a.py. {ASK}")]
    first = chat_params("gpt-4o", messages, tools=tools)
    await call(client, "tokenGauge/chat", first)
    summary = text_message("user", "<conversation-summary>Read a.py.</conversation-summary>")
    _, compacted = with_its_result(client, first, [summary])
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", compacted, tools=tools))
    before, after = upstream.model_requests[-2:]
    assert after.json["messages"][0]["content"].startswith("<conversation-summary>")
    assert after.json["tools"] == before.json["tools"]
    assert functions(after)["read_file"]["description"] == "Read a file."


def raw(text: str) -> int:
    return len(O200K.encode_ordinary(text))


def copilots_count(tools: list[dict[str, Any]], scale: float) -> int:
    """What Copilot makes of the tools it has (always in full) at our tool scale."""
    walked = [structure(t, Tool) for t in tools]
    raws = tuple(raw(s) for tool in walked for s in walk_strings(tool))
    return copilot_tools(ToolWalk(len(walked), 0, raws), scale)


def json_tokens(tools: list[dict[str, Any]], minimal: bool = False) -> int:
    forms = [structure(t, Tool) for t in tools]
    return sum(raw(tool_json(minimal_tool(t) if minimal else t)) for t in forms)


async def tool_scale(client: LanguageClient, model_id: str) -> float:
    result = await call(client, "tokenGauge/countTokens", {"modelId": model_id, "inputs": ["x"]})
    return float(result["scales"]["tools"])


async def test_copilots_count_of_the_tools_follows_what_is_sent(client: LanguageClient):
    """Copilot counts the 39 tools it has in full; under `progressive` it is left the room for
    messages that their minimal forms leave, not what the full 12.5k would: its budget is
    `maxInputTokens` less its count of the tools, both as it is told them, and the API charges
    the copilot ratio per token of its count of messages."""
    ask = [text_message("user", "What is a list comprehension?")]
    room = {}
    for model_id in ("gpt-4o-full", "gpt-4o"):
        await call(client, "tokenGauge/chat", chat_params(model_id, ask, tools=COPILOT_TOOLS))
        told = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}[model_id]
        count = copilots_count(COPILOT_TOOLS, await tool_scale(client, model_id))
        report = (await call(client, "tokenGauge/usage", {}))["models"]
        ratio = next(m["copilotRatio"] for m in report if m["id"] == model_id)
        room[model_id] = (told["maxInputTokens"] - count) * ratio
    full, minimal = json_tokens(COPILOT_TOOLS), json_tokens(COPILOT_TOOLS, minimal=True)
    assert 0.8 < (room["gpt-4o"] - room["gpt-4o-full"]) / (full - minimal) < 1.25


async def test_a_call_has_its_tool_counted_whole_before_the_next_turn(client: LanguageClient):
    """The answer called `run_in_terminal`: within the tool loop the tools stay as they were, and
    Copilot's count of them with them; the answer that ends the turn moves the count to the next
    turn's, which shows that tool in full, before Copilot renders that turn. Against `minimal`
    (the same requests sent, the same usage learned), where nothing grows."""
    call_it = {
        "name": "run_in_terminal",
        "arguments": {"command": "ls", "explanation": "x", "goal": "list", "mode": "sync"},
    }
    ask = f"List the files. <tg-tool-calls>{json.dumps([call_it])}</tg-tool-calls>"
    counts: dict[str, list[int]] = {}
    for model_id in ("gpt-4o", "gpt-4o-minimal"):
        messages = [text_message("user", ask)]
        params = chat_params(model_id, messages, tools=COPILOT_TOOLS)
        await call(client, "tokenGauge/chat", params)
        parts = client.part_log.of(params["requestId"])  # type: ignore[attr-defined]
        assert [p["name"] for p in parts if p["type"] == "toolCall"] == ["run_in_terminal"]
        in_loop = copilots_count(COPILOT_TOOLS, await tool_scale(client, model_id))
        _, follow = with_its_result(client, params, messages)
        ended = chat_params(model_id, follow, tools=COPILOT_TOOLS)
        await call(client, "tokenGauge/chat", ended)
        parts = client.part_log.of(ended["requestId"])  # type: ignore[attr-defined]
        assert not [p for p in parts if p["type"] == "toolCall"]  # the turn's end
        after = copilots_count(COPILOT_TOOLS, await tool_scale(client, model_id))
        counts[model_id] = [in_loop, after]
    [terminal] = [t for t in COPILOT_TOOLS if t["name"] == "run_in_terminal"]
    grown = json_tokens([terminal]) - json_tokens([terminal], minimal=True)
    # Within the loop both count the same minimal tools (learned from the same usage).
    assert abs(counts["gpt-4o"][0] - counts["gpt-4o-minimal"][0]) < 0.2 * grown
    # Copilot's sum moves in steps (just above a scale of 1, every string of two tokens or more
    # counts one more), so the growth lands at or above the tool's share, never below.
    assert 0.8 * grown < counts["gpt-4o"][1] - counts["gpt-4o-minimal"][1] < 2 * grown


async def test_the_status_and_the_dashboard_say_what_was_saved(client: LanguageClient):
    ask = [text_message("user", "What is a list comprehension?")]
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", ask, tools=COPILOT_TOOLS))
    await call(client, "tokenGauge/chat", chat_params("gpt-4o-full", ask, tools=COPILOT_TOOLS))
    await call(client, "tokenGauge/chat", chat_params("gpt-4o-minimal", ask, tools=COPILOT_TOOLS))
    data = await call(client, "tokenGauge/dashboard", {})
    saved = [r["toolDocsSaved"] for r in data["requests"]]
    left_out = json_tokens(COPILOT_TOOLS) - json_tokens(COPILOT_TOOLS, minimal=True)
    assert saved[1] == 0  # full
    for each in (saved[0], saved[2]):
        assert left_out <= each < 1.2 * left_out  # the tools' calibrated cost, with its margin
    assert data["totals"]["toolDocsSaved"] == sum(saved)
    assert data["totals"]["toolDocsRequests"] == 2
    tooltip = client.part_log.statuses[-1]["tooltip"]  # type: ignore[attr-defined]
    assert (
        f"Tool documentation `minimal` saved about {saved[2]:,} tokens on this request" in tooltip
    )
    assert f"{saved[0] + saved[2]:,} in total" in tooltip


async def test_a_model_uses_an_optional_parameter_once_it_is_shown_whole(client: LanguageClient):
    """A model that uses only what the schema it sees describes: told the minimal form it calls
    with the required parameter alone (which Copilot accepts), again within that tool loop;
    shown the whole tool from the next turn, it uses the optional one too. Under `minimal` it
    never does."""
    a, b = (
        {"name": "read_file", "arguments": {"path": "a.py", "startLine": 3}},
        {"name": "read_file", "arguments": {"path": "b.py", "startLine": 7}},
    )
    for model_id, expected in (
        ("gpt-4o", [{"path": "a.py"}, {"path": "b.py"}, {"path": "b.py", "startLine": 7}]),
        ("gpt-4o-minimal", [{"path": "a.py"}, {"path": "b.py"}, {"path": "b.py"}]),
        (
            "gpt-4o-full",
            [{"path": "a.py", "startLine": 3}, *[{"path": "b.py", "startLine": 7}] * 2],
        ),
    ):
        messages: list[dict[str, Any]] = []
        made = []
        for script, calls in (([a, b], 2), ([b], 1)):
            ask = f"Read. <tg-tool-calls>{json.dumps(script)}</tg-tool-calls>"
            messages.append(text_message("user", ask))
            for _ in range(calls):
                params = chat_params(model_id, messages, tools=[READ_FILE, LIST_DIR])
                await call(client, "tokenGauge/chat", params)
                tool_call, messages = with_its_result(client, params, messages)
                made.append(tool_call["input"])
            messages.append(text_message("assistant", "Read."))
        assert made == expected, model_id


async def test_a_pick_in_the_model_picker_overrides_the_setting(client: LanguageClient):
    """`modelOptions.toolDocs` (VS Code's model picker) decides for the request; never sent."""
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    ask = [text_message("user", "What is a list comprehension?")]
    params = chat_params(
        "gpt-4o-full", ask, tools=[READ_FILE], modelOptions={"toolDocs": "minimal"}
    )
    await call(client, "tokenGauge/chat", params)
    body = upstream.model_requests[-1].json
    assert "toolDocs" not in body and "tool_docs" not in body
    assert functions(upstream.model_requests[-1])["read_file"]["description"] == "Read a file."
    tooltip = client.part_log.statuses[-1]["tooltip"]  # type: ignore[attr-defined]
    assert "Tool documentation `minimal` saved about" in tooltip


async def test_a_tool_sent_whole_stays_whole_when_the_history_drops_its_call(
    client: LanguageClient,
):
    """Under `progressive` the tools lead every request: a tool the conversation's last request
    sent whole goes whole in the next one though its history no longer holds the call (as after
    Copilot's summary), so the API's cached prefix of tools holds."""
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    tools = [READ_FILE, LIST_DIR]
    messages = [text_message("user", f"Read a.py. {ASK}")]
    first = chat_params("gpt-4o", messages, tools=tools)
    await call(client, "tokenGauge/chat", first)
    _, follow = with_its_result(client, first, messages)
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", follow, tools=tools))
    turn = [*follow, text_message("assistant", "a.py sets x."), text_message("user", "Why?")]
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", turn, tools=tools))
    dropped = [*messages, text_message("assistant", "a.py sets x."), text_message("user", "Why?")]
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", dropped, tools=tools))
    _, whole, later = upstream.model_requests[-3:]
    assert functions(whole)["read_file"]["description"] == READ_FILE["description"]
    assert later.json["tools"] == whole.json["tools"]  # read_file whole, list_dir minimal
    assert functions(later)["list_dir"]["description"] == "List a directory."
    # Another model's chat of the same messages starts from its own forms.
    await call(client, "tokenGauge/chat", chat_params("gpt-4o-minimal", dropped, tools=tools))
    other = upstream.model_requests[-1]
    assert functions(other)["read_file"]["description"] == "Read a file."
