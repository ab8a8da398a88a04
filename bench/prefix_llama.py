"""A stable prompt prefix on a real llama.cpp: what decisions kept per conversation buy.

    .venv/bin/python -m bench.prefix_llama [--smoke]

llama.cpp keeps the KV of a slot's last prompt and, for the next prompt, evaluates only the tokens
after the longest prefix the two share. This bench sends one scripted agent conversation, as
Copilot's agent would, through tokengauge's own chat path (`ChatRunner` in this process, the
`llamacpp` preset, as `bench.local_servers` does) to a real llama.cpp (xllamacpp + SmolLM2-135M,
`--ctx-size 8192 --parallel 1`: one slot, so the prompt cache is the slot's): a system prompt, the
question, then tool rounds (an assistant message with one call, its result of 550-900 tokens of
code or log; one round re-reads a file unchanged). By tokengauge's estimate the conversation
outgrows the window's input target (8,192 - 2,048 - 128) at its 6th round, so the recovery ladder
cuts from then on. Each request asks for 8 output tokens (`modelOptions.max_tokens`; the model
keeps 2,048 tokens of room, `maxOutputTokens`): its time is the prompt's. The model's answers are
not used: the bench appends the next round itself, with the stateful marker the last answer
returned, as Copilot does.

Three runs of the same conversation, each on a freshly started server (its first request cold):
1. `tokengauge`: as it is, the ladder's cuts of a request taken again by the next
   (`calibration.precedent`, the conversation's last request kept in the runner's `shared.sent`);
2. `each request decided afresh`: before each request the runner's `shared.sent` is replaced by an
   empty `LastSent`, so no request knows its predecessor (`ChatRequest.ask` finds no `before`,
   `Fitting.knowing` takes nothing, `climb` gets no `since`) and each is cut afresh, only as far
   as it needs, to a common length of its own: the send path before decisions were kept per
   conversation (a request that continues none takes no step past what it needs either);
3. `afresh, deduplicateToolResults off`: the same, repeated tool results sent whole too.

Per request: `usage.prompt_tokens`, the tokens llama.cpp evaluated (`prompt_tokens` less
`usage.prompt_tokens_details.cached_tokens`, which tokengauge's usage record keeps), the time to
the first streamed part of the answer as the chat call sees it, and whether the request found its
predecessor (`shared.sent.of` answered) and began with all of the messages it sent. A full run
(12 requests a run) takes about 8 minutes on two cores, most of it the afresh runs evaluating each
cut prompt anew; `--smoke` sends 3 rounds (about a minute).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import logging
import statistics
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Final

import attrs
import httpx
from rich.console import Console
from rich.table import Table

from bench.benchlib import bench_parser, ms, now, size_of, version
from bench.local_servers import LLAMA_MODEL, Session, Sink, llama_tokens, slot_window, text
from tests.harness.llama_cpp import TOOL_TEMPLATE, LlamaCpp, running_llama_cpp
from tokengauge.activity.record import RequestRecord
from tokengauge.chat import ChatError, ChatRunner
from tokengauge.chat.cached_summary import LastSent, Sent
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import (
    STATEFUL_MARKER,
    DataPart,
    Message,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
)
from tokengauge.protocol import ChatParams, ChatPart, StatefulMarkerPart
from tokengauge.settings import parse_settings
from tokengauge.upstream.discovery import discover_providers
from tokengauge.upstream.http import Timeouts, make_client

CTX: Final = 8_192
OUTPUT_ROOM: Final = 2_048
"""`maxOutputTokens`: the answer's room the ladder keeps (input target 8,192 - 2,048 - 128)."""
ASKED_OUTPUT: Final = 8
"""`modelOptions.max_tokens` of each request: the time is the prompt's."""
SMOKE_ROUNDS: Final = 3
RUNS: Final = (
    ("tokengauge", True, True),
    ("each request decided afresh", False, True),
    ("afresh, deduplicateToolResults off", False, False),
)
"""(name, decisions kept per conversation, deduplicateToolResults)."""


