"""The `tokengauge` command: the language server, and two tools for people.

tokengauge [serve]                          run the language server on stdio
tokengauge count FILE [--model ID] [--json] the breakdown of a request's token count
tokengauge parse-error FILE [--status N]    classify an API error body (exit 0 if overflow)
tokengauge parse-stream --dialect D FILE    a captured SSE stream's events as JSON lines
tokengauge report [--storage-dir DIR] [-o F] the usage dashboard as one self-contained HTML file
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import platformdirs
from rich.console import Console
from rich.table import Table

from tokengauge import __version__
from tokengauge.calibration.classify import ErrorKind, classify_error
from tokengauge.counting.scales import Scales
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import LEDGER_DIR, Ledger
from tokengauge.messages import InvalidInput, Message, unstructure
from tokengauge.request_file import read_request
from tokengauge.settings import DialectName, ModelSettings, ProviderSettings, ServerSettings
from tokengauge.upstream.dialects.dialect import parse_stream_file
from tokengauge.upstream.dialects.events import StreamError, event_json

DEFAULT_MODEL = "gpt-4o"
CLI_PROVIDER = ProviderSettings(id="cli")


@attrs.frozen
class MessageCount:
    """One listed message of `count --json`: our count, its raw count and CJK share, whence."""

    index: int
    role: str
    tokens: int
    raw: int
    cjk: int
    source: str


@attrs.frozen
class CountReport:
    """`tokengauge count --json`: the request's breakdown as the server would estimate it."""

    model: str
    family: str
    encoding: str
    system: int
    tools: int
    tool_count: int
    request_overhead: int
    messages: list[MessageCount]
    scales: Scales
    total: int
    raw_total: int
    max_input_tokens: int
    context_window: int
    fits: bool


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tokengauge", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tokengauge {__version__}")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("serve", help="run the language server on stdio (the default)")
    count = commands.add_parser("count", help="count the tokens of a request JSON file")
    count.add_argument("file", type=Path, help="OpenAI-style request JSON, or the wire shape")
    count.add_argument("--model", help="model id (default: the request's `model`, else gpt-4o)")
    count.add_argument("--context-window", type=int, help="override the model's context window")
    count.add_argument(
        "--storage-dir",
        type=Path,
        help="the server's storageDir: count with the API actuals kept there",
    )
    count.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parse_error = commands.add_parser("parse-error", help="classify an API error body")
    parse_error.add_argument("file", type=Path, help="the error body (JSON, text or SSE)")
    parse_error.add_argument("--status", type=int, help="the HTTP status, if known")
    parse_stream = commands.add_parser("parse-stream", help="parse a captured SSE stream")
    parse_stream.add_argument(
        "--dialect", choices=("openai", "anthropic", "responses"), required=True
    )
    parse_stream.add_argument("file", type=Path, help="the captured stream (.sse)")
    report = commands.add_parser("report", help="write the usage dashboard as an HTML file")
    report.add_argument(
        "--storage-dir",
        type=Path,
        help="the server's storageDir (default: VS Code's storage of Token Gauge, if found)",
    )
    report.add_argument(
        "-o", "--output", type=Path, default=Path("tokengauge-report.html"), help="the HTML file"
    )
    report.add_argument("--days", type=int, default=30, help="days of requests shown (30)")
    return parser


def _describe(message: Message) -> str:
    kinds = sorted({type(part).__name__.removesuffix("Part").lower() for part in message.content})
    return f"{message.role} ({', '.join(kinds) or 'empty'})"


