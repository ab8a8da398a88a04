"""End to end over stdio: every custom method of ARCHITECTURE §3 that step 1 serves."""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
import tiktoken
from lsprotocol import types
from lsprotocol.types import MessageType
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from tests.harness.lsp import (
    call,
    expect_notification,
    plain,
    plain_client,
    running_server,
    spawn_server,
)
from tests.lsp.helpers import init_options, text_message, told_per_true
from tokengauge import __version__
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.formatting import compact
from tokengauge.protocol import STATUS

ENCODINGS = EncodingRegistry()


def exact(text: str, encoding: str = "o200k_base") -> int:
    enc: tiktoken.Encoding = ENCODINGS.get(encoding)
    return len(enc.encode_ordinary(text))


def conversation(size: int = 50) -> list[dict]:
    return [
        text_message("system", "You are terse. " * 20),
        text_message("user", "Explain this code please. " * size),
        {
            "role": "assistant",
            "content": [
                {"type": "text", "value": "Let me read it."},
                {"type": "toolCall", "callId": "c1", "name": "read_file", "input": {"p": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "toolResult",
                    "callId": "c1",
                    "content": [{"type": "text", "value": "def f():\n    return 1\n" * size}],
                },
                {"type": "data", "mimeType": "cache_control", "data": "ZXBoZW1lcmFs"},
            ],
        },
    ]


async def test_models_report_budgets(client: LanguageClient):
    models = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}
    gpt = models["gpt-4o"]
    assert gpt["contextWindow"] == 128_000
    assert gpt["maxInputTokens"] == 128_000 - 16_384
    assert gpt["capabilities"] == {"toolCalling": True, "imageInput": True}
    assert gpt["name"] == "GPT-4o" and gpt["family"] == "gpt-4o"
    assert gpt["providerId"] == "openai"
    assert gpt["tooltip"] == "GPT-4o via openai · 128k-token window, up to 16.4k output tokens"
    assert gpt["detail"] == "Token Gauge · openai"
    small = models["local-small"]
    assert small["maxInputTokens"] == 8192 - 2048
    assert small["maxOutputTokens"] == 2048
    # Not in the built-in table, no name configured: named from its id, no images claimed.
    assert small["name"] == "Local Small"
    assert small["capabilities"] == {"toolCalling": True, "imageInput": False}


async def test_batch_count_of_strings_and_messages(client: LanguageClient):
    strings = ["hello world", "", "日本語のテキストです。", '{"type": "object"}', "a\ud800b"]
    message = text_message("user", "hello world", "second part")
    result = await call(
        client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": [*strings, message]}
    )
    assert isinstance(result["epoch"], int)
    scales = result["scales"]
    assert set(scales) == {"text", "cjk", "tools"}
    assert scales["text"] >= 1.0 and scales["cjk"] >= 1.0  # nothing learned: never below tiktoken
    cjks = result["cjk"]
    assert cjks[0] == cjks[3] == 0 and 0 < cjks[2] <= result["raw"][2]
    for text, raw, cjk, tokens in zip(strings, result["raw"], cjks, result["tokens"], strict=False):
        assert raw >= exact(text)
        assert tokens == math.ceil((raw - cjk) * scales["text"] + cjk * scales["cjk"] - 1e-9)
    assert result["raw"][:4] == [exact(s) for s in strings[:4]]
    assert result["raw"][5] == exact("hello world") + exact("second part")
    assert result["tokens"][5] + 3 >= result["raw"][5]  # Copilot adds 3 to a message's count


