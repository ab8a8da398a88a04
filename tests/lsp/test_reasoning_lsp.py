"""Reasoning models' tool loops over Chat Completions, end to end over LSP against strict
stand-ins of their servers (`tests/harness/fake_upstream/reasoning.py`).

The client keeps its history as Copilot's chat panel does (`copilot_round`): a round of the
current turn keeps its thinking (the pieces' text joined, the metadata of the part that closed
them), a round of an earlier turn comes without it. Each scenario is 4 turns, the first of 3 tool
rounds, the others of one: 10 requests, none of which may fail.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.harness import lsp
from tests.harness.fake_upstream.config import ModelBehavior, Reply, UpstreamConfig
from tests.harness.fake_upstream.reasoning import signature_for_call
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.fake_upstream.thinking import signature_of
from tests.harness.lsp import call, running_server
from tests.lsp.chat_helpers import READ_FILE, PartLog, chat_params
from tests.lsp.helpers import text_message

THOUGHT = "The parser is in parser.py; reading it first shows where the bug is."
CARRIED = ("field", "details", "calls", "extra")
TURNS = (("parser.py", "lexer.py", "tests.py"), ("parser.py",), ("lexer.py",), ("tests.py",))
REQUESTS = sum(len(calls) + 1 for calls in TURNS)


def asking(paths: Sequence[str]) -> str:
    calls = [{"name": "read_file", "arguments": {"path": path}} for path in paths]
    script = f"<tg-tool-calls>{json.dumps(calls)}</tg-tool-calls>"
    return f"Read {', '.join(paths)} and say what is wrong. {script}"


def copilot_round(parts: list[dict[str, Any]], *, current: bool) -> dict[str, Any]:
    """The assistant message Copilot's chat panel sends back of an answer: of the current turn
    with its thinking as one part (the pieces' text, the closing part's metadata), of an earlier
    turn without it."""
    thinking = [p for p in parts if p["type"] == "thinking"]
    carried = [p for p in thinking if any(k in p for k in CARRIED)]
    content: list[dict[str, Any]] = []
    if current and thinking:
        merged = {
            "type": "thinking",
            "value": "".join(p["value"] for p in thinking if p not in carried),
        }
        if carried:
            merged |= {k: v for k, v in carried[-1].items() if k in CARRIED}
        content.append(merged)
    text = "".join(p["value"] for p in parts if p["type"] == "text")
    if text:
        content.append({"type": "text", "value": text})
    content += [p for p in parts if p["type"] == "toolCall"]
    return {"role": "assistant", "content": content}


class Agent:
    """Copilot's agent loop in miniature: one tool result per call, until a text answer."""

    def __init__(self, model: str, **chat: Any) -> None:
        self.model = model
        self.chat = chat
        self.history: list[dict[str, Any]] = [text_message("system", "You are a coding agent.")]
        self.failures: list[str] = []

    async def turn(self, client: lsp.TestClient, log: PartLog, paths: Sequence[str]) -> None:
        rounds: list[tuple[list[dict[str, Any]], dict[str, Any] | None]] = []
        ask = text_message("user", asking(paths))
        while len(rounds) <= len(paths):
            current = [ask]
            for parts, result in rounds:
                current.append(copilot_round(parts, current=True))
                if result is not None:
                    current.append(result)
            params = chat_params(
                self.model, [*self.history, *current], tools=[READ_FILE], **self.chat
            )
            try:
                await call(client, "tokenGauge/chat", params)
            except JsonRpcException as exc:
                self.failures.append(str(exc))
                return
            parts = log.of(params["requestId"])
            calls = [p for p in parts if p["type"] == "toolCall"]
            result = None
            if calls:
                content = [
                    {"type": "text", "value": f"# {calls[0]['input']['path']}\ndef parse(): ..."}
                ]
                result = {
                    "role": "user",
                    "content": [
                        {"type": "toolResult", "callId": calls[0]["callId"], "content": content}
                    ],
                }
            rounds.append((parts, result))
            if not calls:
                break
        self.history.append(ask)
        for parts, result in rounds:
            self.history.append(copilot_round(parts, current=False))
            if result is not None:
                self.history.append(result)


def options(
    storage: Path, up: Upstream, preset: str | None, model: str, **settings: Any
) -> dict[str, Any]:
    provider: dict[str, Any] = {"id": "p", "baseUrl": up.base_url + "/v1", "discover": False}
    provider |= {"preset": preset} if preset else {"dialect": "openai"}
    return {
        "storageDir": str(storage),
        "logLevel": "debug",
        "providers": [provider],
        "models": [{"id": model, "provider": "p", "contextWindow": 128_000, **settings}],
        "idleTimeout": 2,
        "retryBaseDelay": 0.05,
    }


def upstream_of(server: str) -> UpstreamConfig:
    return UpstreamConfig(
        reply=Reply(thinking=THOUGHT, scripted_calls=True), model=ModelBehavior(reasoning=server)
    )


async def run(
    up: Upstream,
    storage: Path,
    preset: str | None,
    model: str,
    turns: Sequence[Sequence[str]] = TURNS,
    agent: Agent | None = None,
    **settings: Any,
) -> Agent:
    agent = agent or Agent(model)
    async with running_server(options(storage, up, preset, model, **settings)) as client:
        log = PartLog(client)
        for paths in turns:
            await agent.turn(client, log, paths)
    return agent


