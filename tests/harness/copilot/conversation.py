"""The simulator's agent conversation: turns of user requests, tool rounds and answers.

`ConversationGenerator(seed)` yields the same conversation for the same seed, whoever asks and in
whatever order: turn `i` is drawn from its own `random.Random(f"{seed}:turn:{i}")`, so every
variant of a run (and every skew of a sweep) replays the same turns whatever was summarized or
failed before. A turn is a user request and the model's rounds: each round is an assistant message
(some text and 1-3 tool calls) with the tool results the agent sent back, and the last round is
the answer (no tools). The mix follows what an agent session sends: questions with pasted code,
CJK text, JSON or stack traces, now and then a screenshot; file reads (a few 5-20 KB files), grep
and terminal output with failures, code edits (old and new strings in the arguments), JSON from
diagnostics and fetches, browser screenshots as image results. The text generators, the system
prompt and the 60 tool schemas come from `workload`.

It also writes the texts Copilot's summarization adds (our own words, about as long as Copilot's):
the instructions of its summary request, the request to summarize, the background-compaction
instruction, and — standing in for the model's answer — a synthetic summary of the turns it covers.
The seeded conversation sends no helper requests (chat titles, progress messages).
"""

from __future__ import annotations

import base64
import functools
import json
import random
import struct
import zlib
from typing import Any, Final

from tests.harness.copilot.scenario import RoundPlan, TurnPlan
from tests.harness.copilot.workload import (
    NOUNS,
    build_tools,
    cjk_text,
    grep_output,
    json_blob,
    listing,
    prose,
    python_source,
    stack_trace,
    system_prompt,
    terminal_output,
    typescript_source,
)
from tokengauge.messages import (
    DataPart,
    Message,
    Part,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
)

IMAGE_SIZES: Final = ((1024, 768), (800, 600), (1280, 720), (512, 512))
TURN_KINDS: Final = ("question", "explore", "edit", "debug", "ui", "data")
TURN_WEIGHTS: Final = (3, 4, 4, 3, 1, 2)
LONG_READ_SHARE: Final = 0.35
"""Share of file reads that return a whole 5-20 KB file (the rest: 1-3 KB excerpts)."""


