"""Regenerate ``tests/data/llamacpp/``: a real llama.cpp server's answers, for parsing tests.

``python -m tests.harness.capture_llama_cpp`` starts the harness's server (context 512 in 2 slots,
Jinja on, the packaged SmolLM2-135M-Instruct) and saves its answers; ``--url URL`` asks a server
already running instead. The model's directory is written as ``/models`` so that no machine path is
saved; the rest is the server's answer as it came.

- ``props.json``, ``v1-models.json``: ``GET /props``, ``GET /v1/models``
- ``apply-template.json``, ``tokenize.json``: ``{"request", "answer"}`` for the sample conversation
  with its tool (``tests.harness.llama_cpp.CONVERSATION``, ``TOOLS``), counted as the chat counts
- ``stream-final-chunk.json``: the last chunk before ``[DONE]`` of that chat, streamed with
  ``stream_options.include_usage``
- ``overflow-400.json``: ``{"status", "body"}`` for a prompt longer than a slot
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import connect_sse

from tests.harness.llama_cpp import CONVERSATION, TOKENIZE_FLAGS, TOOLS, running_llama_cpp

OUT = Path(__file__).resolve().parents[1] / "data" / "llamacpp"
CHAT = {"messages": CONVERSATION, "tools": TOOLS}


def capture(client: httpx.Client) -> dict[str, Any]:
    """Every saved answer, by file name."""
    found: dict[str, Any] = {
        "props.json": client.get("/props").raise_for_status().json(),
        "v1-models.json": client.get("/v1/models").raise_for_status().json(),
    }
    applied = client.post("/apply-template", json=CHAT).raise_for_status().json()
    found["apply-template.json"] = {"request": CHAT, "answer": applied}
    tokenize = {"content": applied["prompt"], **TOKENIZE_FLAGS}
    tokens = client.post("/tokenize", json=tokenize).raise_for_status().json()
    found["tokenize.json"] = {"request": tokenize, "answer": tokens}
    too_long = {"messages": [{"role": "user", "content": " a" * 300}], "max_tokens": 1}
    overflow = client.post("/v1/chat/completions", json=too_long)
    found["overflow-400.json"] = {"status": overflow.status_code, "body": overflow.json()}
    # Last: the server closes the connection after a streamed answer.
    found["stream-final-chunk.json"] = final_chunk(client)
    return found


def final_chunk(client: httpx.Client) -> Any:
    """The last JSON chunk of the sample chat, streamed with usage."""
    body = {
        **CHAT,
        "max_tokens": 4,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with connect_sse(client, "POST", "/v1/chat/completions", json=body) as source:
        source.response.raise_for_status()
        data = [event.data for event in source.iter_sse() if event.data != "[DONE]"]
    return json.loads(data[-1])


def save(found: dict[str, Any], out: Path) -> None:
    """Pretty-printed, with the model's directory written as ``/models``."""
    model_dir = str(Path(found["props.json"]["model_path"]).parent)
    out.mkdir(parents=True, exist_ok=True)
    for name, answer in found.items():
        text = json.dumps(answer, indent=2, ensure_ascii=False) + "\n"
        (out / name).write_text(text.replace(json.dumps(model_dir)[1:-1], "/models"))
        print(out / name)


@contextmanager
def server_url(url: str | None) -> Iterator[str]:
    """``url``, or the harness's own server for the ``with`` block."""
    if url is not None:
        yield url
        return
    with running_llama_cpp(ctx=512, parallel=2) as server:
        yield server.url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running llama.cpp server (default: start one)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with server_url(args.url) as url, httpx.Client(base_url=url, timeout=120) as client:
        save(capture(client), args.out)


if __name__ == "__main__":
    main()
