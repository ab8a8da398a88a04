"""The path of one chat request through the server's modules, traced in the real server.

    .venv/bin/python -m bench.call_path [--smoke] [--server FOLDER]

(`--server`: the folder holding another version's `tokengauge` package, e.g. a worktree's
`server/`, to trace that one.)

The server runs as itself over stdio (`python -m bench.call_path --traced FILE` is `python -m
tokengauge` under a profiler) and answers one `tokenGauge/chat` from the test upstream. From the
first call into the chat package until the server is asked to shut down, the profiler notes every
call of a server function that comes from another of the server's modules (or from outside the
server: pygls, asyncio). It prints:
- the request's spine: the server's frames on the stack when it opens the upstream's stream, and
  when it hands the answer's last part (the usage) to the extension, one line per module run;
- how many calls crossed from one module into another, how many modules were entered, and the
  modules entered most.
A call is one that starts a function: a coroutine resumed after an `await` is not counted again,
but a property read is a call. Prints what it measured; asserts nothing.
"""

from __future__ import annotations

import asyncio
import collections
import dis
import json
import os
import runpy
import sys
import tempfile
import threading
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from rich.console import Console

from bench.benchlib import Report, bench_parser

PACKAGE: Final = "/tokengauge/"
STARTS: Final = "tokengauge/chat"
"""Recording starts at the first call into the chat package."""
STOPS: Final = "shutdown"
"""…and ends at the first call of a language-server function of this name."""
MESSAGES: Final = [
    {"role": "system", "content": [{"type": "text", "value": "You are terse."}]},
    {"role": "user", "content": [{"type": "text", "value": "Say hello."}]},
]


def module_of(code: types.CodeType) -> str | None:
    """`tokengauge/chat/request` for a function of the server's package, else None."""
    name = code.co_filename.replace("\\", "/")
    at = name.rfind(PACKAGE)
    return None if at < 0 else name[at + 1 :].removesuffix(".py")


class Tracer:
    """A profiler of the server's own calls (see the module docstring); `dump` writes them."""

    def __init__(self) -> None:
        self.crossings: list[tuple[str | None, str, str]] = []
        self.spines: dict[str, list[str]] = {}
        self._on = False
        self._off = False
        self._first: dict[types.CodeType, int] = {}

    def install(self) -> None:
        sys.setprofile(self._profile)
        threading.setprofile(self._profile)

    def _fresh(self, frame: types.FrameType) -> bool:
        """Whether the frame starts its function (not a coroutine resumed)."""
        code = frame.f_code
        first = self._first.get(code)
        if first is None:
            resumes = (i.offset for i in dis.get_instructions(code) if i.opname == "RESUME")
            first = self._first[code] = next(resumes, 0)
        return frame.f_lasti <= first

    def _profile(self, frame: types.FrameType, event: str, arg: object) -> None:
        if event != "call" or self._off:
            return
        module = module_of(frame.f_code)
        if module is None or not self._fresh(frame):
            return
        name: str = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)  # 3.11 on
        if not self._on:
            self._on = module.startswith(STARTS)
            if not self._on:
                return
        if module.startswith("tokengauge/lsp") and name.split(".")[-1].startswith(STOPS):
            self._off = True
            return
        caller = frame.f_back
        while caller is not None and module_of(caller.f_code) is None:
            caller = caller.f_back
        calling = None if caller is None else module_of(caller.f_code)
        if calling != module:
            self.crossings.append((calling, module, name))
        if name == "open_sse" or (name == "ServerChatSink.part" and _is_usage(frame)):
            self.spines[name] = _stack(frame)

    def dump(self, path: str) -> None:
        document = {"crossings": self.crossings, "spines": self.spines}
        Path(path).write_text(json.dumps(document), "utf-8")


def _is_usage(frame: types.FrameType) -> bool:
    part = frame.f_locals.get("part")
    return type(part).__name__ == "UsagePart"


