"""`python -m tokengauge`: the same entry point as the `tokengauge` console script.

The language server (no arguments, or `serve`: how the extension starts it) goes straight to
`lsp.server`, without the command line's own imports (argparse, rich, the request-file and
stream tools): its start is the wait before VS Code lists the models.
"""

from __future__ import annotations

import sys


def run(argv: list[str]) -> int:
    """Serve, or hand the command line to `cli.main`."""
    if argv in ([], ["serve"]):
        from tokengauge.lsp.server import serve

        serve()
        return 0
    from tokengauge.cli import main

    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
