#!/usr/bin/env bash
# The real GitHub Copilot Chat (built into code-server 1.139) drives tokengauge in agent mode against
# the test upstream (shared/vscode-host/COPILOT.md), once per tokenizer skew: 12 turns of 4–6k true
# tokens each (code, logs, JSON, prose, CJK), some with tool-call rounds that make Copilot read large
# workspace files, in a window small enough that Copilot must summarize. The upstream's true count is
# `ENCODING × skew` for message text and for the tools' JSON, + OVERHEAD per message, + 3; a request
# over the window gets Anthropic's real "prompt is too long" error. tokengauge counts the model as
# family FAMILY (cl100k_base for claude-*). Suite: extension/test/host/copilot. Ends with the plain
# `N passed, N failed` line for all skews and a table of the figures per skew (docs/BENCHMARKS.md).
# Scenarios (extension/test/host/copilot/content.js): standard; large, every third turn from the
# first a pasted service log of 5,000+ o200k tokens in 150+ lines; shifting, prose and CJK then code and logs, which
# the upstream counts at 0.9 and 1.4 × ENCODING (its scale_rules; the rest at the skew).
# Env: TG_PYTHON (the server's and the upstream's Python, default .venv/bin/python),
# TG_COPILOT_SKEWS (the runs, default "0.6 1.0 1.3 1.6 1.8 1.6/progressive large@1.6 large@1.8
# shifting@1.0", about 1 min each: [scenario@]skew[/toolDocs], the scenario standard unless named, the
# model's toolDocs TG_COPILOT_TOOL_DOCS unless named), TG_COPILOT_ENCODING (default o200k_base),
# TG_COPILOT_OVERHEAD (true tokens per message, default 7), TG_COPILOT_WINDOW (default 40000),
# TG_COPILOT_OUTPUT (maxOutputTokens, default 4096), TG_COPILOT_FAMILY (default claude-sonnet-4),
# TG_COPILOT_TURNS (default 12), TG_COPILOT_TOOL_DOCS (the model's toolDocs: full, the default,
# progressive or minimal), TG_COPILOT_TIMEOUT_MS (one skew's host run, default 600000),
# TG_COPILOT_RESULTS (a directory: keep each run's figures there as skew-<skew>[-toolDocs][-scenario]
# [-counter].json),
# TG_COPILOT_TRACE (a file: write each agent turn's provideTokenCount inputs there as JSON, for the first
# skew only; the source of bench/data/copilot-count-trace.json.gz, see bench/count_compare.sh),
# DRIVE_SCREENSHOTS (a directory: the workbench after every turn, as PNG),
# TG_COPILOT_COUNTER (tokengauge, the default; baseline: the same runs through an in-process o200k
# provider written as GCMP's, bench/copilot_baseline; customendpoint: through VS Code's built-in
# Custom Endpoint provider (Copilot's BYOK, counting o200k), its model id the family, window and
# output the same; both for docs/BENCHMARKS.md, comparisons, not tests).
# Each skew's upstream requests end up in /tmp/tg-copilot-test.*/requests.json (printed at the end).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${TG_PYTHON:-$REPO/.venv/bin/python}
SKEWS=${TG_COPILOT_SKEWS:-0.6 1.0 1.3 1.6 1.8 1.6/progressive large@1.6 large@1.8 shifting@1.0}
ENCODING=${TG_COPILOT_ENCODING:-o200k_base}
OVERHEAD=${TG_COPILOT_OVERHEAD:-7}
WINDOW=${TG_COPILOT_WINDOW:-40000}
OUTPUT=${TG_COPILOT_OUTPUT:-4096}
FAMILY=${TG_COPILOT_FAMILY:-claude-sonnet-4}
TURNS=${TG_COPILOT_TURNS:-12}
DEFAULT_TOOL_DOCS=${TG_COPILOT_TOOL_DOCS:-full}
TIMEOUT=${TG_COPILOT_TIMEOUT_MS:-600000}
TRACE=${TG_COPILOT_TRACE:-}
[ -z "$TRACE" ] || TRACE=$(realpath -m "$TRACE")
RESULTS=${TG_COPILOT_RESULTS:-}
COUNTER=${TG_COPILOT_COUNTER:-tokengauge}
MODEL=sim
KEY=sk-tg-copilot-test-0123456789

