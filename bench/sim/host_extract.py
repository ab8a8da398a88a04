"""Derive the simulator's host scenario from dumps of the Copilot host suite.

    .venv/bin/python -m bench.sim.host_extract DIR [--out bench/data]

`scripts/test-copilot.sh` (with `TG_COPILOT_DUMP` set by the suite) leaves, per skew, the upstream's
requests (`requests.json`), the extension's recording of every agent turn
(`requests.json.turn-N.json`: each `provideTokenCount` input and answer, and each chat as the server
got it, in ARCHITECTURE §3 JSON) and the figures (`result.json`). DIR, a folder of host dumps, holds
one `skew-<scale>/` directory per skew. From it this writes (`bench/data/README.md` describes them):
- `copilot-host-common.json.gz`: what Copilot 0.67 sends whatever the content: its agent system
  prompt and environment message (of the skew-1.0 run), the 39 tool schemas, the
  background-compaction instruction, the Simple-mode summary prompt (system message, history
  header, request) and the summary text the model's scripted answer yields;
- `copilot-host-skew-<scale>.json.gz` per skew: the true tokenizer and the model as the suite set
  them; that run's system prompt, environment message and first summary text (they name its
  workspace and transcript); each turn's user message as Copilot wrapped it, its raw query, its
  read_file rounds (calls and results) and Copilot's helper requests of that turn (progress
  messages, chat title); and what the real client did (`check.host_side`: failed turns,
  overflows, each summarization's kind and the fill before it, the largest fill), for
  `tests/test_simulate.py`.
Copilot's internal tool-call id suffixes (`__vscode-<n>`) are dropped, as Copilot drops them when
it sends.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from bench.sim.check import host_side

DATA: Final = Path(__file__).resolve().parents[1] / "data"
FORMAT: Final = "tokengauge-host-scenario/1"
COMPACT_MARK: Final = "must be compacted now"
SUMMARIZE_MARK: Final = "Summarize the conversation history so far"
SUMMARY_OPEN: Final = "<conversation-summary>\n"
SUMMARY_CLOSE: Final = "\n</conversation-summary>"
REQUEST_OPEN: Final = "<userRequest>\n"
REQUEST_CLOSE: Final = "\n</userRequest>"
_INTERNAL_ID = re.compile(r"__vscode-\d+$")

Json = dict[str, Any]


def text_of(parts: Sequence[Json]) -> str:
    """The text of ARCHITECTURE §3 parts, tool results included."""
    out: list[str] = []
    for part in parts:
        if part.get("type") == "text":
            out.append(part.get("value", ""))
        elif part.get("type") == "toolResult":
            out.append(text_of(part.get("content", [])))
    return "".join(out)


def clean(message: Json) -> Json:
    """A message without Copilot's internal call-id suffixes."""

    def part(p: Json) -> Json:
        p = dict(p)
        if "callId" in p:
            p["callId"] = _INTERNAL_ID.sub("", p["callId"])
        if p.get("type") == "toolResult":
            p["content"] = [part(q) for q in p.get("content", [])]
        return p

    return {**message, "content": [part(p) for p in message.get("content", [])]}


def load_turns(skew_dir: Path) -> list[Json]:
    """The recordings of every turn, in order."""
    paths = sorted(skew_dir.glob("requests.json.turn-*.json"), key=lambda p: int(p.name[19:-5]))
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


def is_compaction(chat: Json) -> bool:
    return bool(chat["tools"]) and COMPACT_MARK in text_of(chat["messages"][-1]["content"])


def is_foreground(chat: Json) -> bool:
    return not chat["tools"] and SUMMARIZE_MARK in text_of(chat["messages"][-1]["content"])


def main_chats(turn: Json) -> list[Json]:
    return [c for c in turn["chats"] if c["tools"] and not is_compaction(c)]


def common(dirs: Sequence[Path]) -> Json:
    """Copilot's own texts, from the first skew that has each."""
    found: Json = {}
    for skew_dir in dirs:
        for turn in load_turns(skew_dir):
            for chat in turn["chats"]:
                messages = chat["messages"]
                if chat["tools"] and not is_compaction(chat) and "system" not in found:
                    found["system"], found["environment"] = messages[0], messages[1]
                    found["tools"] = chat["tools"]
                if is_compaction(chat) and "compaction" not in found:
                    found["compaction"] = messages[-1]
                if is_foreground(chat) and "simple" not in found:
                    history = text_of(messages[1]["content"])
                    found["simple"] = {
                        "system": messages[0],
                        "header": history.split("\n", 1)[0],
                        "ask": messages[-1],
                    }
                for message in messages:
                    text = text_of(message["content"])
                    if text.startswith(SUMMARY_OPEN) and "summary" not in found:
                        found["summary"] = text[len(SUMMARY_OPEN) : text.index(SUMMARY_CLOSE)]
    missing = {"system", "compaction", "simple", "summary"} - set(found)
    if missing:
        raise SystemExit(f"no {', '.join(sorted(missing))} in any dump under {dirs[0].parent}")
    return {"format": FORMAT, **found}


