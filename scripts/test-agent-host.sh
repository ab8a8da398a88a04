#!/usr/bin/env bash
# The Agents window's runtime, for real: the Copilot runtime through VS Code 1.139.1's bridge (the
# test extension extension/test/agent-host) to the installed tokengauge VSIX, against the test
# upstream, everything in one loopback-only network namespace. Suite: extension/test/host/agent-host
# (one session per runtime and skew; ARCHITECTURE §1 has how the runtime meters and
# compacts). Runtimes: VS Code 1.139.1's own (code-server's `@github/copilot-sdk-linux-x64`, runtime
# 1.0.85) and the Copilot CLI's (1.0.102), both from npm (scripts/vscode-host/setup.sh installs the
# CLI and the SDK; nothing of them is committed). The upstream holds a true window of WINDOW and
# counts `cl100k_base × skew` (messages and tools). Ends with the plain `N passed, N failed` line and
# a table of the figures per session (docs/BENCHMARKS.md, Step 20).
# Env: TG_PYTHON (the upstream's Python, default .venv/bin/python), TG_VSIX_PYTHON (the Python the
# installed VSIX runs on, default /usr/bin/python3), TG_AGENT_HOST_SKEWS (default "0.75 1.0 1.45 1.8
# 1.0:24000": skew[:the true window, when the declared one, WINDOW, is set too large]),
# TG_AGENT_HOST_RUNTIMES (default "vscode cli"), TG_AGENT_HOST_TURNS (default 14),
# TG_AGENT_HOST_PASSES (default "cold warm": each model's first session, then a second one),
# TG_AGENT_HOST_WINDOW (default 40000), TG_AGENT_HOST_OUTPUT (maxOutputTokens, default 4096),
# TG_AGENT_HOST_REASONING (a reasoning model's strict stand-in the runtimes also drive, four turns
# of tool calls: deepseek, the default, or another of reasoning.py's presets; empty: none),
# TG_AGENT_HOST_EVENTS (set: print the runtime's compaction, truncation, retry and error events),
# TG_AGENT_HOST_COUNTER (tokengauge, the default, asserted; customendpoint: the same sessions through
# VS Code's built-in Custom Endpoint, the true window declared, measured for docs/BENCHMARKS.md; both,
# "tokengauge customendpoint": one host run after the other against the same upstreams, one table).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TG_IN_NETNS:-}" ]; then  # the runtime must reach nothing but loopback
    if [ "$(id -u)" = 0 ]; then NS=(unshare --net); else NS=(unshare --user --map-root-user --net); fi
    exec "${NS[@]}" env TG_IN_NETNS=1 bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi
REPO=$PWD
PY=${TG_PYTHON:-$REPO/.venv/bin/python}
VSIX_PY=${TG_VSIX_PYTHON:-/usr/bin/python3}
SKEWS=${TG_AGENT_HOST_SKEWS:-0.75 1.0 1.45 1.8 1.0:24000}
RUNTIME_NAMES=${TG_AGENT_HOST_RUNTIMES:-vscode cli}
TURNS=${TG_AGENT_HOST_TURNS:-14}
PASSES=${TG_AGENT_HOST_PASSES:-cold warm}
WINDOW=${TG_AGENT_HOST_WINDOW:-40000}
OUTPUT=${TG_AGENT_HOST_OUTPUT:-4096}
COUNTERS=${TG_AGENT_HOST_COUNTER:-tokengauge}
REASONING=${TG_AGENT_HOST_REASONING-deepseek}
VSC_HOME=$(realpath "${VSC_HOME:-$HOME/.cache/vscode-host}")
VERSION=$(node -p 'require("./package.json").version')
VSIX=$REPO/tokengauge-$VERSION-$("$PY" scripts/bundle_libs.py --print-host-target).vsix  # this machine's
KEY=sk-tg-agent-host-test-0123456789

bash scripts/vscode-host/setup.sh > /dev/null || { echo "vscode-host setup failed"; echo "0 passed, 1 failed"; exit 1; }
[ -f "$VSIX" ] || { echo "no $VSIX: run scripts/build-vsix.sh (scripts/setup.sh does)"; echo "0 passed, 1 failed"; exit 1; }
RUNTIMES=()
for name in $RUNTIME_NAMES; do
    case "$name" in
        vscode) RUNTIMES+=("{\"name\": \"VS Code 1.139.1 (1.0.85)\", \"takesUsage\": false, \"path\": \"$VSC_HOME/cs/node_modules/code-server/lib/vscode/node_modules/@github/copilot-sdk-linux-x64/prebuilds/linux-x64/copilot-runtime\"}");;
        cli) RUNTIMES+=("{\"name\": \"Copilot CLI 1.0.102\", \"takesUsage\": true, \"path\": \"$VSC_HOME/copilot/node_modules/@github/copilot-linux-x64/copilot\"}");;
        *) echo "unknown runtime $name"; echo "0 passed, 1 failed"; exit 1;;
    esac