def tool(name: str, description: str, properties: str) -> Tool:
    """A tool of Copilot's kind: string properties, the first required."""
    names = properties.split()
    props = {name: {"type": "string"} for name in names}
    return Tool(name, description, {"type": "object", "properties": props, "required": names[:1]})


TOOLS: Final = [
    tool("read_file", "Read a file of the workspace, or its lines.", "filePath startLine endLine"),
    tool("run_in_terminal", "Run a shell command, return its output.", "command explanation"),
    tool("grep_search", "Search the workspace's files for a string.", "query includePattern"),
    tool("list_dir", "List a directory's entries, folders ending in /.", "path"),
]
SYSTEM: Final = (
    "You are an expert AI programming assistant, working with a user in the VS Code editor. When "
    'asked for your name, you must respond with "GitHub Copilot". Follow the user\'s requirements '
    "carefully and to the letter. Gather context before you act: read the files the question "
    "concerns, and the tests that cover them, rather than guessing how the code behaves. Prefer "
    "the tools to asking the user; never ask which file to read when a search can find it, and "
    "never print a code change instead of making it. Keep your answers short and concrete, name "
    "the files and the lines you mean, and say what you verified and what you only assumed. When "
    "a command fails, read its whole output before you try anything else; do not run the same "
    "failing command twice without a change in between. Do not change code that the question "
    "does not concern, and keep the style, the names and the comments around a change as they "
    "are. Logs are long: look for the first error, the request ids and the timings around it, and "
    "compare them with the configuration the service was started with. Before you say a problem "
    "is fixed, run the tests again and read their result; if they cannot run, say so and why.\n"
    "<environment_info>The user's current OS is Linux. The workspace is a Python service: "
    "src/gateway (the HTTP gateway), tests/gateway (its tests), logs/ (its logs), deploy/ (its "
    "configuration per environment).</environment_info>"
)
QUESTION: Final = (
    "The gateway answers 502 under load since yesterday's deploy, mostly on /v1/orders. Find out "
    "why: read the router, the retry and pool code and the logs, and tell me what to change."
)


@attrs.frozen
class Round:
    """One tool round: the call the assistant made and the kind and size of its result."""

    intro: str
    tool: str
    input: dict[str, str]
    kind: str
    """How its result's lines look (`LINES`)."""
    tokens: int
    """The result's size in the model's tokens; 0: the earlier same call's result again."""


def read(path: str, tokens: int = 0) -> Round:
    return Round(f"Let me read {path}.", "read_file", {"filePath": path}, "code", tokens)


def run(command: str, tokens: int) -> Round:
    what = {"command": command, "explanation": f"Run {command.split()[0]}"}
    return Round(f"Running `{command}`.", "run_in_terminal", what, "log", tokens)


ROUNDS: Final = (
    read("src/gateway/router.py", 760),
    run("tail -n 400 logs/gateway.log", 880),
    Round("Searching for the budget.", "grep_search", {"query": "retry_budget"}, "grep", 560),
    read("src/gateway/retry.py", 820),
    run("pytest tests/gateway -x -q", 680),
    read("src/gateway/pool.py", 900),
    Round("Listing the package.", "list_dir", {"path": "src/gateway"}, "listing", 620),
    read("src/gateway/router.py"),  # the same file again, unchanged: a repeated result
    run("journalctl -u gateway --since '10 min ago'", 780),
    read("src/gateway/config.py", 600),
    run("pytest tests/gateway -q -k orders", 720),
)
ROUTES: Final = ("orders", "carts", "users")
LINES: Final = {
    "code": (
        "{i:4d}        if attempt > self.limit_{a}:",
        "{i:4d}            return await self.upstream.send(request, timeout={b}.{a})",
        "{i:4d}        self.stats['{route}'] += {a}  # pool slot {n}, kept alive",
    ),
    "log": (
        "2025-03-14T10:{m:02d}:{s:02d}.{n:03d}Z INFO gateway[{seed}] req={n:04x}{i:03d} "
        "route=/v1/{route} upstream=svc-{a} status=200 {n}ms",
        "2025-03-14T10:{m:02d}:{s:02d}.{n:03d}Z ERROR gateway[{seed}] req={n:04x}{i:03d} "
        "route=/v1/{route} upstream=svc-{a} status=502 pool exhausted after {b} retries",
    ),
    "grep": ("src/gateway/{route}.py:{n}: retry_budget = RetryBudget(ratio=0.{a}, per_s={b})",),
    "listing": ("{route}_{i}/", "module_{n}_{i}.py  {b}{a} bytes"),
}