def assistants(request: Any) -> list[dict[str, Any]]:
    return [m for m in request.json["messages"] if m["role"] == "assistant"]


SERVERS = [
    pytest.param("deepseek", "deepseek", "deepseek-v4-pro", id="deepseek-v4"),
    pytest.param("deepseek-r1", "deepseek", "deepseek-reasoner", id="deepseek-reasoner"),
    pytest.param("kimi", "moonshot", "kimi-k2.5", id="kimi"),
    pytest.param("glm", "zai", "glm-4.7", id="glm"),
    pytest.param("minimax", "minimax", "MiniMax-M2.7", id="minimax"),
    pytest.param("openrouter", "openrouter", "google/gemini-3-pro-preview", id="openrouter"),
    pytest.param("gemini", "gemini", "gemini-3-pro-preview", id="gemini"),
]


@pytest.mark.parametrize(("server", "preset", "model"), SERVERS)
async def test_every_turn_of_a_reasoning_tool_loop_answers(
    tmp_path: Path, server: str, preset: str, model: str
):
    async with running_upstream(upstream_of(server)) as up:
        agent = await run(up, tmp_path / "storage", preset, model)
        requests = up.model_requests
    assert agent.failures == []
    assert [r.status for r in requests] == [
        200
    ] * REQUESTS  # known: nothing refused, nothing retried
    last = requests[-1]
    called = [m for m in assistants(last) if m.get("tool_calls")]
    assert len(called) == REQUESTS - len(TURNS)  # every call of every turn, in the last request
    if server == "deepseek-r1":
        assert not any("reasoning_content" in m for r in requests for m in assistants(r))
    elif server in ("deepseek", "kimi", "glm"):
        # Every tool-call message keeps its reasoning in every later request, earlier turns' too
        # (Copilot dropped those: they came back from what the server remembered).
        assert [m["reasoning_content"] for m in called] == [THOUGHT] * len(called)
    elif server == "minimax":
        assert all(r.json["reasoning_split"] is True for r in requests)
        assert all(m["reasoning_details"][0]["text"] == THOUGHT for m in called)
    elif server == "openrouter":
        signed = {"type": "reasoning.text", "text": THOUGHT, "format": "google-gemini-v1"}
        signed |= {"index": 0, "signature": signature_of(THOUGHT)}
        assert all(m["reasoning_details"] == [signed] for m in called)
    elif server == "gemini":
        # The current turn's calls keep their signatures (Gemini validates those); earlier turns'
        # go without, as its documentation allows.
        [current] = called[-1:]
        [tool_call] = current["tool_calls"]
        google = tool_call["extra_content"]["google"]
        assert google == {"thought_signature": signature_for_call(tool_call["id"])}
        assert not any("extra_content" in c for m in called[:-1] for c in m["tool_calls"])


async def test_deepseek_after_a_restart_gets_the_field_it_must_have(tmp_path: Path):
    """A new server remembers no reasoning: the earlier turns' tool-call messages go back with
    the field empty (as DeepSeek's own clients send it), the new ones with theirs."""
    async with running_upstream(upstream_of("deepseek")) as up:
        agent = await run(up, tmp_path / "storage", "deepseek", "deepseek-v4-pro", TURNS[:2])
        await run(up, tmp_path / "storage", "deepseek", "deepseek-v4-pro", TURNS[2:], agent)
        requests = up.model_requests
    assert agent.failures == []
    assert {r.status for r in requests} == {200}
    reasoning = [m["reasoning_content"] for m in assistants(requests[-1]) if m.get("tool_calls")]
    assert reasoning == ["", "", "", "", THOUGHT, THOUGHT]


@pytest.mark.parametrize(
    ("server", "first", "then"),
    [
        # A server that wants reasoning back in every later request, where the default sends the
        # current loop's: turn 2 is refused once, sent again with it, and so on from then.
        pytest.param("deepseek", "reasoning_missing", "tools", id="wants-it-back"),
        # A validating server that takes no reasoning field: refused once in turn 1, then none.
        pytest.param("strict", "reasoning_refused", "none", id="refuses-it"),
    ],
)
async def test_an_unknown_server_teaches_once_and_is_remembered(
    tmp_path: Path, server: str, first: str, then: str
):
    storage = tmp_path / "storage"
    async with running_upstream(upstream_of(server)) as up:
        agent = await run(up, storage, None, "acme-thinker")
        taught = up.model_requests
        again = await run(up, storage, None, "acme-thinker")
        later = up.model_requests[len(taught) :]
    assert agent.failures == again.failures == []
    assert [r.status for r in taught].count(400) == 1  # one refusal, answered at once
    assert len(taught) == REQUESTS + 1
    assert {r.status for r in later} == {200}  # a new server knows it already
    sent = [m for r in later for m in assistants(r) if "reasoning_content" in m]
    assert bool(sent) == (then == "tools")


async def test_a_setting_that_forbids_what_the_server_needs_says_what_to_do(tmp_path: Path):
    async with running_upstream(upstream_of("deepseek")) as up:
        agent = await run(
            up,
            tmp_path / "storage",
            "deepseek",
            "deepseek-v4-pro",
            TURNS[:1],
            reasoningReplay="never",
        )
    [failure] = agent.failures
    assert "must be passed back" in failure
    assert '"reasoningReplay": "never"' in failure
    assert 'set it to "auto"' in failure