def this_turn(messages: Sequence[Json], request: str) -> Sequence[Json]:
    """The messages of a chat that belong to the turn whose request text is `request`: those after
    it, or after the summary that replaced it."""
    texts = [text_of(m["content"]) for m in messages]
    if request in texts:
        return messages[texts.index(request) + 1 :]
    summaries = [i for i, t in enumerate(texts) if t.startswith(SUMMARY_OPEN)]
    return messages[summaries[-1] + 1 :] if summaries else []


def turn_plan(index: int, recording: Json, detail: Json) -> Json:
    """One turn: the wrapped request, the raw query, the read rounds, the helper requests."""
    chats = main_chats(recording)
    if not chats:
        raise SystemExit(f"turn {index + 1}: no agent request was recorded")
    request = chats[0]["messages"][-1]
    wrapped = text_of(request["content"])
    start, end = wrapped.find(REQUEST_OPEN), wrapped.rfind(REQUEST_CLOSE)
    query = wrapped[start + len(REQUEST_OPEN) : end] if 0 <= start < end else wrapped
    calls: dict[str, Json] = {}
    results: dict[str, Json] = {}
    for chat in chats:
        for message in map(clean, this_turn(chat["messages"], wrapped)):
            for part in message["content"]:
                if part["type"] == "toolCall" and part["callId"] not in calls:
                    calls[part["callId"]] = message
                if part["type"] == "toolResult":
                    results.setdefault(part["callId"], {"role": "user", "content": [part]})
    rounds = [{"assistant": calls[i], "results": results.get(i)} for i in calls]
    if len(rounds) != detail.get("reads", len(rounds)):
        raise SystemExit(f"turn {index + 1}: {len(rounds)} read rounds, the suite says {detail}")
    helpers = [
        [clean(m) for m in c["messages"]]
        for c in recording["chats"]
        if not c["tools"] and not is_foreground(c)
    ]
    return {
        "kind": detail.get("kind", "turn"),
        "request": clean(request),
        "query": query,
        "rounds": rounds,
        "helpers": helpers,
    }


def skew_data(skew_dir: Path, overhead: int, fixed: int) -> Json:
    """The per-skew file: the suite's setup and every turn."""
    result = json.loads((skew_dir / "result.json").read_text(encoding="utf-8"))
    settings = json.loads((skew_dir / "settings.json").read_text(encoding="utf-8"))
    model = settings["tokenGauge.models"][0]
    details = result.get("turnsDetail", [])
    recordings = load_turns(skew_dir)
    turns = [
        turn_plan(i, rec, details[i] if i < len(details) else {})
        for i, rec in enumerate(recordings)
    ]
    first = main_chats(recordings[0])[0]["messages"]
    answer = next(
        (
            m
            for rec in recordings
            for chat in main_chats(rec)
            for m in chat["messages"]
            if m["role"] == "assistant" and all(p["type"] == "text" for p in m["content"])
        ),
        {"role": "assistant", "content": [{"type": "text", "value": "Done."}]},
    )
    return {
        "format": FORMAT,
        "skew": result["skew"],
        "true_tokenizer": {
            "encoding": result["encoding"],
            "scale": result["skew"],
            "tool_scale": result["skew"],
            "per_message_overhead": overhead,
            "per_tool_overhead": 0,
            "fixed_overhead": fixed,
            "error_style": "anthropic",
        },
        "window": result["window"],
        "model": {
            "family": model.get("family", result.get("family")),
            "contextWindow": model.get("contextWindow", result["window"]),
            "maxOutputTokens": model.get("maxOutputTokens", 4096),
        },
        "prefix": [clean(m) for m in first[:2]],
        "summary": next(
            (
                text[len(SUMMARY_OPEN) : text.index(SUMMARY_CLOSE)]
                for rec in recordings
                for chat in rec["chats"]
                for text in (text_of(m["content"]) for m in chat["messages"])
                if text.startswith(SUMMARY_OPEN)
            ),
            None,
        ),
        "answer": answer,
        "turns": turns,
        "host": attrs.asdict(host_side(skew_dir)),
    }


def write(path: Path, payload: Json) -> int:
    data = gzip.compress(json.dumps(payload, ensure_ascii=False).encode("utf-8"), 9, mtime=0)
    path.write_bytes(data)
    return len(data)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the common file and one file per skew directory."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("root", type=Path, help="a directory of skew-<scale>/ dumps")
    parser.add_argument("--out", type=Path, default=DATA, help="where the files go (bench/data)")
    parser.add_argument("--overhead", type=int, default=7, help="true tokens per message (7)")
    parser.add_argument("--fixed", type=int, default=3, help="true tokens per request (3)")
    args = parser.parse_args(argv)
    dirs = sorted(p for p in args.root.glob("skew-*") if (p / "result.json").exists())
    if not dirs:
        parser.error(f"no skew-*/result.json under {args.root}")
    dirs.sort(key=lambda p: abs(float(p.name[5:]) - 1.0))  # Copilot's texts from skew 1.0 first
    size = write(args.out / "copilot-host-common.json.gz", common(dirs))
    print(f"copilot-host-common.json.gz: {size / 1024:.1f} KB")
    for skew_dir in sorted(dirs, key=lambda p: float(p.name[5:])):
        name = f"copilot-host-{skew_dir.name}.json.gz"
        size = write(args.out / name, skew_data(skew_dir, args.overhead, args.fixed))
        print(f"{name}: {size / 1024:.1f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