def _stack(frame: types.FrameType) -> list[str]:
    """The server's frames from the outermost to `frame`, as `module: function`."""
    out: list[str] = []
    at: types.FrameType | None = frame
    while at is not None:
        module = module_of(at.f_code)
        if module is not None:
            out.append(f"{module}: {at.f_code.co_name}")
        at = at.f_back
    return out[::-1]


def serve_traced(path: str) -> None:
    """`python -m tokengauge`, traced, the figures written to `path` at exit."""
    tracer = Tracer()
    tracer.install()
    try:
        sys.argv = ["tokengauge"]
        runpy.run_module("tokengauge", run_name="__main__")
    finally:
        sys.setprofile(None)
        tracer.dump(path)


async def one_chat(out: str, server_path: str | None) -> None:
    """One chat request through the traced server against the test upstream (`server_path`:
    where the server's package is imported from, if not from here)."""
    # Imported here: the traced server (this module too) must import only the server's own code.
    from tests.harness.fake_upstream.server import running_upstream
    from tests.harness.lsp import bare_server, init_options

    env = None if server_path is None else {**os.environ, "PYTHONPATH": server_path}
    async with running_upstream() as upstream:
        with tempfile.TemporaryDirectory() as storage:
            provider = {"id": "p", "dialect": "openai", "baseUrl": upstream.url("/v1")}
            options = init_options(storage, [provider], [{"id": "gpt-4o", "provider": "p"}])
            command = (sys.executable, "-m", "bench.call_path", "--traced", out)
            async with bare_server(options, env=env, command=command) as server:
                await server.request("tokenGauge/models", {})
                await server.request(
                    "tokenGauge/chat",
                    {
                        "requestId": "r1",
                        "modelId": "gpt-4o",
                        "messages": MESSAGES,
                        "tools": [],
                        "toolMode": "auto",
                        "modelOptions": {},
                        "credentials": {"apiKey": "sk-bench-call-path"},
                    },
                )


def spine_rows(report: Report, title: str, frames: Sequence[str]) -> None:
    """The stack one line per run of frames in one module (how many frames in brackets)."""
    runs: list[list[Any]] = []
    for frame in frames:
        module, function = frame.split(": ", 1)
        if runs and runs[-1][0] == module:
            runs[-1][1].append(function)
        else:
            runs.append([module, [function]])
    entered = collections.Counter(module for module, _ in runs)
    detail = f"{len(frames)} frames; most runs of one module: {max(entered.values(), default=0)}"
    report.add(title, "modules on the stack, outermost first", str(len(runs)), detail)
    for module, functions in runs:
        report.add(title, module, str(len(functions)), " → ".join(functions))


def measure(report: Report, out: str, server_path: str | None) -> None:
    """Run the chat and put the trace in the report."""
    asyncio.run(one_chat(out, server_path))
    traced = json.loads(Path(out).read_text("utf-8"))
    crossings = traced["crossings"]
    entries = collections.Counter(module for _, module, _ in crossings)
    section = "1 · calls across modules, from the chat's first call to shutdown"
    report.add(section, "calls from one module into another", str(len(crossings)))
    report.add(section, "modules entered", str(len(entries)))
    for module, count in entries.most_common(8):
        report.add(section, f"entered: {module}", str(count))
    spines = traced["spines"]
    if "open_sse" in spines:
        spine_rows(report, "2 · the stack as the upstream's stream opens", spines["open_sse"])
    if "ServerChatSink.part" in spines:
        spine_rows(report, "3 · the stack as the usage goes back", spines["ServerChatSink.part"])


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--traced"] and len(args) == 2:
        serve_traced(args[1])
        return 0
    parser = bench_parser(__doc__, None)  # one chat is already the smallest run
    parser.add_argument("--server", help="trace the server package in this folder instead")
    server = parser.parse_args(args).server
    report = Report()
    with tempfile.TemporaryDirectory() as scratch:
        measure(report, str(Path(scratch) / "trace.json"), server)
    report.print(Console())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
