#!/usr/bin/env bash
# The real GitHub Copilot Chat (built into code-server 1.139) drives tokengauge in agent mode against
# the test upstream (shared/vscode-host/COPILOT.md): turns with large content, a window small enough
# that Copilot must summarize; asserts no request overflows the upstream's window and reports turn
# times (suite: extension/test/host/copilot). Ends with the plain `N passed, N failed` line and exits
# with the suite's code.
# Env: TG_PYTHON (the server's and the upstream's Python, default .venv/bin/python),
# TG_COPILOT_WINDOW (the model's and the upstream's context window, default 36000),
# TG_COPILOT_SCALE (the upstream's true count of message text against cl100k_base, default 1.1),
# TG_COPILOT_TURNS (default 10), TG_COPILOT_TIMEOUT_MS (the whole host run, default 300000),
# TG_COPILOT_UPSTREAM_WINDOW (the upstream's window if not WINDOW: set it lower to see the suite fail),
# TG_COPILOT_TRACE (a file: write each agent turn's provideTokenCount inputs there as JSON; the source of
# bench/data/copilot-count-trace.json.gz, see bench/count_compare.sh).
# The upstream's requests end up in /tmp/tg-copilot-test.*/requests.json (printed at the end).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${TG_PYTHON:-$REPO/.venv/bin/python}
WINDOW=${TG_COPILOT_WINDOW:-36000}
TURNS=${TG_COPILOT_TURNS:-10}
SCALE=${TG_COPILOT_SCALE:-1.1}
UPSTREAM_WINDOW=${TG_COPILOT_UPSTREAM_WINDOW:-$WINDOW}   # smaller than WINDOW: the suite must fail
TIMEOUT=${TG_COPILOT_TIMEOUT_MS:-300000}
TRACE=${TG_COPILOT_TRACE:-}
[ -z "$TRACE" ] || TRACE=$(realpath -m "$TRACE")
MODEL=gpt-4o
KEY=sk-tg-copilot-test-0123456789

bash scripts/vscode-host/setup.sh > /dev/null || { echo "vscode-host setup failed"; echo "0 passed, 1 failed"; exit 1; }
build=$(npm run --silent build 2>&1) || { echo "$build"; echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

WORK=$(mktemp -d /tmp/tg-copilot-test.XXXXXX)
# The true tokenizer differs from tokengauge's (cl100k_base against gpt-4o's o200k_base, message text
# scaled by SCALE, 5 hidden tokens per message, 3 per request), and the window (prompt + max_tokens) is
# enforced with OpenAI's real overflow error. tokengauge's window is the same: maxInputTokens =
# WINDOW − 4096, Copilot's agent budget floor((maxInputTokens − ~14k of tools) × 0.9).
# Every answer carries <summary> tags, so Copilot's background compaction (which needs them) succeeds too.
REPLY='Reviewed. <summary>The user shared code, logs and JSON for review; each was acknowledged.</summary>'
UPSTREAM_CONFIG=$(printf '{"reply": {"text": "%s"}, "model": {"encoding": "cl100k_base", "scale": %s, "per_message_overhead": 5, "fixed_overhead": 3, "context_window": %d, "require_api_key": "%s"}}' "$REPLY" "$SCALE" "$UPSTREAM_WINDOW" "$KEY")
"$PY" -m tests.upstream.server --port 0 --config "$UPSTREAM_CONFIG" > "$WORK/upstream.out" 2> "$WORK/upstream.err" &
UPSTREAM_PID=$!
trap 'kill "$UPSTREAM_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$WORK/upstream.out" ] && break; sleep 0.1; done
URL=$(head -n 1 "$WORK/upstream.out")
[ -n "$URL" ] || { echo "test upstream did not start:"; cat "$WORK/upstream.err"; echo "0 passed, 1 failed"; exit 1; }

# COPILOT.md's settings (anonymous access is what lets Copilot run headless), then tokengauge's.
cat > "$WORK/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "chat.allowAnonymousAccess": true,
  "chat.agent.enabled": true,
  "chat.tools.global.autoApprove": true,
  "chat.byokUtilityModelDefault": "mainAgent",
  "tokenGauge.pythonPath": "$PY",
  "tokenGauge.logLevel": "debug",
  "tokenGauge.providers": [
    {"id": "test-openai", "dialect": "openai", "baseUrl": "$URL/v1", "discover": false}
  ],
  "tokenGauge.models": [
    {"id": "$MODEL", "provider": "test-openai", "name": "GPT-4o (small test window)", "contextWindow": $WINDOW, "maxOutputTokens": 4096}
  ]
}
JSON
ENVJSON=$(printf '{"TG_HOST_SUITE": "copilot", "TG_PYTHON": "%s", "TG_REPO": "%s", "TG_UPSTREAM": "%s", "TG_COPILOT_MODEL": "%s", "TG_COPILOT_PROVIDER": "test-openai", "TG_COPILOT_API_KEY": "%s", "TG_COPILOT_WINDOW": "%s", "TG_COPILOT_TURNS": "%s", "TG_COPILOT_DUMP": "%s", "TG_COPILOT_TRACE": "%s", "TG_HOST_TEST_TIMEOUT_MS": "120000"}' \
    "$PY" "$REPO" "$URL" "$MODEL" "$KEY" "$UPSTREAM_WINDOW" "$TURNS" "$WORK/requests.json" "$TRACE")

T0=$EPOCHREALTIME
bash scripts/vscode-host/run-ext-tests.sh . extension/test/host/index.js "$ENVJSON" \
    --settings "$WORK/settings.json" --timeout "$TIMEOUT" 2>&1 | tee "$WORK/run.log"
rc=${PIPESTATUS[0]}
# The suite prints `N passed, N failed` itself; a run that died first (timeout, driver error) did not.
grep -qE '[0-9]+ passed, [0-9]+ failed$' "$WORK/run.log" || echo "0 passed, 1 failed"
echo "== copilot suite: exit code $rc in $(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}') s; upstream requests and logs in $WORK"
exit "$rc"
