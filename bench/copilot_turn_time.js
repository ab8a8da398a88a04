// The real Copilot agent's turn wall time through each provider, from the Copilot suite's result
// files (scripts/test-copilot.sh with TG_COPILOT_RESULTS; bench/copilot_turn_time.sh runs them):
//
//   node bench/copilot_turn_time.js RESULT.json ...
//
// Per provider (the result's vendor): every run's turns, the time of each turn as the suite
// measured it (the chat request sent → Copilot's answer complete), and the same less the upstream
// time of the turn's foreground summarizations (a summarization tokengauge makes in time, when the
// window fills, is a request the other provider may not make at that turn). Prints per turn the
// median over runs, the sums per run, tokengauge's median sum over each other provider's, and
// tokengauge's server RSS after each session.
'use strict';
const fs = require('fs');
const { table } = require('../scripts/markdown-table');

const median = (xs) => {
    const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
    return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};
const fmt = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '-');

function main(files) {
    if (!files.length) {
        console.error('usage: node bench/copilot_turn_time.js RESULT.json ...');
        return 2;
    }
    const byVendor = new Map();
    for (const file of files) {
        const r = JSON.parse(fs.readFileSync(file, 'utf8'));
        const runs = byVendor.get(r.vendor) || [];
        runs.push({ file, turns: r.turnsDetail || [], ok: r.turnsOk, of: r.turns, memory: r.serverMemory });
        byVendor.set(r.vendor, runs);
    }
    // tokengauge first: the ratios are its time over the other's.
    const vendors = [...byVendor.keys()].sort((a, b) => (b === 'tokengauge') - (a === 'tokengauge') || a.localeCompare(b));
    const turns = Math.max(...[...byVendor.values()].flat().map((run) => run.turns.length));
    const at = (vendor, t, less) => byVendor.get(vendor).map((run) => {
        const turn = run.turns.find((x) => x.turn === t);
        return turn && !turn.error ? turn.ms - (less ? turn.summaryMs || 0 : 0) : NaN;
    });
    const rows = [];
    for (let t = 1; t <= turns; t++) {
        const cells = [t];
        for (const v of vendors) cells.push(fmt(median(at(v, t, false))), fmt(median(at(v, t, true))));
        const summarized = vendors.map((v) => byVendor.get(v).filter((run) => (run.turns.find((x) => x.turn === t) || {}).summaryMs > 0).length);
        cells.push(summarized.join(' / '));
        rows.push(cells);
    }
    const sums = (v, less) => byVendor.get(v).map((run) => run.turns.reduce((s, x) => s + x.ms - (less ? x.summaryMs || 0 : 0), 0));
    const totals = ['all turns, median of the runs\' sums'];
    for (const v of vendors) totals.push(fmt(median(sums(v, false))), fmt(median(sums(v, true))));
    totals.push('');
    rows.push(totals);
    console.log(`agent turn wall time in ms, median of ${vendors.map((v) => `${byVendor.get(v).length} ${v} runs`).join(', ')}`);
    table(['turn', ...vendors.flatMap((v) => [`${v}`, `${v} less summaries`]), 'runs that summarized'], rows);
    for (const v of vendors) {
        console.log(`${v}: runs' sums ${sums(v, false).map((x) => fmt(x)).join(', ')} ms; less summaries ${sums(v, true).map((x) => fmt(x)).join(', ')} ms; ` +
            `turns answered ${byVendor.get(v).map((run) => `${run.ok}/${run.of}`).join(', ')}`);
    }
    for (const v of vendors) {
        const memory = byVendor.get(v).map((run) => run.memory).filter(Boolean);
        if (memory.length) {
            console.log(`${v}: the server's RSS after the session ${memory.map((m) => fmt(m.rssMiB, 1)).join(', ')} MiB ` +
                `(peak ${memory.map((m) => fmt(m.peakMiB, 1)).join(', ')})`);
        }
    }
    const [first, ...others] = vendors;
    for (const v of others) {
        console.log(`${first} / ${v}: ${fmt(median(sums(first, false)) / median(sums(v, false)), 3)}× all turns; ` +
            `${fmt(median(sums(first, true)) / median(sums(v, true)), 3)}× less the summarizations`);
    }
    return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
