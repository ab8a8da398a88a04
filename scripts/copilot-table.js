// Prints the Copilot suite's figures per run (scripts/test-copilot.sh writes one JSON per run): the
// provider, scenario, skew and model's toolDocs; the tools' true tokens per request; turns that
// answered and failed; overflows (the prompt alone, or with its max_tokens, over the window);
// summarizations with the fill of the request before each (each, min and median, and where its
// tools went smaller the min and median as if they had gone whole, as the suite judges them); the
// largest request; the true ÷ o200k ratio of the requests' text; how far Copilot's sum of our
// answers and tokengauge's estimate were from the true size (ratio to true; p50 and the worst
// under-count, and the estimate's p95 |error| after turn 3); then, for tokengauge, what its recovery
// ladder removed per rung (tokens and requests), for the local scenarios (a local server that cuts a
// prompt over its loaded window without an error) what was cut and caught, and every failed turn's error.
'use strict';
const fs = require('fs');
const { table } = require('./markdown-table');

const RUNGS = ['toolResults', 'history', 'toolDocs', 'output', 'userMessage'];

const quantile = (values, q) => {
    const sorted = values.filter((v) => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
    return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
};
const fixed = (x, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
const median = (values) => {
    const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
    return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : NaN;
};

const minMedian = (values) => `${fixed(Math.min(...values), 2)} / ${fixed(median(values), 2)}`;

const runs = process.argv.slice(2).map((file) => JSON.parse(fs.readFileSync(file, 'utf8')));
const isLocal = (r) => String(r.scenario).startsWith('local');
const name = (r) => [r.vendor || 'tokengauge', r.scenario || 'standard', String(r.skew), r.toolDocs || 'full',
    ...(isLocal(r) ? [`loaded ${r.window}`] : [])].join(' ');

table(['run (provider scenario skew toolDocs)', 'tools/request p50 (max)', 'turns ok / failed', 'requests', 'overflows',
    'summarizations', 'fill before each', 'fill before min / median', 'messages before each (k)', 'largest fill',
    'true/o200k text p50 (min–max)', 'copilot/true p50 (min)', 'estimate/true p50 (min)', 'estimate |err| p95 after turn 3', 'seconds'],
runs.map((r) => {
    const late = r.rows.filter((row) => row.turn > 3 && row.estimate).map((row) => Math.abs(row.estimate / row.true - 1));
    const fills = r.summaries.map((s) => s.fill);
    const wholes = r.summaries.map((s) => s.fillWhole ?? s.fill);
    const ratios = (r.ratios || []).map((x) => x.text).filter(Number.isFinite);
    return [
        name(r),
        `${quantile(r.toolTokens || [], 0.5) || '-'} (${Math.max(0, ...(r.toolTokens || [])) || '-'})`,
        `${r.turnsOk ?? r.turns - r.failedTurns} / ${r.failedTurns}`,
        String(r.requests),
        String(r.overflows),
        r.summaries.map((s) => s.kind[0]).join('') || '0',
        fills.map((f) => fixed(f, 2)).join(' ') || '-',
        fills.length ? minMedian(fills) + (minMedian(wholes) === minMedian(fills) ? '' : ` (tools whole ${minMedian(wholes)})`) : '-',
        r.summaries.map((s) => fixed((s.messages || 0) / 1000, 1)).join(' ') || '-',
        fixed(r.largestFill, 2),
        ratios.length ? `${fixed(median(ratios), 2)} (${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)})` : '-',
        `${fixed(quantile(r.copilotOverTrue, 0.5))} (${fixed(quantile(r.copilotOverTrue, 0))})`,
        `${fixed(quantile(r.estimateOverTrue, 0.5))} (${fixed(quantile(r.estimateOverTrue, 0))})`,
        late.length ? `${(100 * quantile(late, 0.95)).toFixed(1)}%` : '-',
        r.seconds ? r.seconds.toFixed(0) : '-',
    ];
}));
console.log('summarizations: f foreground, b background compaction; fill = true prompt tokens / window; ' +
    'overflows: requests the upstream refused as over the window');

const laddered = runs.filter((r) => r.ladder);
if (laddered.length) {
    const rungs = [...new Set([...RUNGS, ...laddered.flatMap((r) => Object.keys(r.ladder.rungs))])];
    const cell = (t) => (t && t.requests ? `${t.tokens} (${t.requests})` : '0');
    console.log('');
    table(['run: recovery ladder, tokens removed (requests)', 'in all (trimmedTokens)', ...rungs],
        laddered.map((r) => [name(r), cell(r.ladder.trimmed), ...rungs.map((rung) => cell(r.ladder.rungs[rung]))]));
}

// The local scenarios: the window the server served, what VS Code was told (maxInputTokens at the
// start → the end), the largest request, and the requests the server cut: unnoticed (reached the model
// cut with nothing said) or caught (tokengauge's usage record marked cut).
const cutRange = (cut) => {
    if (!cut.length) return '-';
    const prompts = cut.map((t) => t.prompt);
    const reads = [...new Set(cut.map((t) => t.read))];
    return `${cut.length}: ${Math.min(...prompts)}–${Math.max(...prompts)} → ${reads.join('/')}`;
};
const local = runs.filter((r) => r.truncated && isLocal(r));
if (local.length) {
    console.log('');
    table(['run: local server', 'served window', 'VS Code told (start → end)', 'largest request', 'cut: unnoticed / caught',
        'cut requests: true tokens → read', 'summarizations'],
    local.map((r) => {
        const caught = Math.min((r.markedCut || []).length, r.truncated.length);
        return [name(r), (r.served || []).join(' ') || '-', `${r.told.start ?? '-'} → ${r.told.end ?? '-'}`, String(r.largest),
            `${r.truncated.length - caught} / ${caught}`,
            cutRange(r.truncated), String(r.summaries.length)];
    }));
}

// Copilot's message says "Sorry, your request failed…" first and the provider's error after "Reason:".
const reason = (message) => {
    const text = ((message || '').match(/Reason: (.*)/) || [null, message || ''])[1];
    return text.length > 240 ? `${text.slice(0, 240)}…` : text;
};
for (const r of runs) {
    for (const e of r.errors || []) console.log(`${name(r)}: turn ${e.turn} failed: ${reason(e.message)}`);
}
