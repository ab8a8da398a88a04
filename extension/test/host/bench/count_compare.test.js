// The counting benchmark inside a real VS Code (started by bench/count_compare.sh): a recorded
// Copilot Chat agent-mode trace (bench/data/copilot-count-trace.json.gz, turns 1–3 of the Copilot
// host suite) replayed strictly one call at a time, as Copilot calls, through
//   tokengauge   the extension's own provider (memo, batching) → vscode-languageclient → the Python server;
//   baseline     js-tiktoken o200k_base with a 5000-entry LRU in this extension host, counting like GCMP
//                (bench/count_compare/baseline.js), registered for the vendor `tg-baseline`;
//   gcmp         the same, with GCMP's top-level strings uncached as GCMP's code has it.
// Each is timed two ways: calling the provider object (`provider`), and through `vscode.lm` with the
// model fetched once (`lm`, as Copilot calls: VS Code 1.139 hands `countTokens` to a provider in the
// same extension host directly, so this adds only the API's wrapper, no renderer round trip).
// A tokengauge session starts a new server (tokenGauge.restartServer): "cold" empties the memo too,
// "restart" keeps what the server's warmCounts put back (a second VS Code session). A baseline
// session is a new LRU. Each session replays turn 1 (cold), turn 2 and turn 3 (the next turns) and
// turn 1 again; restart sessions replay turn 1. Also: large single texts, server start to first
// answer, memory. Results go to $TG_BENCH_OUT (JSON) for bench/count_compare/report.js to print.
// Nothing about time is asserted; the suite fails only if counting breaks.
'use strict';
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const vscode = require('vscode');

const REPO = process.env.TG_REPO;
const TRACE = process.env.TG_BENCH_TRACE || path.join(REPO || '.', 'bench/data/copilot-count-trace.json.gz');
const OUT = process.env.TG_BENCH_OUT;
const REPS = +(process.env.TG_BENCH_REPS || 7);
const MODEL = process.env.TG_BENCH_MODEL || 'gpt-4o';
const VIAS = (process.env.TG_BENCH_VIA || 'provider lm').split(/[\s,]+/).filter(Boolean);
const LARGE = [['100 KB', 100 * 1024, 5], ['1 MB', 1024 * 1024, 3]]; // label, characters, repetitions
const BASELINE_VENDOR = 'tg-baseline';

const { load, describe: describeTrace } = require(path.join(REPO || '.', 'bench/count_compare/trace.js'));
const { BaselineCounter, loadEncoder, baselineProvider } = require(path.join(REPO || '.', 'bench/count_compare/baseline.js'));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;
const token = new vscode.CancellationTokenSource().token;

// ---- the trace as VS Code objects -----------------------------------------------------------------

function part(p) {
    switch (p.type) {
        case 'text': return new vscode.LanguageModelTextPart(p.value);
        case 'thinking': return new vscode.LanguageModelThinkingPart(p.value);
        case 'toolCall': return new vscode.LanguageModelToolCallPart(p.callId, p.name, p.input);
        case 'toolResult': return new vscode.LanguageModelToolResultPart(p.callId, p.content.map(part));
        case 'data': return new vscode.LanguageModelDataPart(new Uint8Array(Buffer.from(p.data, 'base64')), p.mimeType);
        default: return p.json;
    }
}

const ROLES = {
    user: vscode.LanguageModelChatMessageRole.User,
    assistant: vscode.LanguageModelChatMessageRole.Assistant,
    system: vscode.LanguageModelChatMessageRole.System,
};

/**
 * As Copilot passes it (to `model.countTokens`, which hands it to a provider in the same extension
 * host as it is): a string, or a plain `{role, content, name}` with a numeric role and real parts.
 * Built once per turn; each distinct input is one object, shared by its repeats (the baseline's LRU
 * then never re-hashes a string: its best case).
 */
function asCopilotInput(input) {
    return typeof input === 'string' ? input : { role: ROLES[input.role], content: input.content.map(part), name: input.name };
}

// ---- measuring -------------------------------------------------------------------------------------

function stats(times) {
    const sorted = Float64Array.from(times).sort();
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    const sum = sorted.reduce((a, b) => a + b, 0);
    return { n: sorted.length, mean: sum / sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] };
}