async def test_encoding_follows_family(client: LanguageClient):
    text = "The quick brown fox — ünïcödé — 你好世界 " * 20
    gpt = await call(client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": [text]})
    claude = await call(
        client, "tokenGauge/countTokens", {"modelId": "claude-sonnet-4-5", "inputs": [text]}
    )
    assert gpt["raw"] == [exact(text, "o200k_base")]
    assert claude["raw"] == [exact(text, "cl100k_base")]


async def test_huge_text(client: LanguageClient):
    text = "lorem ipsum dolor sit amet, " * 40_000  # ~1.1 MB
    result = await call(client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": [text]})
    assert result["raw"] == [exact(text)]


BAD_PARAMS = [
    pytest.param({"inputs": ["x"]}, "modelId", id="missing-model"),
    pytest.param({"modelId": "nope", "inputs": ["x"]}, "unknown model 'nope'", id="unknown-model"),
    pytest.param({"modelId": "gpt-4o", "inputs": "x"}, "inputs", id="inputs-not-list"),
    pytest.param({"modelId": "gpt-4o", "inputs": [5]}, "inputs[0]", id="number-input"),
    pytest.param(
        {"modelId": "gpt-4o", "inputs": [{"role": "robot", "content": []}]},
        "inputs[0].role",
        id="bad-role",
    ),
    pytest.param(
        {"modelId": "gpt-4o", "inputs": [{"role": "user", "content": [{"type": "video"}]}]},
        "inputs[0].content[0]",
        id="unknown-part-type",
    ),
    pytest.param(None, "params are missing", id="no-params"),
]


@pytest.mark.parametrize(("params", "needle"), BAD_PARAMS)
async def test_bad_params_are_clear_errors_and_the_server_keeps_serving(
    client: LanguageClient, params: object, needle: str
):
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await client.protocol.send_request_async("tokenGauge/countTokens", params)
    assert needle in caught.value.message
    after = await call(client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["ok"]})
    assert after["raw"] == [exact("ok")]


async def test_record_usage_sends_status_and_counts_follow_actuals(client: LanguageClient):
    messages = conversation()
    counted = await call(
        client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": messages}
    )
    status = expect_notification(client, "tokenGauge/status")
    calibration = expect_notification(client, "tokenGauge/calibration")
    actual = round(sum(tokens + 3 for tokens in counted["tokens"]) * 1.1)  # the API says 10% more
    result = await call(
        client,
        "tokenGauge/recordUsage",
        {
            "modelId": "gpt-4o",
            "messages": messages,
            "usage": {"totalInputTokens": actual, "outputTokens": 120},
        },
    )
    assert result["epoch"] != counted["epoch"]
    pushed = await asyncio.wait_for(calibration, 10)
    assert pushed.modelId == "gpt-4o" and pushed.epoch == result["epoch"]
    shown = await asyncio.wait_for(status, 10)
    # The input budget: maxInputTokens 111,616 (of a 128k window with 16,384 for output).
    assert shown.text == f"$(pulse) {compact(actual)} / 112k · {round(actual / 111_616 * 100)}%"
    assert shown.severity == "info"
    assert f"| **input, as the API counted it** | **{actual:,}** |" in shown.tooltip
    assert f"of the input budget (112k): {round(actual / 111_616 * 100)}%" in shown.tooltip
    again = await call(client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": messages})
    assert again["epoch"] == result["epoch"]
    assert again["scales"] == pushed.scales._asdict()
    # The messages now carry the API's count: what Copilot adds up (each answer + 3) is the
    # actual, plus the 2% margin on actuals and the request overhead's margin.
    scale = await told_per_true(client, "gpt-4o")  # counts are in the units VS Code is told
    copilot = sum(tokens + 3 for tokens in again["tokens"]) / scale
    assert actual <= copilot <= (math.ceil(actual * 1.02) + 12 + len(messages)) * 1.01
    usage = await call(client, "tokenGauge/usage", {})
    assert usage["latest"]["inputTokens"] == actual
    assert usage["history"][-1]["inputTokens"] == actual
    assert usage["history"][-1]["outcome"] == "answered"


async def test_overflow_error_lowers_the_budget(client: LanguageClient, wire: Path):
    body = (wire / "error-llamacpp-exceed-context-size.json").read_text()
    messages = conversation(size=500)  # ~7k tokens where the error says 14,429: believable
    changed = expect_notification(client, "tokenGauge/modelsChanged")
    result = await call(
        client,
        "tokenGauge/recordError",
        {"modelId": "local-small", "messages": messages, "body": body, "status": 400},
    )
    assert result["error"]["kind"] == "overflow"
    assert result["learnedLimit"] is None  # n_ctx 8192 is the configured window already
    counted = await call(
        client, "tokenGauge/countTokens", {"modelId": "local-small", "inputs": messages}
    )
    scale = await told_per_true(client, "local-small")
    assert sum(tokens + 3 for tokens in counted["tokens"]) / scale > 8192
    assert not changed.done()
    changed.cancel()

    lower = '{"error":{"type":"exceed_context_size_error","n_prompt_tokens":7000,"n_ctx":4096}}'
    changed = expect_notification(client, "tokenGauge/modelsChanged")
    result = await call(
        client,
        "tokenGauge/recordError",
        {"modelId": "local-small", "messages": messages, "body": lower, "status": 400},
    )
    assert result["learnedLimit"] == 4096
    await asyncio.wait_for(changed, 10)
    models = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}
    report = {m["id"]: m for m in (await call(client, "tokenGauge/usage", {}))["models"]}
    assert report["local-small"]["maxInputTokens"] == 4096 - 1024  # the true budget
    assert models["local-small"]["contextWindow"] == 4096
    told = models["local-small"]["maxInputTokens"] + models["local-small"]["maxOutputTokens"]
    assert told <= 4096  # in Copilot's units, never above the true window
    assert models["local-small"]["tooltip"].startswith(
        "Local Small via local · 4.1k-token window (smaller than the 8.2k listed: the provider's "
        "errors showed it), up to 2k output tokens"
    )


async def test_calibration_outlives_a_restart(tmp_path: Path):
    options = init_options(tmp_path / "storage")
    messages = conversation()
    async with running_server(options) as first:
        await call(
            first,
            "tokenGauge/recordUsage",
            {"modelId": "gpt-4o", "messages": messages, "usage": {"totalInputTokens": 5000}},
        )
        before = await call(
            first, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": messages[1:]}
        )
    async with running_server(options) as second:
        after = await call(
            second, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": messages[1:]}
        )
        usage = await call(second, "tokenGauge/usage", {})
    assert after["tokens"] == before["tokens"]
    assert usage["persistent"] is True
    assert usage["history"][-1]["inputTokens"] == 5000


async def test_a_corrupt_ledger_is_moved_aside_and_rebuilt(tmp_path: Path):
    ledger = tmp_path / "storage" / "ledger"
    ledger.mkdir(parents=True)
    (ledger / "cache.db").write_bytes(b"this is not a sqlite database" * 100)
    async with running_server(init_options(tmp_path / "storage")) as client:
        result = await call(
            client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["still works"]}
        )
        usage = await call(client, "tokenGauge/usage", {})
        warnings = [m.message for m in client.log_messages if m.type == MessageType.Warning]
    assert result["raw"] == [exact("still works")]
    assert usage["persistent"] is True
    assert any(str(ledger) in w and "damaged" in w for w in warnings), warnings
    [aside] = [p for p in ledger.parent.iterdir() if p.name.startswith("ledger.damaged-")]
    assert (aside / "cache.db").read_bytes().startswith(b"this is not")


