#!/usr/bin/env bash
# The real Copilot agent's turn wall time through tokengauge against VS Code's built-in Custom
# Endpoint, on the same upstream, scenario, window and turns (scripts/test-copilot.sh, skew 1.0, the
# standard scenario), RUNS runs of each, alternating, then the table of bench/copilot_turn_time.js.
#
#   bash bench/copilot_turn_time.sh [RUNS]     (default 3; one run of both ≈ 3 min)
#
# Asserts no time: it fails only when a run does not complete. Env: TG_PYTHON, TG_COPILOT_TURNS.
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
OUT=$(mktemp -d /tmp/tg-turn-time.XXXXXX)
status=0
for run in $(seq 1 "$RUNS"); do
    for counter in tokengauge customendpoint; do
        mkdir -p "$OUT/$counter-$run"
        # The suite's own checks may fail for the other provider (they are tokengauge's promises):
        # only a run that left no result fails this.
        TG_COPILOT_SKEWS=1.0 TG_COPILOT_COUNTER=$counter TG_COPILOT_RESULTS="$OUT/$counter-$run" \
            bash scripts/test-copilot.sh > "$OUT/$counter-$run.log" 2>&1
        ls "$OUT/$counter-$run"/*.json > /dev/null 2>&1 || { echo "run $run, $counter: no result" >&2; status=1; }
        echo "== run $run, $counter: $(grep -o 'exit code [0-9]* in [0-9.]* s' "$OUT/$counter-$run.log" | tail -1)"
    done
done
node bench/copilot_turn_time.js "$OUT"/*/*.json || status=1
echo "== logs and results in $OUT"
exit "$status"