/** Count every input in order, each awaited before the next: wall time and per-call times (ms). */
async function replay(count, inputs, answers) {
    const times = new Float64Array(inputs.length);
    const t0 = performance.now();
    for (let i = 0; i < inputs.length; i++) {
        const t = performance.now();
        const n = await count(inputs[i]);
        times[i] = performance.now() - t;
        if (!(Number.isInteger(n) && n >= 0)) throw new Error(`call ${i}: no count (${n})`);
        if (answers) answers[i] = n;
    }
    return { ms: performance.now() - t0, times };
}

function procStatus(pid) {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (key) => +((text.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm')) || [])[1] || NaN);
    return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 };
}

const CLK_TCK = (() => { try { return +execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100; } catch { return 100; } })();
const BOOT_MS = 1000 * +fs.readFileSync('/proc/stat', 'utf8').match(/^btime (\d+)/m)[1];

/** When process `pid` started, in ms since the epoch (the kernel's clock-tick resolution). */
function startedAt(pid) {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return BOOT_MS + (1000 * +fields[19]) / CLK_TCK; // field 22 of stat: starttime
}

const hostRssMiB = () => process.memoryUsage().rss / (1024 * 1024);

// ---- large texts -----------------------------------------------------------------------------------

const WORDS = ('account ledger invoice cache shard replica window budget token stream parser buffer session ' +
    'tenant quota retry backoff schema payload cursor offset checksum digest snapshot queue worker lease').split(' ');

/** `size` characters of code, logs and JSON, different for every seed. */
function largeText(size, seed) {
    let s = (seed * 2654435761) >>> 0;
    const r = () => ((s = (Math.imul(s ^ (s >>> 15), 2246822507) + 0x6d2b79f5) >>> 0) / 4294967296);
    const pick = () => WORDS[Math.floor(r() * WORDS.length)];
    const out = [];
    let length = 0;
    while (length < size) {
        const kind = r();
        let line;
        if (kind < 0.4) {
            line = `    def ${pick()}_${pick()}(self, ${pick()}: int = ${Math.floor(r() * 1000)}) -> int:\n        return self.${pick()} * ${Math.floor(r() * 97)}`;
        } else if (kind < 0.75) {
            line = `2025-03-14T09:${String(Math.floor(r() * 60)).padStart(2, '0')}:${String(Math.floor(r() * 60)).padStart(2, '0')}Z INFO [${pick()}-${Math.floor(r() * 8)}] req=${Math.floor(r() * 0xffffffff).toString(16)} ${pick()} ${pick()} in ${Math.floor(r() * 4000)}ms`;
        } else {
            line = JSON.stringify({ id: `${pick()}-${Math.floor(r() * 1e6)}`, tenant: Math.floor(r() * 500), tags: [pick(), pick()], note: `${pick()} ${pick()} ${pick()}` });
        }
        out.push(line);
        length += line.length + 1;
    }
    return out.join('\n').slice(0, size);
}

// ---- the suite -------------------------------------------------------------------------------------

describe('counting benchmark: tokengauge against js-tiktoken + LRU in the extension host', function () {
    this.timeout(+(process.env.TG_BENCH_TEST_TIMEOUT_MS || 900000));
    const results = {
        meta: {}, startup: { tokengauge: [], baseline: {}, countedAhead: [] }, turns: {}, large: {}, memory: {}, counts: {}, notes: [],
    };
    let trace;
    let turns; // [{turn, summarized, inputs: ARCHITECTURE §3 JSON, vscode: as Copilot passes them}]
    let baseline;  // { counter } — the counter the registered provider uses now
    let encoder;
    let tgInfo;
    let ourCalls = 0;
    let callsAtStart;
    let registration;

    const counters = {};
    /** count(input) for counter `name` reached `via` provider or lm; inputs shaped for that path. */
    async function counterFor(name, via) {
        const key = `${name}/${via}`;
        if (counters[key]) return counters[key];
        let count;
        if (via === 'provider') {
            const provider = name === 'tokengauge' ? api().diagnostics.provider : baseline.provider;
            const info = name === 'tokengauge' ? tgInfo : baseline.model;
            count = (input) => provider.provideTokenCount(info, input, token);
        } else {
            const selector = name === 'tokengauge' ? { vendor: 'tokengauge', id: MODEL } : { vendor: BASELINE_VENDOR };
            const [model] = await vscode.lm.selectChatModels(selector); // once: each select crosses the renderer
            assert.ok(model, `no model for ${JSON.stringify(selector)}`);
            count = (input) => model.countTokens(input, token);
        }
        counters[key] = count;
        return count;
    }

    function record(via, counter, row, run) {
        const byVia = (results.turns[via] = results.turns[via] || {});
        const byCounter = (byVia[counter] = byVia[counter] || {});
        const entry = (byCounter[row] = byCounter[row] || { ms: [], times: [] });
        entry.ms.push(run.ms);
        entry.times.push(run.times);
    }

    /** A new tokengauge server: timings from the restart to its first answer and to the warm memo. */
    async function newServer(via, kind, expectWarm) {
        api().diagnostics.clearCountMemo();
        const t0 = performance.now();
        await vscode.commands.executeCommand('tokenGauge.restartServer');
        const restarted = performance.now();
        // Straight to the server, past the memo: through it, this miss would bring the tools' strings
        // along and warm the server's text cache before the timed turn does.
        await api().diagnostics.countUncached(MODEL, [`first answer of a new server ${via} ${kind} ${Date.now()} ${Math.random()}`]);
        const first = performance.now();
        let warmed;
        let entries = api().diagnostics.memoEntries();
        for (let i = 0; expectWarm && i < 1500 && entries <= 1; i++) {
            await sleep(10);
            entries = api().diagnostics.memoEntries();
        }
        if (expectWarm) warmed = performance.now();
        const pid = (await api().usage()).pid;
        const spawnToFirstMs = performance.timeOrigin + first - startedAt(pid);
        results.startup.tokengauge.push({
            via, kind, storage: expectWarm ? 'persisted' : 'empty', restartMs: restarted - t0,
            restartToFirstMs: first - t0, spawnToFirstMs,
            restartToWarmMemoMs: warmed === undefined ? null : warmed - t0, warmEntries: entries,
        });
        if (kind === 'cold') {
            // The first turn ever: nothing remembered, but what the extension counts ahead at every
            // start (the tools' strings) is counted, as a normal start does before Copilot's first turn.
            api().diagnostics.clearCountMemo();
            const t = performance.now();
            const strings = await api().diagnostics.countAhead();
            results.startup.countedAhead.push({ via, strings, ms: performance.now() - t });
        }
        return pid;
    }

    async function serverMemory(label) {
        const pid = (await api().usage()).pid;
        (results.memory.server = results.memory.server || []).push({ label, pid, ...procStatus(pid) });
    }

    before(async () => {
        assert.ok(REPO, 'TG_REPO is not set');
        assert.ok(OUT, 'TG_BENCH_OUT is not set');
        trace = load(TRACE);
        turns = trace.turns.map((t) => ({
            turn: t.turn, summarized: t.summarized, inputs: t.inputs,
            vscode: t.inputs.map(asCopilotInput),
        }));
        assert.ok(turns.length >= 3, `the trace has ${turns.length} turns; the benchmark replays 3`);

        let models = [];
        for (let i = 0; i < 150 && !models.length; i++) {
            models = await vscode.lm.selectChatModels({ vendor: 'tokengauge', id: MODEL });
            if (!models.length) await sleep(200);
        }
        assert.ok(models.length, `tokengauge model ${MODEL} not listed`);
        tgInfo = (await api().diagnostics.provider.provideLanguageModelChatInformation({ silent: true }, token))
            .find((m) => m.id === MODEL);
        assert.ok(tgInfo, `the provider does not list ${MODEL}`);

        // The baseline's encoder, loaded once: the extension host's memory before and after.
        const rssBefore = hostRssMiB();
        const t0 = performance.now();
        const loaded = loadEncoder(REPO);
        encoder = loaded.encoder;
        const t1 = performance.now();
        new BaselineCounter(encoder).count('first answer');
        const firstCountMs = performance.now() - t1;
        results.startup.baseline = {
            requireMs: loaded.requireMs, constructMs: loaded.constructMs, firstCountMs, loadToFirstMs: t1 - t0 + firstCountMs,
        };
        results.memory.host = { beforeEncoderMiB: rssBefore, afterEncoderMiB: hostRssMiB() };

        baseline = { counter: new BaselineCounter(encoder) };
        const { model, provider } = baselineProvider(vscode, () => baseline.counter);
        Object.assign(baseline, { model, provider });
        registration = vscode.lm.registerLanguageModelChatProvider(BASELINE_VENDOR, provider);
        let listed = [];
        for (let i = 0; i < 100 && !listed.length; i++) {
            listed = await vscode.lm.selectChatModels({ vendor: BASELINE_VENDOR });
            if (!listed.length) await sleep(100);
        }
        assert.ok(listed.length, 'the baseline model is not listed through vscode.lm');

        // Copilot Chat, active as when the trace was recorded, registers its tools (COPILOT.md step 2:
        // chat setup runs on one throw-away request, which fails here: this model's API is unreachable).
        const toolsBefore = vscode.lm.tools.length;
        const tActivate = performance.now();
        const throwAway = vscode.commands.executeCommand('workbench.action.chat.open', {
            query: 'hello', mode: 'ask', modelSelector: { vendor: 'tokengauge', id: MODEL }, blockOnResponse: true,
        }).then(() => undefined, () => undefined);
        const copilotChat = () => vscode.extensions.getExtension('GitHub.copilot-chat');
        while (!(copilotChat() && copilotChat().isActive) && performance.now() - tActivate < 60000) await sleep(250);
        await Promise.race([throwAway, sleep(30000)]);
        await vscode.commands.executeCommand('workbench.action.chat.newChat');
        for (let last = -1, same = 0; same < 10 && performance.now() - tActivate < 60000; await sleep(200)) {
            same = vscode.lm.tools.length === last ? same + 1 : 0; // settled: 2 s without a new tool
            last = vscode.lm.tools.length;
        }
        callsAtStart = api().tokenCountCalls(); // after the throw-away request's own counting
        results.copilotActivation = {
            active: Boolean(copilotChat() && copilotChat().isActive), ms: performance.now() - tActivate,
            toolsBefore, toolsAfter: vscode.lm.tools.length,
        };
        // What tokengauge's memo counts ahead with a model's first miss, against what turn 1 asks.
        const companions = new Set(api().diagnostics.companionStrings());
        const asked = new Set(turns[0].inputs.filter((i) => typeof i === 'string'));
        results.companions = {
            tools: vscode.lm.tools.length, strings: companions.size, askedStrings: asked.size,
            askedAndCompanion: [...asked].filter((s) => companions.has(s)).length,
        };

        const copilot = vscode.extensions.getExtension('GitHub.copilot-chat');
        const cpu = os.cpus();
        results.meta = {
            vscode: vscode.version, node: process.version, copilotChat: copilot && copilot.packageJSON.version,
            cpu: `${cpu.length} × ${cpu[0] && cpu[0].model}`, loadavg: os.loadavg(), model: MODEL, reps: REPS, vias: VIAS,
            trace: { file: path.relative(REPO, TRACE), source: trace.source, copilotChat: trace.copilotChat, turns: describeTrace(trace) },
            date: new Date().toISOString(),
        };
        console.log(`trace ${TRACE}: turns ${turns.map((t) => `${t.turn} (${t.inputs.length} calls)`).join(', ')}; ` +
            `baseline encoder loaded in ${(results.startup.baseline.loadToFirstMs).toFixed(0)} ms`);
    });

    after(() => {
        if (registration) registration.dispose();
        // Per-call times become percentiles here: the JSON stays small.
        for (const byVia of Object.values(results.turns)) {
            for (const byCounter of Object.values(byVia)) {
                for (const [row, entry] of Object.entries(byCounter)) {
                    const all = entry.times.flatMap((t) => Array.from(t));
                    byCounter[row] = { ms: entry.ms, calls: entry.times[0].length, perCall: stats(all) };
                }
            }
        }
        results.otherCountCalls = api().tokenCountCalls() - callsAtStart - ourCalls;
        fs.writeFileSync(OUT, JSON.stringify(results, null, 1));
        console.log(`results -> ${OUT}`);
    });

    for (const via of VIAS) {
        it(`replays the trace: ${via === 'provider' ? 'provider calls' : 'through vscode.lm'}`, async () => {
            const answers = { tokengauge: [], baseline: [] };
            const turnRows = [['cold', 0], ['next2', 1], ['next3', 2], ['again', 0]];
            for (let rep = 0; rep < REPS; rep++) {
                // tokengauge, cold: a new server, an empty memo. The run's first server start sees an
                // empty storage dir; later ones the strings the last server kept (then dropped from the memo).
                const first = results.startup.tokengauge.length === 0;
                await newServer(via, 'cold', !first);
                const tg = await counterFor('tokengauge', via);
                for (const [row, i] of turnRows) {
                    const keep = via === VIAS[0] && rep === 0 && row !== 'again' ? (answers.tokengauge[i] = []) : undefined;
                    record(via, 'tokengauge', row, await replay(tg, turns[i].vscode, keep));
                    ourCalls += turns[i].inputs.length;
                }
                await serverMemory(`${via}: after a cold session (turns 1, 2, 3, 1)`);

                // The baseline with its LRU, and GCMP as written: a new session is a new LRU.
                for (const name of ['baseline', 'gcmp']) {
                    baseline.counter = new BaselineCounter(encoder, { cacheStrings: name === 'baseline' });
                    const count = await counterFor('baseline', via);
                    for (const [row, i] of turnRows) {
                        const keep = name === 'baseline' && via === VIAS[0] && rep === 0 && row !== 'again' ? (answers.baseline[i] = []) : undefined;
                        record(via, name, row, await replay(count, turns[i].vscode, keep));
                    }
                }

                // tokengauge, restart: a new server and memo, the memo refilled by warmCounts.
                await newServer(via, 'restart', true);
                record(via, 'tokengauge', 'restart', await replay(tg, turns[0].vscode));
                ourCalls += turns[0].inputs.length;
                await serverMemory(`${via}: after a restart session (turn 1)`);
            }
            if (answers.tokengauge.length) results.counts = compareCounts(turns, answers);
            results.memory.host.afterBaselineSessionsMiB = hostRssMiB();
        });
    }

    it('counts large single texts end to end', async () => {
        let seed = 1;
        for (const via of VIAS) {
            const tg = await counterFor('tokengauge', via);
            const bl = await counterFor('baseline', via);
            for (const [label, size, reps] of LARGE) {
                const rows = { tokengauge: [], baseline: [] };
                for (let rep = 0; rep < reps; rep++) {
                    const text = largeText(size, seed++); // new text: nobody has it cached
                    baseline.counter = new BaselineCounter(encoder);
                    let t = performance.now();
                    const a = await tg(text);
                    rows.tokengauge.push({ ms: performance.now() - t, tokens: a });
                    ourCalls++;
                    t = performance.now();
                    const b = await bl(text);
                    rows.baseline.push({ ms: performance.now() - t, tokens: b });
                    assert.ok(Number.isInteger(a) && a > 0 && Number.isInteger(b) && b > 0, `${label}: counts ${a}, ${b}`);
                }
                (results.large[via] = results.large[via] || {})[label] = rows;
            }
        }
        await serverMemory('after the large texts');
        results.memory.host.afterLargeTextsMiB = hostRssMiB();
    });
});

/** tokengauge's counts against the baseline's on turns 1–3 (first cold session). */
function compareCounts(turns, answers) {
    const out = { strings: { calls: 0, tokengauge: 0, baseline: 0, equalAfterMargin: 0, differ: 0 },
        messages: { calls: 0, tokengauge: 0, baseline: 0, differ: 0, maxAbsDiff: 0 }, margin: 1.05 };
    for (let i = 0; i < answers.tokengauge.length; i++) {
        const inputs = turns[i].inputs;
        inputs.forEach((input, j) => {
            const a = answers.tokengauge[i][j];
            const b = answers.baseline[i][j];
            const kind = typeof input === 'string' ? out.strings : out.messages;
            kind.calls++;
            kind.tokengauge += a;
            kind.baseline += b;
            if (a !== b) kind.differ++;
            if (kind === out.strings && a === (b > 0 ? Math.ceil(b * out.margin - 1e-9) : 0)) kind.equalAfterMargin++;
            if (kind === out.messages) kind.maxAbsDiff = Math.max(kind.maxAbsDiff, Math.abs(a - b));
        });
    }
    return out;
}
