// Prints the Copilot suite's figures per skew (scripts/test-copilot.sh writes one JSON per skew):
// the model's toolDocs and the tools' true tokens per request,
// failed turns, overflows, summarizations with the fill of the request before each, the largest
// request, and how far Copilot's sum of our answers and tokengauge's estimate were from the true
// size (ratio to true; p50 and the worst under-count, and the estimate's p95 |error| after turn 3).
'use strict';
const fs = require('fs');

const quantile = (values, q) => {
    const sorted = values.filter((v) => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
    return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
};
const fixed = (x, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

const header = ['skew', 'tool docs', 'tools/request p50 (max)', 'failed turns', 'requests', 'overflows', 'summarizations', 'fill before each',
    'messages before each (k)', 'largest fill', 'copilot/true p50 (min)', 'estimate/true p50 (min)', 'estimate |err| p95 after turn 3'];
const rows = process.argv.slice(2).map((file) => {
    const r = JSON.parse(fs.readFileSync(file, 'utf8'));
    const late = r.rows.filter((row) => row.turn > 3 && row.estimate).map((row) => Math.abs(row.estimate / row.true - 1));
    return [
        String(r.skew),
        r.toolDocs || 'full',
        `${quantile(r.toolTokens || [], 0.5) || '-'} (${Math.max(0, ...(r.toolTokens || [])) || '-'})`,
        `${r.failedTurns} of ${r.turns}`,
        String(r.requests),
        String(r.overflows),
        r.summaries.map((s) => s.kind[0]).join('') || '0',
        r.summaries.map((s) => fixed(s.fill, 2)).join(' ') || '-',
        r.summaries.map((s) => fixed((s.messages || 0) / 1000, 1)).join(' ') || '-',
        fixed(r.largestFill, 2),
        `${fixed(quantile(r.copilotOverTrue, 0.5))} (${fixed(quantile(r.copilotOverTrue, 0))})`,
        `${fixed(quantile(r.estimateOverTrue, 0.5))} (${fixed(quantile(r.estimateOverTrue, 0))})`,
        late.length ? `${(100 * quantile(late, 0.95)).toFixed(1)}%` : '-',
    ];
});
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
console.log(line(header));
console.log(line(widths.map((w) => '-'.repeat(w))));
rows.forEach((row) => console.log(line(row)));
console.log('summarizations: f foreground, b background compaction; fill = true prompt tokens / window');