done
WORK=$(mktemp -d /tmp/tg-agent-host-test.XXXXXX)
mkdir -p "$WORK/bridge" && cp -r extension/test/agent-host "$WORK/bridge/extension"

PIDS=() RUNS=() PROVIDERS=() MODELS=()
trap 'kill ${PIDS[*]} 2>/dev/null || true' EXIT
for SPEC in $SKEWS; do
    SKEW=${SPEC%%:*} TRUE_WINDOW=$WINDOW
    [ "$SPEC" = "$SKEW" ] || TRUE_WINDOW=${SPEC#*:}
    CONFIG=$(printf '{"reply": {"text": "Read it: notes of the project.", "scripted_calls": true}, "model": {"encoding": "cl100k_base", "scale": %s, "tool_scale": %s, "context_window": %s, "require_api_key": "%s", "prompt_cache": true}}' \
        "$SKEW" "$SKEW" "$TRUE_WINDOW" "$KEY")
    "$PY" -m tests.harness.fake_upstream.server --port 0 --config "$CONFIG" > "$WORK/up-$SKEW.out" 2> "$WORK/up-$SKEW.err" &
    PIDS+=($!)
    for _ in $(seq 1 100); do [ -s "$WORK/up-$SKEW.out" ] && break; sleep 0.1; done
    URL=$(head -n 1 "$WORK/up-$SKEW.out")
    [ -n "$URL" ] || { echo "test upstream did not start:"; cat "$WORK/up-$SKEW.err"; echo "0 passed, 1 failed"; exit 1; }
    PROVIDER=skew-${SKEW//./-}; [ "$TRUE_WINDOW" = "$WINDOW" ] || PROVIDER=$PROVIDER-true-$TRUE_WINDOW
    # One model per runtime, so that each session starts cold (nothing learned of its model yet).
    for i in "${!RUNTIMES[@]}"; do
        MODELS+=("{\"id\": \"notes-$PROVIDER-r$i\", \"provider\": \"$PROVIDER\", \"contextWindow\": $WINDOW, \"maxOutputTokens\": $OUTPUT}")
    done
    RUNS+=("{\"skew\": $SKEW, \"model\": \"notes-$PROVIDER\", \"provider\": \"$PROVIDER\", \"upstream\": \"$URL\", \"window\": $WINDOW, \"trueWindow\": $TRUE_WINDOW, \"output\": $OUTPUT}")
    PROVIDERS+=("{\"id\": \"$PROVIDER\", \"preset\": \"openai-compatible\", \"baseUrl\": \"$URL/v1\", \"discover\": false}")
done
REASONING_RUN=
if [ -n "$REASONING" ]; then  # a reasoning model's strict stand-in (tests/harness/fake_upstream/reasoning.py)
    THOUGHT='The notes repeat themselves; reading them shows where.'
    CONFIG=$(printf '{"reply": {"text": "Read them.", "thinking": "%s", "scripted_calls": true}, "model": {"reasoning": "%s", "context_window": 128000, "require_api_key": "%s"}}' \
        "$THOUGHT" "$REASONING" "$KEY")
    "$PY" -m tests.harness.fake_upstream.server --port 0 --config "$CONFIG" > "$WORK/up-$REASONING.out" 2> "$WORK/up-$REASONING.err" &
    PIDS+=($!)
    for _ in $(seq 1 100); do [ -s "$WORK/up-$REASONING.out" ] && break; sleep 0.1; done
    URL=$(head -n 1 "$WORK/up-$REASONING.out")
    [ -n "$URL" ] || { echo "test upstream did not start:"; cat "$WORK/up-$REASONING.err"; echo "0 passed, 1 failed"; exit 1; }
    PROVIDERS+=("{\"id\": \"thinking-$REASONING\", \"preset\": \"$REASONING\", \"baseUrl\": \"$URL/v1\", \"discover\": false}")
    for i in "${!RUNTIMES[@]}"; do
        MODELS+=("{\"id\": \"thinks-r$i\", \"provider\": \"thinking-$REASONING\", \"contextWindow\": 128000, \"maxOutputTokens\": 8192}")
    done
    REASONING_RUN="{\"server\": \"$REASONING\", \"model\": \"thinks\", \"provider\": \"thinking-$REASONING\", \"upstream\": \"$URL\", \"thought\": \"$THOUGHT\"}"
fi
join() { local IFS=,; echo "$*"; }
cat > "$WORK/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "chat.allowAnonymousAccess": true,
  "chat.agent.enabled": true,
  "chat.byokUtilityModelDefault": "mainAgent",
  "tokenGauge.pythonPath": "$VSIX_PY",
  "tokenGauge.logLevel": "debug",
  "tokenGauge.providers": [$(join "${PROVIDERS[@]}")],
  "tokenGauge.models": [$(join "${MODELS[@]}")]
}
JSON
rc=0
: > "$WORK/run.log"; : > "$WORK/counts"
for COUNTER in $COUNTERS; do  # one host run each, the same upstreams and sessions
    ENVJSON=$("$PY" -c 'import json, sys; print(json.dumps({"TG_HOST_SUITE": "agent-host", "TG_AGENT_HOST_RUNS": sys.argv[1], "TG_AGENT_HOST_RUNTIMES": sys.argv[2], "TG_AGENT_HOST_VENDOR": sys.argv[3], "TG_AGENT_HOST_TURNS": sys.argv[4], "TG_AGENT_HOST_PASSES": sys.argv[8], "TG_AGENT_HOST_API_KEY": sys.argv[5], "TG_COPILOT_SDK": sys.argv[6], "TG_AGENT_HOST_CACHE": sys.argv[7], "TG_AGENT_HOST_EVENTS": sys.argv[9], "TG_AGENT_HOST_REASONING": sys.argv[10], "TG_HOST_TEST_TIMEOUT_MS": "900000"}))' \
        "[$(join "${RUNS[@]}")]" "[$(join "${RUNTIMES[@]}")]" "$COUNTER" "$TURNS" "$KEY" "$VSC_HOME/copilot/node_modules/@github/copilot-sdk" "$VSC_HOME/copilot" "$PASSES" "${TG_AGENT_HOST_EVENTS:-}" "$REASONING_RUN")
    echo "== agent-host suite ($COUNTER; runtimes: $RUNTIME_NAMES; skews: $SKEWS)"
    bash scripts/vscode-host/run-ext-tests.sh "$WORK/bridge/extension" extension/test/host/index.js "$ENVJSON" \
        --settings "$WORK/settings.json" --install-vsix "$VSIX" --timeout 1200000 2>&1 | tee "$WORK/run-$COUNTER.log"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    cat "$WORK/run-$COUNTER.log" >> "$WORK/run.log"
    grep -oE '[0-9]+ passed, [0-9]+ failed$' "$WORK/run-$COUNTER.log" | tail -n 1 >> "$WORK/counts"
done
grep -o 'agent-host-result {.*}' "$WORK/run.log" | cut -d' ' -f2- | node -e '
const { table } = require(process.argv[1]);
const text = require("fs").readFileSync(0, "utf8").trim();
const rows = text ? text.split("\n").map((line) => JSON.parse(line)) : [];
const share = (x) => x.toFixed(2);
table(["provider", "runtime", "skew", "true window", "storage", "turns ok", "requests", "overflows", "compactions (turn:trigger)", "our refusals", "runtime truncations", "requests with history cut", "tokens cut", "of tokens sent", "max true fill", "from cache", "compaction requests from cache"],
    rows.map((r) => [r.vendor, r.runtime, r.skew, r.trueWindow, r.pass, `${r.turnsOk}/${r.turns}`, r.requests, r.overflows,
        r.compactions.map((c) => `${c.turn}:${c.trigger}`).join(" ") || "0", r.refusals, r.truncations, r.historyCut, r.tokensCut,
        r.tokensSent ? `${(100 * r.tokensCut / r.tokensSent).toFixed(1)}%` : "-", r.maxFill.toFixed(2),
        r.tokensSent ? share(r.tokensCached / r.tokensSent) : "-", r.compactionsCached.map(share).join(" ") || "-"]));
' "$REPO/scripts/markdown-table.js"
grep -o 'agent-host-reasoning {.*}' "$WORK/run.log" | cut -d' ' -f2-
echo "agent-host suite: logs in $WORK"
awk '{p += $1; f += $3; n++} END {if (!n) f = 1; printf "%d passed, %d failed\n", p, f}' "$WORK/counts"
exit "$rc"
