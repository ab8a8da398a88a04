"""What reaches a team's gateway: a LiteLLM proxy's customer, tags and session, OpenRouter's user
and session_id, each only where the provider's `attribution` asks for it; OpenAI's
prompt_cache_key, one per conversation.

The fake upstream records every request's headers and JSON body as the gateway would receive
them. A conversation's requests carry one session id, from its first request on (the next ones
bring back the stateful marker of the answer before); another conversation has another, a helper
none, and a restarted server keeps them. Set to nothing, a provider's requests carry nothing more
than before; and the values a person chose (a name, the workspace's) never reach the log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Reply, Scripted, UpstreamConfig
from tests.harness.fake_upstream.records import RecordedRequest
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize, running_server
from tests.lsp.chat_helpers import PartLog, answer_message, chat_params
from tests.lsp.helpers import text_message

USER: Final = "ana-lopez-7731"
WORKSPACE: Final = "payroll-service-9014"
ANSWER: Final = "The module parses the ledger and writes each entry's checksum to the audit log."
TAGS: Final = ["team:payments", "ws:${workspaceName}", "kind:${requestKind}"]
LITELLM: Final = {"user": USER, "tags": TAGS, "session": True}
OPENROUTER: Final = {"user": USER, "session": True}
SIZES: Final = {"contextWindow": 128_000, "maxOutputTokens": 4096}
BASE_FIELDS: Final = {"model", "messages", "stream", "stream_options", "max_tokens"}
"""What a Chat Completions request of these tests carries without attribution."""


def options(storage: str, base_url: str) -> dict[str, Any]:
    """A LiteLLM proxy and OpenRouter, each configured with attribution and without."""
    url = base_url + "/v1"
    providers = [
        {"id": "gw", "preset": "litellm", "attribution": LITELLM},
        {"id": "gw-off", "preset": "litellm"},
        {"id": "or", "preset": "openrouter", "attribution": OPENROUTER},
        {"id": "or-off", "preset": "openrouter"},
        {"id": "oa", "preset": "openai"},
        {"id": "oa-responses", "preset": "openai-responses"},
    ]
    return {
        "storageDir": storage,
        "logLevel": "debug",
        "providers": [{**p, "baseUrl": url, "discover": False} for p in providers],
        "models": [{"id": f"{p['id']}-model", "provider": p["id"], **SIZES} for p in providers],
        "workspaceName": WORKSPACE,
        "idleTimeout": 5,
        "retryBaseDelay": 0.05,
    }


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with running_upstream(UpstreamConfig(reply=Reply(text=ANSWER))) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        await initialize(lsp_client, options(str(tmp_path / "storage"), up.base_url))
        yield
        await lsp_client.shutdown_session()


def opening(question: str) -> list[dict[str, Any]]:
    """The start of a Copilot chat (its system prompt, not one of its helpers')."""
    return [
        text_message("system", "You are an AI programming assistant."),
        text_message("user", question),
    ]


async def chat_turns(
    client: LanguageClient, model: str, question: str, turns: int = 2
) -> list[RecordedRequest]:
    """A conversation of `turns` requests, each after the answer before it (its stateful marker
    included, as VS Code keeps it); what reached the gateway for each."""
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    part_log: PartLog = client.part_log  # type: ignore[attr-defined]
    messages = opening(question)
    sent = []
    for turn in range(turns):
        params = chat_params(model, messages)
        await call(client, "tokenGauge/chat", params)
        sent.append(upstream.model_requests[-1])
        answer = answer_message(part_log.of(params["requestId"]), model)
        messages = [*messages, answer, text_message("user", f"And then? ({turn})")]
    return sent


async def helper_request(client: LanguageClient, model: str) -> RecordedRequest:
    """One of Copilot's helpers (a chat's title): no tools, two messages, not its chat prompt."""
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    messages = [
        text_message("system", "You are an expert in crafting pithy titles for chats."),
        text_message("user", "Title for: what does ledger.py do?"),
    ]
    await call(client, "tokenGauge/chat", chat_params(model, messages))
    return upstream.model_requests[-1]


async def conversations(client: LanguageClient) -> list[str | None]:
    history = (await call(client, "tokenGauge/usage", {}))["history"]
    return [record.get("conversation") for record in history]


def added_headers(request: RecordedRequest) -> dict[str, str]:
    return {
        name: value
        for name, value in request.headers.items()
        if name.startswith("x-litellm") or "session" in name
    }


async def test_a_litellm_proxy_is_told_the_customer_tags_and_a_session_per_conversation(
    client: LanguageClient,
):
    first = await chat_turns(client, "gw-model", "What does ledger.py do?", turns=3)
    second = await chat_turns(client, "gw-model", "Where is the checksum written?")
    helper = await helper_request(client, "gw-model")
    sessions = [r.header("x-litellm-session-id") for r in [*first, *second]]
    assert len(set(sessions[:3])) == 1 and len(set(sessions[3:])) == 1
    assert sessions[0] != sessions[3]
    for request in [*first, *second]:
        assert request.header("x-litellm-customer-id") == USER
        assert request.json["metadata"] == {
            "tags": ["team:payments", f"ws:{WORKSPACE}", "kind:turn"]
        }
        assert set(request.json) == BASE_FIELDS | {"metadata"}  # no body `user`: the header says
    # A helper belongs to no conversation: no session, its own kind.
    assert added_headers(helper) == {"x-litellm-customer-id": USER}
    assert helper.json["metadata"]["tags"][-1] == "kind:helper"
    # The session id is not the conversation's id as the dashboard shows it.
    ids = {c for c in await conversations(client) if c is not None}
    assert len(ids) == 2 and not any(c in s for c in ids for s in sessions if s)


async def test_openrouter_is_told_the_user_and_a_session_id_per_conversation(
    client: LanguageClient,
):
    first = await chat_turns(client, "or-model", "What does ledger.py do?")
    second = await chat_turns(client, "or-model", "Where is the checksum written?")
    helper = await helper_request(client, "or-model")
    sessions = [r.json["session_id"] for r in [*first, *second]]
    assert sessions[0] == sessions[1] != sessions[2] == sessions[3]
    assert all(len(session) == 32 for session in sessions)  # OpenRouter takes up to 128
    for request in [*first, *second]:
        assert request.json["user"] == USER
        assert set(request.json) == BASE_FIELDS | {"user", "session_id"}
        assert added_headers(request) == {}
    assert set(helper.json) == BASE_FIELDS | {"user"}


@pytest.mark.parametrize("model", ["oa-model", "oa-responses-model"])
async def test_openai_is_given_a_prompt_cache_key_per_conversation(
    client: LanguageClient, model: str
):
    first = await chat_turns(client, model, "What does ledger.py do?", turns=3)
    second = await chat_turns(client, model, "Where is the checksum written?")
    helper = await helper_request(client, model)
    keys = [r.json.get("prompt_cache_key") for r in [*first, *second]]
    assert len(set(keys[:3])) == 1 and len(set(keys[3:])) == 1 and keys[0] != keys[3]
    assert all(isinstance(key, str) and len(key) == 32 for key in keys)
    assert "prompt_cache_key" not in helper.json  # of no conversation
    assert not any("user" in r.json or added_headers(r) for r in [*first, *second])
    ids = {c for c in await conversations(client) if c is not None}
    assert len(ids) == 2 and not any(c in k for c in ids for k in keys if k)


async def test_without_the_setting_nothing_is_added(client: LanguageClient):
    for model in ("gw-off-model", "or-off-model"):
        for request in [
            *await chat_turns(client, model, "What does ledger.py do?"),
            await helper_request(client, model),
        ]:
            assert set(request.json) == BASE_FIELDS
            assert added_headers(request) == {}


async def test_a_restarted_server_keeps_a_conversations_session(tmp_path: Path):
    async with running_upstream(UpstreamConfig(reply=Reply(text=ANSWER))) as up:
        settings = options(str(tmp_path / "storage"), up.base_url)
        async with running_server(settings) as server:
            part_log = PartLog(server)
            first = opening("What does ledger.py do?")
            params = chat_params("or-model", first)
            await call(server, "tokenGauge/chat", params)
            answer = answer_message(part_log.of(params["requestId"]), "or-model")
        async with running_server(settings) as restarted:
            follow_up = [*first, answer, text_message("user", "And where is it written?")]
            await call(restarted, "tokenGauge/chat", chat_params("or-model", follow_up))
        before, after = up.model_requests
    assert before.json["session_id"] == after.json["session_id"]


async def test_the_values_a_person_chose_never_reach_the_log(client: LanguageClient):
    await chat_turns(client, "gw-model", "What does ledger.py do?")
    await chat_turns(client, "or-model", "What does ledger.py do?")
    logged = "\n".join(message.message for message in client.log_messages)
    assert "attributed by x-litellm-customer-id, x-litellm-session-id, metadata" in logged
    assert "attributed by user, session_id" in logged
    assert USER not in logged and WORKSPACE not in logged


async def test_a_user_the_gateway_echoes_back_is_not_logged(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    echo = f'{{"error": {{"message": "user {USER} is over budget", "code": 402}}}}'
    upstream.script(Scripted(route="chat", status=402, body=echo))
    with pytest.raises(JsonRpcException):
        await call(client, "tokenGauge/chat", chat_params("or-model", opening("Why?")))
    assert upstream.model_requests[-1].json["user"] == USER
    logged = "\n".join(message.message for message in client.log_messages)
    assert "over budget" in logged and USER not in logged