def count_command(args: argparse.Namespace, console: Console) -> int:
    """`tokengauge count`."""
    try:
        data: Any = json.loads(args.file.read_text(encoding="utf-8"))
        messages, tools = read_request(data)
    except (OSError, json.JSONDecodeError, InvalidInput) as exc:
        print(f"tokengauge count: {args.file}: {exc}", file=sys.stderr)
        return 2
    model_id = args.model or data.get("model") or DEFAULT_MODEL
    settings = ServerSettings(
        providers=(CLI_PROVIDER,),
        models=(
            ModelSettings(
                id=model_id, provider=CLI_PROVIDER.id, context_window=args.context_window
            ),
        ),
    )
    ledger = Ledger(args.storage_dir / LEDGER_DIR if args.storage_dir else None)
    try:
        gauge = Gauge(settings, ledger)
        model = gauge.offer.model(model_id)
        estimate = gauge.counts.estimate(model, messages, tools)
        breakdown = gauge.counts.breakdown(model, estimate)
        scales = gauge.counts.scales(model)
    finally:
        ledger.close()
    fits = breakdown.total <= breakdown.max_input_tokens
    counts = estimate.features.messages
    listed = [
        (i, m, e, count)
        for i, (m, e, count) in enumerate(zip(messages, estimate.messages, counts, strict=True))
        if m.role != "system"
    ]
    if args.json:
        report = CountReport(
            model=model.id,
            family=model.family,
            encoding=model.encoding,
            system=breakdown.system,
            tools=breakdown.tools,
            tool_count=len(tools),
            request_overhead=breakdown.fixed,
            messages=[
                MessageCount(i, m.role, e.tokens, count.total, count.cjk, e.source)
                for i, (_, m, e, count) in enumerate(listed)
            ],
            scales=scales,
            total=breakdown.total,
            raw_total=breakdown.raw_total,
            max_input_tokens=breakdown.max_input_tokens,
            context_window=model.context_window,
            fits=fits,
        )
        console.print_json(json.dumps(unstructure(report)))
        return 0
    table = Table(title=f"{model.id} · {model.family} · {model.encoding}")
    table.add_column("part")
    table.add_column("tokens", justify="right")
    table.add_column("source")
    table.add_row("system", f"{breakdown.system:,}", "estimate")
    table.add_row(f"tools ({len(tools)})", f"{breakdown.tools:,}", "estimate")
    table.add_row("request overhead", f"{breakdown.fixed:,}", "estimate")
    for index, (_, message, item, _count) in enumerate(listed):
        table.add_row(f"#{index} {_describe(message)}", f"{item.tokens:,}", item.source)
    table.add_section()
    table.add_row("total", f"{breakdown.total:,}", f"raw {breakdown.raw_total:,}")
    table.add_row("maxInputTokens", f"{breakdown.max_input_tokens:,}", "")
    table.add_row("fits", "yes" if fits else "NO", "")
    console.print(table)
    return 0


def parse_error_command(args: argparse.Namespace) -> int:
    """`tokengauge parse-error`: exit 0 for an overflow, 1 for anything else."""
    try:
        body = args.file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        print(f"tokengauge parse-error: {exc}", file=sys.stderr)
        return 2
    parsed = classify_error(args.status, body)
    print(json.dumps(parsed.to_json()))
    return 0 if parsed.kind is ErrorKind.OVERFLOW else 1


def parse_stream_command(dialect: DialectName, path: str | Path) -> int:
    """`tokengauge parse-stream`: one JSON object per stream event (the `tokenGauge/chatPart`
    shapes; the finish reason has none). Exit 0, 1 if the stream reported an error or was cut
    off, 2 if the file cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        print(f"parse-stream: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    events = parse_stream_file(dialect, data)
    for event in events:
        line = event_json(event)
        if line is not None:
            print(json.dumps(line))
    return 1 if any(isinstance(event, StreamError) for event in events) else 0


EXTENSION_ID = "tokengauge.tokengauge"
"""The extension's id: its folder under VS Code's `globalStorage`."""


def storage_candidates() -> list[Path]:
    """Where VS Code-like editors keep Token Gauge's storage, then the server's own default."""
    home = Path.home()
    users = [
        Path(platformdirs.user_config_dir(app, appauthor=False, roaming=True)) / "User"
        for app in ("Code", "Code - Insiders", "VSCodium", "Cursor")
    ]
    users += [home / ".vscode-server/data/User", home / ".local/share/code-server/User"]
    found = [user / "globalStorage" / EXTENSION_ID for user in users]
    return [*found, Path(platformdirs.user_cache_dir("tokengauge"))]


def report_command(args: argparse.Namespace) -> int:
    """`tokengauge report`: exit 0, or 2 with the reason."""
    from tokengauge.activity.report import ReportError, dashboard_script, page, report_data

    candidates = [args.storage_dir] if args.storage_dir else storage_candidates()
    directory = next((d for d in candidates if (d / LEDGER_DIR).is_dir()), None)
    if directory is None:
        tried = ", ".join(str(d) for d in candidates)
        print(f"tokengauge report: no usage history in {tried}", file=sys.stderr)
        print("Give the directory with --storage-dir (Copy Diagnostics names it).", file=sys.stderr)
        return 2
    if args.days < 1:
        print("tokengauge report: --days must be at least 1", file=sys.stderr)
        return 2
    ledger = Ledger(directory / LEDGER_DIR)
    try:
        data = report_data(ledger, time.time(), args.days)
    finally:
        ledger.close()
    try:
        args.output.write_text(page(data, dashboard_script()), encoding="utf-8")
    except (ReportError, OSError) as exc:
        print(f"tokengauge report: {exc}", file=sys.stderr)
        return 2
    print(f"{len(data.requests)} requests from {directory} → {args.output}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `tokengauge` script and `python -m tokengauge`."""
    args = _parser().parse_args(argv)
    if args.command == "count":
        return count_command(args, Console())
    if args.command == "parse-error":
        return parse_error_command(args)
    if args.command == "report":
        return report_command(args)
    if args.command == "parse-stream":
        return parse_stream_command(args.dialect, args.file)
    from tokengauge.lsp.server import serve

    serve()
    return 0
