#!/usr/bin/env bash
# Counting benchmark: an agent turn's token counting through tokengauge against the in-process
# approach of GCMP and friends, side by side in one real VS Code (code-server 1.139) run.
#
#   bash bench/count_compare.sh
#
# Replays the recorded Copilot Chat agent trace bench/data/copilot-count-trace.json.gz (turns 1–3 of
# the Copilot host suite, ~4,700–5,900 provideTokenCount calls per turn), strictly one call at a time,
# through (a) tokengauge's own provider (memo, batching) → vscode-languageclient → the Python server,
# and (b) js-tiktoken o200k_base with a 5000-entry LRU inside the extension host, counting like GCMP
# (bench/count_compare/baseline.js); each called as a provider object and through vscode.lm.
# Prints cold/warm/restart turn times, per-call p50/p99, large single texts (100 KB, 1 MB), server
# start to first answer, memory, the ratios tokengauge/baseline and how their counts differ.
# Asserts no time: it fails only when counting breaks. One run ≈ 1.5 min.
#
# Env: TG_PYTHON (the server's Python, default .venv/bin/python), TG_BENCH_TRACE (another trace,
# see bench/count_compare/trace.js), TG_BENCH_REPS (sessions per counter and path, default 7),
# TG_BENCH_VIA ("provider lm", default both), TG_BENCH_TIMEOUT_MS (the host run, default 900000).
# Record a new trace: TG_COPILOT_TRACE=/tmp/trace.json bash scripts/test-copilot.sh, then
#   node bench/count_compare/trace.js /tmp/trace.json bench/data/copilot-count-trace.json.gz --turns 1-3
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${TG_PYTHON:-$REPO/.venv/bin/python}
TRACE=$(realpath "${TG_BENCH_TRACE:-bench/data/copilot-count-trace.json.gz}")
REPS=${TG_BENCH_REPS:-7}
VIA=${TG_BENCH_VIA:-provider lm}
TIMEOUT=${TG_BENCH_TIMEOUT_MS:-900000}

bash scripts/vscode-host/setup.sh > /dev/null || { echo "vscode-host setup failed"; exit 1; }
build=$(npm run --silent build 2>&1) || { echo "$build"; echo "build failed"; exit 1; }
# The development extension runs its bundled server package: make it the working tree's.
"$PY" scripts/bundle_libs.py --refresh-server || { echo "bundle refresh failed"; exit 1; }

WORK=$(mktemp -d /tmp/tg-count-compare.XXXXXX)
# The baseline's vendor must be contributed by an installed extension: a zip with its package.json.
mkdir -p "$WORK/baseline"
cp -r extension/test/baseline "$WORK/baseline/extension"
(cd "$WORK/baseline" && "$PY" -m zipfile -c baseline.vsix extension) || exit 1

# One model, gpt-4o (o200k_base, as the baseline); its provider is never called (no discovery, no chat).
cat > "$WORK/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "chat.allowAnonymousAccess": true,
  "chat.agent.enabled": true,
  "tokenGauge.pythonPath": "$PY",
  "tokenGauge.providers": [
    {"id": "bench", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1", "discover": false}
  ],
  "tokenGauge.models": [
    {"id": "gpt-4o", "provider": "bench", "name": "GPT-4o (benchmark)"}
  ]
}
JSON
ENVJSON=$(printf '{"TG_HOST_SUITE": "bench", "TG_REPO": "%s", "TG_PYTHON": "%s", "TG_BENCH_TRACE": "%s", "TG_BENCH_OUT": "%s", "TG_BENCH_REPS": "%s", "TG_BENCH_VIA": "%s", "TG_HOST_TEST_TIMEOUT_MS": "%s"}' \
    "$REPO" "$PY" "$TRACE" "$WORK/results.json" "$REPS" "$VIA" "$TIMEOUT")

echo "== counting benchmark: $(basename "$TRACE"), $REPS sessions per counter and path ($VIA); host log $WORK/host.log"
bash scripts/vscode-host/run-ext-tests.sh . extension/test/host/index.js "$ENVJSON" \
    --settings "$WORK/settings.json" --install-vsix "$WORK/baseline/baseline.vsix" --timeout "$TIMEOUT" \
    > "$WORK/host.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || [ ! -s "$WORK/results.json" ]; then
    tail -n 40 "$WORK/host.log"
    echo "counting benchmark failed (host run exit code $rc); logs in $WORK"
    exit $((rc == 0 ? 1 : rc))
fi
node bench/count_compare/report.js "$WORK/results.json" || exit 1
echo "== results $WORK/results.json; host log $WORK/host.log"