async def test_warm_counts_remember_the_strings_asked_most(tmp_path: Path):
    options = init_options(tmp_path / "storage")
    strings = ['"type"', '"object"', "The absolute path of the file to read.", "日本語"]
    async with running_server(options) as first:
        for _ in range(3):
            await call(first, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": strings})
        await call(first, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["once"]})
    async with running_server(options) as second:  # a new session: only the ledger remembers
        warm = await call(
            second, "tokenGauge/warmCounts", {"modelIds": ["gpt-4o", "claude-sonnet-4-5"]}
        )
    by_sha = {e["sha256"]: e for e in warm["entries"] if e["modelId"] == "gpt-4o"}
    scales = {s["modelId"]: s["scales"] for s in warm["scales"]}
    for text in strings[:3]:
        entry = by_sha[hashlib.sha256(text.encode()).hexdigest()]
        assert entry["raw"] == exact(text)
        assert entry["tokens"] == math.ceil(entry["raw"] * scales["gpt-4o"]["text"] - 1e-9)
    # A warm entry carries a raw count only, so strings with CJK text (their own ratio) stay out.
    assert hashlib.sha256(strings[3].encode()).hexdigest() not in by_sha
    ranked = [e["sha256"] for e in warm["entries"] if e["modelId"] == "gpt-4o"]
    assert ranked[-1] == hashlib.sha256(b"once").hexdigest()  # most asked first
    assert not [e for e in warm["entries"] if e["modelId"] == "claude-sonnet-4-5"]  # other encoding
    assert isinstance(warm["epoch"], int)


async def test_warm_counts_name_the_models_to_count_ahead(tmp_path: Path):
    """Only models of an encoding the server loads at start (Copilot's, and those counted
    before), counted ones first: counting ahead never loads another encoding."""
    options = init_options(tmp_path / "storage")
    every = {"modelIds": ["gpt-4o", "claude-sonnet-4-5", "local-small"]}
    async with running_server(options) as first:
        fresh = await call(first, "tokenGauge/warmCounts", every)
        await call(
            first, "tokenGauge/countTokens", {"modelId": "claude-sonnet-4-5", "inputs": ["x"]}
        )
    async with running_server(options) as second:
        later = await call(second, "tokenGauge/warmCounts", every)
    assert "gpt-4o" in fresh["ahead"]
    assert "claude-sonnet-4-5" not in fresh["ahead"]  # cl100k_base, never counted here
    assert later["ahead"][0] == "claude-sonnet-4-5"  # counted before: loaded at start, and first
    assert "gpt-4o" in later["ahead"]


