#!/usr/bin/env bash
# A reasoning model's tool loop in the real Copilot Chat agent (built into code-server 1.139), through
# the installed tokengauge VSIX, against strict stand-ins of its server (the test upstream's
# `reasoning`: DeepSeek V4 and OpenRouter, tests/harness/fake_upstream/reasoning.py). Suite:
# extension/test/host/reasoning (four agent turns per stand-in, the first of three tool rounds; one
# VS Code for all the stand-ins of a provider). Ends with the plain
# `N passed, N failed` line and a table of turns answered per server and provider.
# Env: TG_PYTHON (the upstream's Python, default .venv/bin/python), TG_VSIX_PYTHON (the Python the
# installed VSIX runs on, default /usr/bin/python3: only its bundled libraries serve),
# TG_REASONING_SERVERS (default "deepseek openrouter"), TG_REASONING_COUNTERS (default "tokengauge";
# "customendpoint" runs the same turns through VS Code's built-in Custom Endpoint, its model marked
# `thinking`: measured for docs/BENCHMARKS.md, not asserted).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${TG_PYTHON:-$REPO/.venv/bin/python}
VSIX_PY=${TG_VSIX_PYTHON:-/usr/bin/python3}
SERVERS=${TG_REASONING_SERVERS:-deepseek openrouter}
COUNTERS=${TG_REASONING_COUNTERS:-tokengauge}
VERSION=$(node -p 'require("./package.json").version')
VSIX=$REPO/tokengauge-$VERSION-$("$PY" scripts/bundle_libs.py --print-host-target).vsix  # this machine's
KEY=sk-tg-reasoning-test-0123456789
THOUGHT='The bug is in how parse splits its text; reading the file shows it.'

bash scripts/vscode-host/setup.sh > /dev/null || { echo "vscode-host setup failed"; echo "0 passed, 1 failed"; exit 1; }
[ -f "$VSIX" ] || { echo "no $VSIX: run scripts/build-vsix.sh (scripts/setup.sh does)"; echo "0 passed, 1 failed"; exit 1; }
WORK=$(mktemp -d /tmp/tg-reasoning-test.XXXXXX)
mkdir -p "$WORK/consumer" && cp -r extension/test/consumer "$WORK/consumer/extension"

passed=0; failed=0; status=0; results=()
for COUNTER in $COUNTERS; do
    RUN=$WORK/$COUNTER && mkdir -p "$RUN"
    PIDS=() RUNS=() PROVIDERS=() MODELS=()
    for SERVER in $SERVERS; do
        case "$SERVER" in
            deepseek) PRESET=deepseek MODEL=deepseek-v4-pro;;
            openrouter) PRESET=openrouter MODEL=google/gemini-3-pro-preview;;
            *) echo "unknown reasoning server $SERVER"; failed=$((failed + 1)); status=1; continue;;
        esac
        CONFIG=$(printf '{"reply": {"text": "Found it.", "thinking": "%s", "scripted_calls": true}, "model": {"reasoning": "%s", "context_window": 128000, "require_api_key": "%s"}}' \
            "$THOUGHT" "$SERVER" "$KEY")
        "$PY" -m tests.harness.fake_upstream.server --port 0 --config "$CONFIG" > "$RUN/$SERVER.out" 2> "$RUN/$SERVER.err" &
        PIDS+=($!)
        for _ in $(seq 1 100); do [ -s "$RUN/$SERVER.out" ] && break; sleep 0.1; done
        URL=$(head -n 1 "$RUN/$SERVER.out")
        [ -n "$URL" ] || { echo "test upstream did not start:"; cat "$RUN/$SERVER.err"; failed=$((failed + 1)); status=1; continue; }
        # Custom Endpoint's runs keep tokengauge (which starts Copilot up) on a model of another id,
        # so that the stand-in's requests of the model are Custom Endpoint's alone.
        TG_MODEL=$MODEL; [ "$COUNTER" = tokengauge ] || TG_MODEL=warm-up-$SERVER
        RUNS+=("{\"server\": \"$SERVER\", \"model\": \"$MODEL\", \"provider\": \"$SERVER\", \"upstream\": \"$URL\"}")
        PROVIDERS+=("{\"id\": \"$SERVER\", \"preset\": \"$PRESET\", \"baseUrl\": \"$URL/v1\", \"discover\": false}")
        MODELS+=("{\"id\": \"$TG_MODEL\", \"provider\": \"$SERVER\", \"contextWindow\": 128000, \"maxOutputTokens\": 8192}")
    done
    trap 'kill ${PIDS[*]} 2>/dev/null || true' EXIT
    join() { local IFS=,; echo "$*"; }
    cat > "$RUN/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "chat.allowAnonymousAccess": true,
  "chat.agent.enabled": true,
  "chat.tools.global.autoApprove": true,
  "chat.byokUtilityModelDefault": "mainAgent",
  "tokenGauge.pythonPath": "$VSIX_PY",
  "tokenGauge.logLevel": "debug",
  "tokenGauge.providers": [$(join "${PROVIDERS[@]}")],
  "tokenGauge.models": [$(join "${MODELS[@]}")]
}
JSON
    ENVJSON=$("$PY" -c 'import json, sys; print(json.dumps({"TG_HOST_SUITE": "reasoning", "TG_REPO": sys.argv[1], "TG_REASONING_RUNS": sys.argv[2], "TG_REASONING_API_KEY": sys.argv[3], "TG_REASONING_THOUGHT": sys.argv[4], "TG_COPILOT_VENDOR": sys.argv[5], "TG_HOST_TEST_TIMEOUT_MS": "120000"}))' \
        "$REPO" "[$(join "${RUNS[@]}")]" "$KEY" "$THOUGHT" "$COUNTER")
    echo "== reasoning suite ($COUNTER; stand-ins: $SERVERS)"
    bash scripts/vscode-host/run-ext-tests.sh "$WORK/consumer/extension" extension/test/host/index.js "$ENVJSON" \
        --settings "$RUN/settings.json" --install-vsix "$VSIX" --timeout 900000 2>&1 | tee "$RUN/run.log"
    rc=${PIPESTATUS[0]}
    kill "${PIDS[@]}" 2>/dev/null || true
    line=$(grep -oE '[0-9]+ passed, [0-9]+ failed$' "$RUN/run.log" | tail -n 1)
    if [ -z "$line" ]; then
        failed=$((failed + 1))
    else
        passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
        failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
    fi
    [ "$rc" -eq 0 ] || status=1
    while IFS= read -r result; do results+=("$result"); done < <(grep -o 'reasoning-result {.*}' "$RUN/run.log" | cut -d' ' -f2-)
done
if [ "${#results[@]}" -gt 0 ]; then
    printf '%s\n' "${results[@]}" | node -e '
const { table } = require(process.argv[1]);
const rows = require("fs").readFileSync(0, "utf8").trim().split("\n").map((line) => JSON.parse(line));
table(["provider", "stand-in", "model", "turns ok", "requests", "refused", "first failure"], rows.map((r) => [
    r.vendor === "tokengauge" ? "tokengauge" : "Custom Endpoint", r.server, r.model, `${r.turnsOk}/${r.turns}`, r.requests,
    r.refused, r.errors.length ? `turn ${r.errors[0].turn}: ${r.errors[0].message.slice(0, 90)}` : "-"]));
' "$REPO/scripts/markdown-table.js"
fi
echo "reasoning suites ($SERVERS; $COUNTERS): logs in $WORK"
echo "$passed passed, $failed failed"
exit "$status"