bash scripts/vscode-host/setup.sh > /dev/null || { echo "vscode-host setup failed"; echo "0 passed, 1 failed"; exit 1; }
build=$(npm run --silent build 2>&1) || { echo "$build"; echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
# The development extension runs its bundled server package: make it the working tree's.
"$PY" scripts/bundle_libs.py --refresh-server || { echo "bundle refresh failed"; echo "0 passed, 1 failed"; exit 1; }
[ -z "$RESULTS" ] || mkdir -p "$RESULTS"

# Every answer carries <summary> tags, so Copilot's background compaction (which needs them) succeeds too.
REPLY='Reviewed. <summary>The user shared code, logs, JSON, prose and CJK text for review, and files were read; each was acknowledged.</summary>'

with_env() {  # ENVJSON with these KEY=VALUE pairs added
    printf '%s' "$ENVJSON" | "$PY" -c 'import json,sys; e=json.load(sys.stdin); e.update(a.split("=", 1) for a in sys.argv[1:]); print(json.dumps(e))' "$@"
}

passed=0; failed=0; status=0; tables=()
for RUN in $SKEWS; do
    ENTRY=$RUN
    SCENARIO=standard
    case "$RUN" in *@*) SCENARIO=${RUN%%@*}; RUN=${RUN#*@};; esac
    SKEW=${RUN%%/*}
    TOOL_DOCS=$DEFAULT_TOOL_DOCS
    [ "$RUN" = "$SKEW" ] || TOOL_DOCS=${RUN#*/}
    NAME=$SKEW
    [ "$TOOL_DOCS" = full ] || NAME=$NAME-$TOOL_DOCS
    [ "$SCENARIO" = standard ] || NAME=$NAME-$SCENARIO
    [ "$COUNTER" = tokengauge ] || NAME=$NAME-$COUNTER
    WORK=$(mktemp -d /tmp/tg-copilot-test.XXXXXX)
    # The scenario's content scales (the suite sizes its content by the same rules).
    RULES=$(node -e 'process.stdout.write(JSON.stringify(require(process.argv[1]).scaleRules(process.argv[2])))' \
        "$REPO/extension/test/host/copilot/content.js" "$SCENARIO") || { echo "unknown scenario $SCENARIO"; failed=$((failed + 1)); status=1; continue; }
    # check_max_tokens stays on (the model's default): prompt + max_tokens over the window is refused too.
    UPSTREAM_CONFIG=$(printf '{"reply": {"text": "%s", "scripted_calls": true}, "model": {"encoding": "%s", "scale": %s, "scale_rules": %s, "tool_scale": %s, "per_message_overhead": %s, "fixed_overhead": 3, "context_window": %d, "check_max_tokens": true, "error_style": "anthropic", "require_api_key": "%s"}}' \
        "$REPLY" "$ENCODING" "$SKEW" "$RULES" "$SKEW" "$OVERHEAD" "$WINDOW" "$KEY")
    "$PY" -m tests.harness.fake_upstream.server --port 0 --config "$UPSTREAM_CONFIG" > "$WORK/upstream.out" 2> "$WORK/upstream.err" &
    UPSTREAM_PID=$!
    trap 'kill "$UPSTREAM_PID" 2>/dev/null || true' EXIT
    for _ in $(seq 1 100); do [ -s "$WORK/upstream.out" ] && break; sleep 0.1; done
    URL=$(head -n 1 "$WORK/upstream.out")
    if [ -z "$URL" ]; then
        echo "test upstream did not start:"; cat "$WORK/upstream.err"
        failed=$((failed + 1)); status=1; continue
    fi

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
    {"id": "$MODEL", "provider": "test-openai", "name": "Sim", "family": "$FAMILY", "contextWindow": $WINDOW, "maxOutputTokens": $OUTPUT, "toolDocs": "$TOOL_DOCS"}
  ]
}
JSON
    trace=""
    [ "$ENTRY" = "${SKEWS%% *}" ] && trace=$TRACE
    ENVJSON=$(printf '{"TG_HOST_SUITE": "copilot", "TG_PYTHON": "%s", "TG_REPO": "%s", "TG_UPSTREAM": "%s", "TG_COPILOT_MODEL": "%s", "TG_COPILOT_PROVIDER": "test-openai", "TG_COPILOT_API_KEY": "%s", "TG_COPILOT_WINDOW": "%s", "TG_COPILOT_OUTPUT": "%s", "TG_COPILOT_TURNS": "%s", "TG_COPILOT_SKEW": "%s", "TG_COPILOT_SCENARIO": "%s", "TG_COPILOT_TOOL_DOCS": "%s", "TG_COPILOT_ENCODING": "%s", "TG_COPILOT_DUMP": "%s", "TG_COPILOT_RESULT": "%s", "TG_COPILOT_TRACE": "%s", "DRIVE_SCREENSHOTS": "%s", "TG_HOST_TEST_TIMEOUT_MS": "120000"}' \
        "$PY" "$REPO" "$URL" "$MODEL" "$KEY" "$WINDOW" "$OUTPUT" "$TURNS" "$SKEW" "$SCENARIO" "$TOOL_DOCS" "$ENCODING" "$WORK/requests.json" "$WORK/result.json" "$trace" "${DRIVE_SCREENSHOTS:-}")

    extra=()
    if [ "$COUNTER" = baseline ]; then  # the baseline provider as an installed VSIX
        mkdir -p "$WORK/baseline" && cp -r bench/copilot_baseline "$WORK/baseline/extension"
        (cd "$WORK/baseline" && "$PY" -m zipfile -c baseline.vsix extension) || exit 1
        extra=(--install-vsix "$WORK/baseline/baseline.vsix")
        ENVJSON=$(with_env TG_COPILOT_VENDOR=tg-baseline TG_COPILOT_UPSTREAM_WINDOW="$WINDOW")
    elif [ "$COUNTER" = customendpoint ]; then  # configured by the suite once Copilot is active
        ENVJSON=$(with_env TG_COPILOT_VENDOR=customendpoint TG_COPILOT_MODEL="$FAMILY")
    elif [ "$COUNTER" != tokengauge ]; then
        echo "unknown TG_COPILOT_COUNTER $COUNTER"; echo "0 passed, 1 failed"; exit 1
    fi
    echo "== copilot suite ($COUNTER, scenario $SCENARIO): true tokenizer $ENCODING × $SKEW + $OVERHEAD/message, window $WINDOW, output $OUTPUT, family $FAMILY, toolDocs $TOOL_DOCS"
    T0=$EPOCHREALTIME
    bash scripts/vscode-host/run-ext-tests.sh . extension/test/host/index.js "$ENVJSON" \
        --settings "$WORK/settings.json" --timeout "$TIMEOUT" ${extra[@]+"${extra[@]}"} 2>&1 | tee "$WORK/run.log"
    rc=${PIPESTATUS[0]}
    kill "$UPSTREAM_PID" 2>/dev/null || true
    line=$(grep -oE '[0-9]+ passed, [0-9]+ failed$' "$WORK/run.log" | tail -n 1)
    if [ -z "$line" ]; then  # the run died before the suite's own tally (timeout, driver error)
        failed=$((failed + 1))
    else
        passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
        failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
    fi
    [ "$rc" -eq 0 ] || status=1
    [ -z "$RESULTS" ] || { [ -f "$WORK/result.json" ] && cp "$WORK/result.json" "$RESULTS/skew-$NAME.json"; }
    [ -f "$WORK/result.json" ] && tables+=("$WORK/result.json")
    echo "== copilot suite ($COUNTER, skew $SKEW, toolDocs $TOOL_DOCS, scenario $SCENARIO): exit code $rc in $(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}') s; upstream requests and logs in $WORK"
done
[ "${#tables[@]}" -eq 0 ] || node scripts/copilot-table.js "${tables[@]}"
echo "copilot suites (skews $SKEWS):"
echo "$passed passed, $failed failed"
exit "$status"
