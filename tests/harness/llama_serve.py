"""Run llama.cpp's HTTP server, as embedded in the ``xllamacpp`` wheel, until SIGTERM or SIGINT.

``python -m tests.harness.llama_serve --model M.gguf --ctx 512 --parallel 2 [--no-jinja]`` loads the
model, listens on 127.0.0.1 at a free port and prints one line, ``LISTENING http://127.0.0.1:PORT``,
once it answers. llama.cpp's own log goes to stderr. The options mirror ``llama-server``'s:
``--ctx`` is the whole context (``-c``), shared out between ``--parallel`` slots (``-np``); the
Jinja template engine is on by default, as in ``llama-server``.
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from types import FrameType

# xllamacpp ships neither stubs nor py.typed, and the test extra installs it on Linux x86_64 only.
import xllamacpp  # type: ignore[import-untyped,unused-ignore]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="the GGUF file")
    parser.add_argument("--ctx", type=int, default=512, help="the context of all slots together")
    parser.add_argument("--parallel", type=int, default=1, help="slots (each gets ctx/parallel)")
    parser.add_argument(
        "--jinja",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the Jinja template engine (needed for `tools`); --no-jinja for the legacy one",
    )
    parser.add_argument("--chat-template", help="a Jinja chat template instead of the model's")
    parser.add_argument(
        "--alias", help="the model's id on the wire (llama.cpp's default is the --model path)"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--port", type=int, default=0, help="0 (the default): a free port")
    return parser.parse_args(argv)


def server_params(args: argparse.Namespace) -> xllamacpp.CommonParams:
    """llama.cpp's ``common_params`` for these arguments (CPU only, no warm-up run)."""
    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = args.parallel
    params.use_jinja = args.jinja
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_gpu_layers = 0
    params.warmup = False  # a generation at start-up: seconds on a small CI machine, for nothing
    if args.chat_template is not None:
        params.chat_template = args.chat_template
    if args.alias is not None:
        params.model_alias = {args.alias}
    return params


def main(argv: list[str] | None = None) -> None:
    """Serve until SIGTERM or SIGINT."""
    args = parse_args(argv)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    # Server() returns once the model is loaded and the port is open: the address is live.
    server = xllamacpp.Server(server_params(args))
    print("LISTENING", server.listening_address, flush=True)
    while not stop.wait(0.5):
        pass
    del server  # its destructor stops the HTTP threads and frees the model


if __name__ == "__main__":
    main()