def lines(kind: str, seed: int) -> Iterator[str]:
    """Endless deterministic lines of one kind, different for each `seed`."""
    for i in itertools.count(1):
        n = (i * 37 + seed * 101) % 997
        shapes = LINES[kind]
        yield shapes[n % len(shapes)].format(
            i=i, n=n, a=n % 7, b=n % 13, m=i // 60 % 60, s=i % 60, seed=seed, route=ROUTES[n % 3]
        )


def result_text(kind: str, seed: int, tokens: int, count: Callable[[str], int]) -> str:
    """About `tokens` of the model's tokens of `kind` lines."""
    per_line = count("\n".join(itertools.islice(lines(kind, seed), 40))) / 40
    return "\n".join(itertools.islice(lines(kind, seed), max(1, round(tokens / per_line))))


def results_of(rounds: Sequence[Round], count: Callable[[str], int]) -> list[str]:
    """Each round's result: a repeated call's is the earlier one's, word for word."""
    results: list[str] = []
    for k, item in enumerate(rounds):
        again = (results[j] for j, other in enumerate(rounds[:k]) if other.input == item.input)
        results.append(
            result_text(item.kind, k, item.tokens, count) if item.tokens else next(again)
        )
    return results


# --- tokengauge, watched --------------------------------------------------------------------------


class Watched(LastSent):
    """`LastSent` that says whether the request asking it found its conversation's last request,
    and keeps the last request kept (as sent)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: bool | None = None
        self.kept: Sent | None = None

    def of(self, conversation: str | None, model_id: str) -> Sent | None:
        sent = super().of(conversation, model_id)
        self.found = sent is not None
        return sent

    def keep(self, conversation: str, sent: Sent) -> None:
        super().keep(conversation, sent)
        self.kept = sent


@attrs.define
class TimedSink(Sink):
    """The sink with the time of the answer's first part and the last stateful marker."""

    first_ns: int | None = None
    marker: str | None = None

    def part(self, request_id: str, part: ChatPart) -> None:
        if isinstance(part, StatefulMarkerPart):
            self.marker = part.value
        elif isinstance(part, TextPart | ThinkingPart | ToolCallPart) and self.first_ns is None:
            self.first_ns = now()


@contextlib.asynccontextmanager
async def llama_session(llama: LlamaCpp, deduplicate: bool) -> AsyncIterator[Session]:
    """A session on the llama.cpp, started as the language server starts one (as
    `local_servers.session`, with `deduplicateToolResults` set)."""
    provider = {"id": "llamacpp", "preset": "llamacpp", "baseUrl": llama.url + "/v1"}
    entry = {"id": LLAMA_MODEL, "provider": "llamacpp", "maxOutputTokens": OUTPUT_ROOM}
    settings = parse_settings(
        {"providers": [provider], "models": [entry], "logLevel": "error"}
        | {"deduplicateToolResults": deduplicate}
    )
    gauge, sink = Gauge(settings, Ledger(None)), TimedSink()
    async with make_client(Timeouts()) as client:
        runner = ChatRunner(gauge, client, sink)
        for listing in await discover_providers(client, gauge.settings.providers, {}):
            if listing.models is not None:
                gauge.apply_discovery(listing.provider_id, listing.models)
        await runner.read_all_served()
        yield Session(gauge, runner, sink, LLAMA_MODEL)
        await runner.settled()
    gauge.ledger.close()


