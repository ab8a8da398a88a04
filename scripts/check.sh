#!/usr/bin/env bash
# Every check: lint, formatting, types, the server's import layers, and the test suites of both
# sides (Python: unit + LSP end to end; extension: eslint, tsc, unit tests, and its tests inside a
# real VS Code).
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
status=0

"$VENV/bin/ruff" check . || status=1
"$VENV/bin/ruff" format --check . || status=1
"$VENV/bin/mypy" || status=1
"$VENV/bin/lint-imports" --no-cache || status=1  # the server's layers (pyproject: tool.importlinter)
"$VENV/bin/python" -m scripts.gen_protocol --check || status=1  # the TS wire is the server's
"$VENV/bin/python" scripts/check_standalone.py || status=1  # no machine path, nothing outside the checkout
npm run --silent check || status=1
TG_PYTHON="$(cd "$VENV" && pwd)/bin/python" bash scripts/test-extension.sh || status=1
# The counting benchmark once, one session per counter: it fails only if counting breaks.
TG_PYTHON="$(cd "$VENV" && pwd)/bin/python" TG_BENCH_REPS=1 bash bench/count_compare.sh || status=1
# Every other benchmark once, in its quickest form, so that none can rot: a script fails the check
# only if it breaks, never on a time. bench.sim.host_extract needs the host suite's dumps: only its
# command line is read.
for bench in count_bench stream_bench load_bench rss_bench startup ledger_bench telemetry_bench \
    local_servers sim call_path prefix_llama; do
    "$VENV/bin/python" -m "bench.$bench" --smoke > /dev/null || { echo "bench.$bench failed" >&2; status=1; }
done
"$VENV/bin/python" -m bench.tool_docs_bench > /dev/null || status=1
"$VENV/bin/python" -m bench.sim.host_extract --help > /dev/null || status=1
TG_PYTHON="$(cd "$VENV" && pwd)/bin/python" bash bench/host_startup.sh 1 > /dev/null || status=1
TG_PYTHON="$(cd "$VENV" && pwd)/bin/python" TG_COPILOT_TURNS=2 bash bench/copilot_turn_time.sh 1 > /dev/null \
    || { echo "bench/copilot_turn_time.sh failed" >&2; status=1; }

# Every platform's VSIX, for tests/test_platform_vsix.py (this machine's last: the dev extension's).
bash scripts/build-vsix-all.sh || status=1

"$VENV/bin/python" -m pytest -q "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure here" >&2
    status=1
elif [ "$rc" -ne 0 ]; then
    status=1
fi
exit "$status"
