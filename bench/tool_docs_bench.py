"""What `toolDocs` sends: the tools' tokens per request under full, progressive and minimal.

    .venv/bin/python -m bench.tool_docs_bench [--skew 1.0] [--encoding o200k_base]

Replays the recorded Copilot host scenario (`bench/data/copilot-host-*.json.gz`: Copilot Chat 0.67's
39 agent tools and the suite's 12 turns with their read_file rounds, see
`tests/harness/copilot/host_scenario.py`) request by request, the history growing as Copilot sends
it, with no summarization (so every call made stays in the history: progressive at its largest). For
each request it counts the tools' JSON in the form the server would send
(`upstream.tool_docs.tools_as_sent`), with a real tiktoken encoding. Prints per mode: requests,
tokens of tools per request (p50, smallest, largest), their sum over the run, what that leaves of a
32K window, and the savings against full; then the tools of Copilot's set whose minimal form saves
the most.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Sequence
from typing import Final, get_args

from rich.console import Console
from rich.table import Table

from tests.harness.copilot.host_scenario import HostScenario, recorded_scales
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.request import tool_json
from tokengauge.messages import Message, Tool
from tokengauge.settings import ToolDocs
from tokengauge.upstream.tool_docs import minimal_tool, tools_as_sent

SMALL_WINDOW: Final = 32_768
"""A local model's window (Ollama, LM Studio), to put the tools' share in proportion."""
TOP: Final = 8


def requests_of(scenario: HostScenario) -> list[list[Message]]:
    """The messages of each main request Copilot sends over the scenario's turns: a turn's first
    request, then one per tool-call round, the history growing with every round."""
    history: list[Message] = list(scenario.prefix)
    requests = []
    for index in range(len(scenario)):
        turn = scenario.turn(index)
        history.append(turn.request)
        for round_ in turn.rounds:
            requests.append(list(history))
            history.append(round_.assistant)
            if round_.results is not None:
                history.append(round_.results)
    return requests


def tool_tokens(
    tools: Sequence[Tool],
    requests: Sequence[list[Message]],
    mode: ToolDocs,
    count: Callable[[str], int],
) -> list[int]:
    """The tools' tokens in each request under `mode`."""
    return [
        sum(count(tool_json(tool)) for tool in tools_as_sent(tools, messages, mode))
        for messages in requests
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--skew", type=float, default=1.0, help="recorded host skew (1.0)")
    parser.add_argument("--encoding", default="o200k_base", help="tiktoken encoding (o200k_base)")
    args = parser.parse_args(argv)
    if args.skew not in recorded_scales():
        parser.error(f"no recording at skew {args.skew}; recorded: {recorded_scales()}")
    scenario = HostScenario(args.skew)
    encoding = EncodingRegistry().get(args.encoding)

    def count(text: str) -> int:
        return len(encoding.encode_ordinary(text))

    requests = requests_of(scenario)
    tools = scenario.tools
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    console.print(
        f"[bold]tool documentation[/bold]: Copilot Chat 0.67's {len(tools)} agent tools over the "
        f"host scenario at skew {args.skew} ({len(scenario)} turns, {len(requests)} requests, "
        f"no summarization), counted with {args.encoding}"
    )
    table = Table(expand=False)
    for column in ("toolDocs", "requests", "tools/request p50", "min", "max", "sum", "saved"):
        table.add_column(column, justify="left" if column == "toolDocs" else "right")
    table.add_column(f"p50 ÷ {SMALL_WINDOW // 1024}K window", justify="right")
    full_sum = 0
    for mode in get_args(ToolDocs):
        per_request = tool_tokens(tools, requests, mode, count)
        total = sum(per_request)
        full_sum = full_sum or total
        table.add_row(
            mode,
            str(len(per_request)),
            f"{statistics.median(per_request):,.0f}",
            f"{min(per_request):,}",
            f"{max(per_request):,}",
            f"{total:,}",
            f"{1 - total / full_sum:.1%}",
            f"{statistics.median(per_request) / SMALL_WINDOW:.1%}",
        )
    console.print(table)
    savings = sorted(
        ((count(tool_json(t)) - count(tool_json(minimal_tool(t))), t) for t in tools),
        key=lambda pair: -pair[0],
    )
    top = ", ".join(f"{tool.name} {saved:,}" for saved, tool in savings[:TOP])
    console.print(f"largest savings of one tool's minimal form (tokens): {top}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