async def test_warm_counts_give_each_model_once(client: LanguageClient):
    """10,000 copies of one id made 10,000 copies of the table (3.9 GB, no answer)."""
    await call(client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["a", "b"]})
    warm = await call(
        client, "tokenGauge/warmCounts", {"modelIds": ["gpt-4o"] * 10_000 + ["local-small"]}
    )
    assert [s["modelId"] for s in warm["scales"]] == ["gpt-4o", "local-small"]
    assert len([e for e in warm["entries"] if e["modelId"] == "gpt-4o"]) == 2


@attrs.define
class Heard:
    """What the server sent a plain client besides answers."""

    statuses: list[dict[str, Any]] = attrs.field(factory=list)
    logs: list[types.LogMessageParams] = attrs.field(factory=list)
    first_status: asyncio.Event = attrs.field(factory=asyncio.Event)

    def client(self) -> Any:
        def status(params: Any) -> None:
            self.statuses.append(plain(params))
            self.first_status.set()

        def log(params: types.LogMessageParams) -> None:
            self.logs.append(params)

        return plain_client({STATUS: status, types.WINDOW_LOG_MESSAGE: log})


async def first_status(options: dict[str, Any]) -> dict[str, Any]:
    """The status a new session shows right after `initialized`, before any request."""
    heard = Heard()
    async with spawn_server(heard.client()) as server:
        await server.initialize(options)
        await asyncio.wait_for(heard.first_status.wait(), 10)
    return heard.statuses[0]


async def test_the_first_status_comes_from_the_ledger(tmp_path: Path):
    options = init_options(tmp_path / "storage")
    assert await first_status(options) == {
        "text": "$(pulse) 3 models ready",
        "tooltip": "Token Gauge: 3 models ready (GPT-4o, Claude Sonnet 4.5, Local Small).\n\n"
        "After the first answer in a chat, this shows how much of the model's input budget "
        "the conversation uses.",
        "severity": "info",
    }
    async with running_server(options) as client:
        title = [text_message("system", "Write a title."), text_message("user", "hi")]
        for messages, tokens in ((conversation(), 18_400), (title, 30)):
            usage = {"totalInputTokens": tokens, "outputTokens": 512}
            params = {"modelId": "claude-sonnet-4-5", "messages": messages, "usage": usage}
            await call(client, "tokenGauge/recordUsage", params)
    # The next session opens on the conversation (the title request after it does not count).
    shown = await first_status(options)
    assert shown["text"] == "$(pulse) 18.4k / 184k · 10%"
    assert shown["tooltip"].startswith(
        "**Claude Sonnet 4.5** — last request (in an earlier session)"
    )
    assert "18.4k of the input budget (184k): 10%" in shown["tooltip"]


async def test_logs_reach_the_client_once_and_stderr_stays_quiet(tmp_path: Path):
    ledger = tmp_path / "storage" / "ledger"
    ledger.mkdir(parents=True)
    (ledger / "cache.db").write_bytes(b"this is not a sqlite database" * 100)  # a warning
    heard = Heard()
    async with spawn_server(heard.client()) as server:
        await server.initialize(init_options(tmp_path / "storage"))
        await server.request("tokenGauge/models", {})
        await server.request("tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["hi"]})
    # Every line once, as window/logMessage, of its level's type, without a timestamp.
    assert server.stderr == []
    kinds = {m.message.split(":")[0]: m.type for m in heard.logs}
    assert kinds[f"tokengauge {__version__}"] == MessageType.Info
    [damaged] = [m for m in heard.logs if "damaged" in m.message]
    assert damaged.type == MessageType.Warning
    assert not [m for m in heard.logs if re.match(r"\d{4}-\d\d-\d\d", m.message)]
    # Nothing alarming from a normal shutdown: the one warning is the damaged ledger.
    alarming = [m for m in heard.logs if m.type in (MessageType.Error, MessageType.Warning)]
    assert alarming == [damaged]