@attrs.frozen
class Asked:
    """One request of a run, as measured."""

    rounds: int
    record: RequestRecord
    """Its usage record: `input_tokens` (`usage.prompt_tokens`), `cached_tokens`
    (`usage.prompt_tokens_details.cached_tokens`: read from the slot's cache), `trimmed_tokens`."""
    ttft_ns: int | None
    whole_ns: int
    found: bool
    """It found its conversation's last request (`shared.sent.of`)."""
    kept: bool
    """Its messages and tools began with all of the last request's, as sent."""

    @property
    def prompt(self) -> int:
        return self.record.input_tokens or 0

    @property
    def evaluated(self) -> int:
        return self.prompt - self.record.cached_tokens


def prefix_kept(before: Sent | None, sent: Sent | None) -> bool:
    if before is None or sent is None:
        return False
    count = len(before.messages)
    return sent.tools == before.tools and sent.messages[:count] == before.messages


async def converse(llama: LlamaCpp, keep: bool, deduplicate: bool, rounds: int) -> list[Asked]:
    """The conversation through tokengauge, a request per round."""
    script = ROUNDS[:rounds]
    results = results_of(script, llama_tokens(llama))
    history = [text("system", SYSTEM), text("user", QUESTION)]
    asked: list[Asked] = []
    async with llama_session(llama, deduplicate) as s:
        watched, before = Watched(), None
        for k in range(rounds + 1):
            if not k or not keep:  # afresh: an empty `LastSent` before each request
                watched = Watched()
                s.runner._shared = attrs.evolve(s.runner._shared, sent=watched)
            watched.found = watched.kept = None
            sink = s.sink
            assert isinstance(sink, TimedSink)
            sink.first_ns = None
            params = ChatParams(
                f"prefix-{k}",
                LLAMA_MODEL,
                list(history),
                TOOLS,
                model_options={"temperature": 0, "max_tokens": ASKED_OUTPUT},
            )
            started = now()
            with contextlib.suppress(ChatError):
                await s.runner.run(params)
            whole = now() - started
            await s.runner.settled()
            record = s.records()[-1]
            if record.input_tokens is None:
                raise RuntimeError(f"request {k + 1} failed: {record.outcome} {record.error}")
            first = None if sink.first_ns is None else sink.first_ns - started
            found, kept = bool(watched.found), prefix_kept(before, watched.kept)
            asked.append(Asked(k, record, first, whole, found, kept))
            before = watched.kept
            if k < rounds:
                history += round_messages(k, script[k], results[k], sink.marker)
    return asked


def round_messages(k: int, item: Round, result: str, marker: str | None) -> list[Message]:
    """The round as Copilot sends it back: the call (with the last answer's marker), its result."""
    call_id = f"call_{k + 1:02d}"
    parts: list[Any] = [TextPart(item.intro), ToolCallPart(call_id, item.tool, item.input)]
    if marker is not None:
        data = base64.b64encode(f"{LLAMA_MODEL}\\{marker}".encode()).decode()
        parts.append(DataPart(STATEFUL_MARKER, data))
    answer = Message("assistant", parts)
    return [answer, Message("user", [ToolResultPart(call_id, [TextPart(result)])])]


# --- report ---------------------------------------------------------------------------------------


def ttft(value: int | None) -> str:
    return "—" if value is None else ms(value)


