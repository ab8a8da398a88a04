// A Markdown table on stdout, each column as wide as its widest cell: the figures the Copilot
// suite (scripts/copilot-table.js) and the turn-time bench (bench/copilot_turn_time.js) print.
'use strict';

function table(header, rows) {
    const cells = rows.map((row) => row.map(String));
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i].length)));
    const line = (row) => `| ${row.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
    console.log(line(header));
    console.log(line(widths.map((w) => '-'.repeat(w))));
    cells.forEach((row) => console.log(line(row)));
}

module.exports = { table };