# --- pieces ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def png_base64(width: int, height: int) -> str:
    """A real (solid-colour) PNG of this size, base64: image-size readers find its header."""
    raw = b"".join(b"\x00" + b"\x2a\x6f\xb3" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    png += chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode("ascii")


def _image(rng: random.Random) -> DataPart:
    return DataPart("image/png", png_base64(*rng.choice(IMAGE_SIZES)))


def _path(rng: random.Random, ext: str) -> str:
    folder = rng.choice(("src", "src/core", "src/util", "lib", "server/app", "packages/web/src"))
    return f"/home/dev/project/{folder}/{rng.choice(NOUNS)}_{rng.randint(1, 40)}.{ext}"


def _source(rng: random.Random, ext: str, size: int) -> str:
    return python_source(rng, size) if ext == "py" else typescript_source(rng, size)


def _snippet(rng: random.Random) -> str:
    ext = rng.choice(("py", "ts"))
    language = "python" if ext == "py" else "ts"
    return f"```{language}\n{_source(rng, ext, rng.randint(300, 1500))}```"


def _extra(rng: random.Random, kinds: tuple[str, ...]) -> list[Part]:
    """Something pasted below the prose of a request or an answer (or nothing)."""
    kind = rng.choice(kinds)
    if kind == "code":
        return [TextPart(_snippet(rng))]
    if kind == "cjk":
        return [TextPart(cjk_text(rng, rng.randint(2, 8)))]
    if kind == "trace":
        return [TextPart(f"```\n{stack_trace(rng)}\n```")]
    if kind == "json":
        return [TextPart(f"```json\n{json_blob(rng, 2)}\n```")]
    if kind == "image":
        return [TextPart("Here is a screenshot of what I see:"), _image(rng)]
    return []


# --- tool calls and their results -----------------------------------------------------------------


def _call(rng: random.Random, name: str) -> tuple[dict[str, Any], list[Part]]:
    """Arguments of a call to tool `name` and the parts of its result."""
    if name == "read_file":
        ext = rng.choice(("py", "ts"))
        start = rng.randint(1, 200)
        size = (
            rng.randint(5_000, 20_000)
            if rng.random() < LONG_READ_SHARE
            else rng.randint(1_000, 3_000)
        )
        arguments = {"filePath": _path(rng, ext), "startLine": start, "endLine": start + size // 40}
        return arguments, [TextPart(_source(rng, ext, size))]
    if name == "grep_search":
        query = rng.choice(("def parse_", "TODO", "async function", "raise .*Error", "ledger"))
        arguments = {"query": query, "isRegexp": rng.random() < 0.5, "includePattern": "**/*.py"}
        return arguments, [TextPart(grep_output(rng, rng.randint(5, 40)))]
    if name == "run_in_terminal":
        command = rng.choice(("pytest -x -q", "npm test", "python -m mypy src", "git status"))
        arguments = {"command": command, "explanation": prose(rng, 1), "isBackground": False}
        return arguments, [TextPart(terminal_output(rng))]
    if name == "replace_string_in_file":
        ext = rng.choice(("py", "ts"))
        old, new = (
            _source(rng, ext, rng.randint(200, 1200)),
            _source(rng, ext, rng.randint(200, 1500)),
        )
        arguments = {"filePath": _path(rng, ext), "oldString": old, "newString": new}
        return arguments, [TextPart("The edit was applied successfully.")]
    if name == "create_file":
        ext = rng.choice(("py", "ts"))
        content = _source(rng, ext, rng.randint(1_500, 6_000))
        return {"filePath": _path(rng, ext), "content": content}, [TextPart("Created the file.")]
    if name == "get_errors":
        paths = [_path(rng, "ts") for _ in range(rng.randint(1, 3))]
        return {"filePaths": paths}, [TextPart(json_blob(rng, 3))]
    if name == "fetch_webpage":
        url = f"https://docs.example.org/{rng.choice(NOUNS)}/{rng.choice(NOUNS)}"
        text = prose(rng, rng.randint(8, 30)) + "\n\n" + cjk_text(rng, rng.randint(0, 6))
        return {"url": url, "query": prose(rng, 1)}, [TextPart(text), TextPart(json_blob(rng, 2))]
    if name == "mcp_playwright_browser_snapshot":
        return {"element": prose(rng, 1)}, [TextPart("Page snapshot:"), _image(rng)]
    if name == "list_dir":
        return {"path": _path(rng, "py").rsplit("/", 1)[0]}, [TextPart(listing(rng))]
    return {"query": prose(rng, 1)}, [TextPart("\n\n".join(_snippet(rng) for _ in range(3)))]


ROUND_TOOLS: Final[dict[str, tuple[tuple[str, ...], tuple[int, ...]]]] = {
    "explore": (("read_file", "grep_search", "list_dir", "semantic_search"), (6, 3, 1, 2)),
    "edit": (("read_file", "replace_string_in_file", "create_file", "get_errors"), (4, 5, 1, 2)),
    "debug": (
        ("run_in_terminal", "read_file", "replace_string_in_file", "grep_search"),
        (5, 3, 2, 1),
    ),
    "ui": (("mcp_playwright_browser_snapshot", "read_file", "replace_string_in_file"), (4, 2, 2)),
    "data": (("fetch_webpage", "get_errors", "read_file"), (4, 3, 2)),
}
ROUNDS: Final[dict[str, tuple[int, int]]] = {
    "question": (0, 0),
    "explore": (1, 3),
    "edit": (1, 4),
    "debug": (2, 4),
    "ui": (1, 3),
    "data": (1, 3),
}


class ConversationGenerator:
    """The system prompt, the tools and every turn of one seeded conversation (a `Scenario`)."""

    def __init__(self, seed: int, tool_count: int = 60) -> None:
        self.seed = seed
        rng = random.Random(f"{seed}:setup")
        self.system = Message("system", [TextPart(system_prompt(rng))])
        self.prefix = [self.system]
        self.tools: list[Tool] = build_tools(rng, tool_count)
        instructions = summary_instructions(seed)
        self.simple_system = Message("system", [TextPart(instructions)])
        self.simple_ask = Message("user", [TextPart(SUMMARIZE_REQUEST)])
        self.simple_header = SIMPLE_HEADER
        self.compaction = Message("user", [TextPart(f"{COMPACT_NOW}\n\n{instructions}")])

    def turn(self, index: int) -> TurnPlan:
        """Turn `index` (0-based): the same plan for the same seed, always."""
        rng = random.Random(f"{self.seed}:turn:{index}")
        kind = rng.choices(TURN_KINDS, weights=TURN_WEIGHTS)[0]
        extras = ("", "", "code", "cjk", "trace", "json", "image") if kind != "ui" else ("image",)
        first = TextPart(prose(rng, rng.randint(1, 4)))
        request = Message("user", [first, *_extra(rng, extras)])
        low, high = ROUNDS[kind]
        rounds = [self._tool_round(rng, kind, index, n) for n in range(rng.randint(low, high))]
        answer = Message(
            "assistant",
            [TextPart(prose(rng, rng.randint(2, 6))), *_extra(rng, ("", "", "code", "cjk"))],
        )
        return TurnPlan(kind, request, describe(request), (*rounds, RoundPlan(answer, None)))

    def _tool_round(self, rng: random.Random, kind: str, turn: int, number: int) -> RoundPlan:
        names, weights = ROUND_TOOLS[kind]
        parts: list[Part] = [TextPart(prose(rng, rng.randint(1, 2)))] if rng.random() < 0.6 else []
        results: list[Part] = []
        for call in range(rng.choices((1, 2, 3), weights=(6, 3, 1))[0]):
            name = rng.choices(names, weights=weights)[0]
            arguments, content = _call(rng, name)
            call_id = f"call_{turn}_{number}_{call}_{rng.getrandbits(32):08x}"
            parts.append(ToolCallPart(call_id, name, arguments))
            results.append(ToolResultPart(call_id, content))
        return RoundPlan(Message("assistant", parts), Message("user", results))

    def summary(self, number: int, turns_covered: int) -> str:
        """The model's summary (synthetic) of the conversation so far: 3-7 KB of structured text."""
        rng = random.Random(f"{self.seed}:summary:{number}")
        files = "\n".join(
            f"- `{_path(rng, rng.choice(('py', 'ts')))}`: {prose(rng, 1)}"
            for _ in range(rng.randint(3, 8))
        )
        steps = "\n".join(f"- {prose(rng, 1)}" for _ in range(rng.randint(3, 7)))
        return (
            f"<analysis>\n{prose(rng, rng.randint(4, 10))}\n</analysis>\n\n<summary>\n"
            f"1. Overview: {turns_covered} requests so far. {prose(rng, rng.randint(2, 5))}\n"
            f"2. Files:\n{files}\n3. Recent work:\n{_snippet(rng)}\n"
            f"4. Next steps:\n{steps}\n</summary>"
        )


def summary_instructions(seed: int) -> str:
    """The system message of a summary request: what the summary must hold (~1k tokens)."""
    rng = random.Random(f"{seed}:summary-instructions")
    sections = (
        "Write a thorough summary of this whole conversation so that the work can go on without "
        "it: every request of the user, every decision taken, every file and function touched, "
        "what was tried and failed, and what remains to be done.",
        "Look hardest at the last commands and tool results: they are why the conversation had "
        "to be shortened, and the next step depends on them.",
        "First think it through inside <analysis> tags, in order of time; then write the summary "
        "inside <summary> tags with these parts: overview, technical ground, files and code, "
        "problems and fixes, progress, the current work, the last operations, and the plan.",
    )
    rules = "\n".join(f"- {prose(rng, 2)}" for _ in range(18))
    return "\n\n".join((*sections, "Quality rules:\n" + rules))


SUMMARIZE_REQUEST: Final = (
    "Summarize the conversation so far in the structure the system message gives, with most "
    "care for the latest tool calls and their results and for what was being done when the "
    "conversation grew too long."
)


COMPACT_NOW: Final = (
    "This conversation no longer fits its context window and has to be shortened right away: "
    "write the summary now, in <summary> tags, and call no tool."
)
SIMPLE_HEADER: Final = (
    "A shortened copy of the conversation so far follows; its first entry is kept whole, later "
    "entries may be left out:"
)


def describe(message: Message) -> str:
    """A message as compact text (Copilot's simple summary mode lists history this way)."""
    pieces: list[str] = []
    for part in message.content:
        if isinstance(part, TextPart):
            pieces.append(part.value)
        elif isinstance(part, ToolCallPart):
            arguments = json.dumps(part.input, ensure_ascii=False)
            pieces.append(f'Used tool "{part.name}" with arguments: {arguments[:200]}')
        elif isinstance(part, ToolResultPart):
            pieces.append(describe(Message("user", part.content)))
        elif isinstance(part, DataPart):
            pieces.append("[image]")
    return "\n".join(pieces)
