// The count trace: what Copilot Chat asked provideTokenCount during agent turns, as ARCHITECTURE §3 JSON
// (strings, and messages `{role, name?, content: Part[]}`), in call order.
//
// The Copilot host suite writes it with every input inline (TG_COPILOT_TRACE, format
// `tokengauge-count-trace/1`: `turns: [{turn, summarized, inputs, dropped}]`). The copy kept in
// bench/data stores each distinct input once (format `tokengauge-count-trace/1-indexed`:
// `inputs: [...]`, `turns: [{turn, summarized, calls: [index, ...]}]`), gzipped. `load` reads both.
//
//   node bench/count_compare/trace.js SUITE_TRACE.json OUT.json.gz [--turns 1-3]   # make the kept copy
//   node bench/count_compare/trace.js OUT.json.gz                                  # describe a trace
'use strict';
const fs = require('fs');
const zlib = require('zlib');

const INDEXED = 'tokengauge-count-trace/1-indexed';

/** The trace at `file` (.json or .json.gz), with every turn's `inputs` in call order. */
function load(file) {
    let bytes = fs.readFileSync(file);
    if (file.endsWith('.gz')) bytes = zlib.gunzipSync(bytes);
    const trace = JSON.parse(bytes.toString('utf8'));
    if (trace.format === INDEXED) {
        trace.turns = trace.turns.map(({ calls, ...turn }) => ({ ...turn, inputs: calls.map((i) => trace.inputs[i]) }));
        delete trace.inputs;
    }
    if (!Array.isArray(trace.turns) || trace.turns.some((t) => !Array.isArray(t.inputs))) {
        throw new Error(`${file}: not a count trace`);
    }
    return trace;
}

/** The trace with each distinct input stored once. */
function indexed(trace) {
    const inputs = [];
    const index = new Map();
    const turns = trace.turns.map(({ inputs: calls, ...turn }) => ({
        ...turn,
        calls: calls.map((input) => {
            const key = JSON.stringify(input);
            if (!index.has(key)) {
                index.set(key, inputs.length);
                inputs.push(input);
            }
            return index.get(key);
        }),
    }));
    return { ...trace, format: INDEXED, inputs, turns };
}

/** Per turn: calls, strings and messages (with distinct counts and characters), and repeats. */
function describe(trace) {
    const seen = new Set();
    return trace.turns.map((turn) => {
        const keys = turn.inputs.map((x) => (typeof x === 'string' ? `s${x}` : `m${JSON.stringify(x)}`));
        const strings = turn.inputs.filter((x) => typeof x === 'string');
        const messages = turn.inputs.filter((x) => typeof x !== 'string');
        const distinct = new Set(keys);
        const fresh = [...distinct].filter((k) => !seen.has(k)).length;
        const repeated = keys.filter((k) => seen.has(k)).length;
        distinct.forEach((k) => seen.add(k));
        return {
            turn: turn.turn,
            summarized: !!turn.summarized,
            calls: turn.inputs.length,
            strings: strings.length,
            distinctStrings: new Set(strings).size,
            stringChars: strings.reduce((a, s) => a + s.length, 0),
            messages: messages.length,
            distinctMessages: new Set(messages.map((m) => JSON.stringify(m))).size,
            messageChars: messages.reduce((a, m) => a + JSON.stringify(m).length, 0),
            newInputs: fresh,
            callsSeenInEarlierTurns: repeated,
        };
    });
}

function parseTurns(spec, count) {
    if (!spec) return null;
    const [a, b] = spec.split('-').map(Number);
    if (!(a >= 1 && (b === undefined || b >= a) && (b || a) <= count)) throw new Error(`bad --turns ${spec}`);
    return [a, b || a];
}

if (require.main === module) {
    const args = process.argv.slice(2);
    const turnsAt = args.indexOf('--turns');
    const spec = turnsAt >= 0 ? args.splice(turnsAt, 2)[1] : undefined;
    const [input, output] = args;
    if (!input) {
        console.error('usage: trace.js SUITE_TRACE.json [OUT.json.gz] [--turns A-B]');
        process.exit(64);
    }
    const trace = load(input);
    const range = parseTurns(spec, trace.turns.length);
    if (range) trace.turns = trace.turns.slice(range[0] - 1, range[1]);
    for (const row of describe(trace)) console.log(JSON.stringify(row));
    if (output) {
        const json = JSON.stringify(indexed(trace));
        const gz = zlib.gzipSync(json, { level: 9 });
        fs.writeFileSync(output, gz);
        console.log(`${output}: ${trace.turns.length} turns, ${json.length} bytes of JSON, ${gz.length} gzipped`);
    }
}

module.exports = { load, indexed, describe };