def summary_table(runs: dict[str, list[Asked]]) -> Table:
    table = Table(title="per run", title_justify="left")
    columns = "run,requests,found predecessor,prefix kept,cut by ladder,prompt tokens,evaluated,"
    columns += "from cache,TTFT median,TTFT sum,whole sum"
    for name in columns.split(","):
        table.add_column(name, justify="left" if name == "run" else "right")
    for name, asked in runs.items():
        prompt, evaluated = sum(a.prompt for a in asked), sum(a.evaluated for a in asked)
        firsts = [a.ttft_ns for a in asked if a.ttft_ns is not None]
        table.add_row(
            name,
            str(len(asked)),
            f"{sum(a.found for a in asked)} of {len(asked) - 1}",
            f"{sum(a.kept for a in asked)} of {len(asked) - 1}",
            str(sum(a.record.trimmed_tokens > 0 for a in asked)),
            f"{prompt:,}",
            f"{evaluated:,}",
            f"{(prompt - evaluated) / prompt:.1%}" if prompt else "—",
            ms(statistics.median(firsts)) if firsts else "—",
            ms(sum(firsts)) if firsts else "—",
            ms(sum(a.whole_ns for a in asked)),
        )
    table.caption = (
        "found predecessor: shared.sent.of gave the conversation's last request; prefix kept: the "
        "request's messages and tools began with all the last request's as sent; evaluated: "
        "prompt_tokens - prompt_tokens_details.cached_tokens (llama.cpp evaluates ≥ 1); TTFT: "
        "the chat call to the answer's first streamed part; whole: the chat call"
    )
    table.caption_justify = "left"
    return table


def request_table(runs: dict[str, list[Asked]]) -> Table:
    table = Table(title="per request: prompt tokens / evaluated / TTFT", title_justify="left")
    table.add_column("rounds", justify="right")
    for name in runs:
        table.add_column(name, justify="right")
    for k, row in enumerate(zip(*runs.values(), strict=True)):
        cells = [
            f"{a.prompt:,} / {a.evaluated:,} / {ttft(a.ttft_ns)}"
            + (" [dim]cut[/dim]" if a.record.trimmed_tokens else "")
            + ("" if a.kept or not k else " [yellow]≠[/yellow]")
            for a in row
        ]
        table.add_row(str(row[0].rounds), *cells)
    table.caption = (
        "cut: the ladder cut the request; ≠: it did not begin with all the last request sent"
    )
    table.caption_justify = "left"
    return table


async def measure(console: Console, rounds: int) -> tuple[str, dict[str, list[Asked]]]:
    runs: dict[str, list[Asked]] = {}
    about = ""
    for name, keep, deduplicate in RUNS:
        with (
            console.status(f"{name}: llama.cpp --ctx-size {CTX} --parallel 1, {rounds} rounds…"),
            running_llama_cpp(CTX, 1, chat_template=TOOL_TEMPLATE, alias=LLAMA_MODEL) as llama,
        ):
            props = httpx.get(llama.url + "/props", timeout=30).json()
            window, slots = slot_window(llama)
            build = props.get("build_info", "?")
            about = f"llama.cpp build {build}, n_ctx {window:,} per slot, {slots} slot(s)"
            runs[name] = await converse(llama, keep, deduplicate, rounds)
    return about, runs


def main(argv: Sequence[str] | None = None) -> int:
    smoke = size_of(bench_parser(__doc__, None).parse_args(argv)) == "smoke"
    logging.basicConfig(level=logging.ERROR)
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 180)
    started = now()
    about, runs = asyncio.run(measure(console, SMOKE_ROUNDS if smoke else len(ROUNDS)))
    console.print(
        f"tokengauge {version('tokengauge')}, xllamacpp {version('xllamacpp')}, {about}; "
        f"SmolLM2-135M-Instruct Q4_1, maxOutputTokens {OUTPUT_ROOM:,}, max_tokens {ASKED_OUTPUT}"
    )
    console.print(summary_table(runs))
    console.print(request_table(runs))
    console.print(f"[dim]run took {ms(now() - started)}[/dim]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
