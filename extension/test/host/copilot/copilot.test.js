// The real GitHub Copilot Chat (built into code-server 1.139) drives tokengauge in agent mode against
// the test upstream, whose window is small enough that the conversation has to be summarized
// (recipe: shared/vscode-host/COPILOT.md; wired by scripts/test-copilot.sh).
//
// Each turn carries several KB of code, logs or JSON. Copilot's agent budget is
// floor((maxInputTokens − toolTokens) × 0.9), counted with tokengauge's provideTokenCount; the upstream
// counts with its own (different) tokenizer and rejects anything over its window with the API's real
// error. Asserted: every turn answers, Copilot summarizes at least once, no upstream request is
// rejected as too long and every request's true size fits the window. Printed per turn: wall time,
// upstream requests, the largest true prompt and its fill of the window, tokengauge's estimate of it,
// whether the turn summarized, and provideTokenCount calls when the extension's API reports them.
'use strict';
const assert = require('assert');
const vscode = require('vscode');

const UPSTREAM = process.env.TG_UPSTREAM;
const MODEL = process.env.TG_COPILOT_MODEL || 'gpt-4o';
const PROVIDER = process.env.TG_COPILOT_PROVIDER || 'test-openai';
const API_KEY = process.env.TG_COPILOT_API_KEY || '';
const WINDOW = +process.env.TG_COPILOT_WINDOW; // the upstream's true context window
const TURNS = +(process.env.TG_COPILOT_TURNS || 10);
// Characters of content per turn (cycled): roughly 2.5k–5k tokens each.
const SIZES = [11000, 13500, 16000, 9000, 19000, 12000, 14500, 8000, 17500, 13000];
const DUMP = process.env.TG_COPILOT_DUMP; // write the upstream's requests here (JSON), for diagnosis
const TURN_TIMEOUT_MS = +(process.env.TG_COPILOT_TURN_TIMEOUT_MS || 90000);
// Write every agent turn's provideTokenCount inputs here (JSON), for bench/count_compare.sh: the
// extension's diagnostics.startCountRecording, already converted to DESIGN §3 JSON.
const TRACE = process.env.TG_COPILOT_TRACE;

// Copilot 0.67 summarizes two ways: in the foreground when a prompt exceeds the agent budget (a 3-message
// request without tools), and in the background once a rendered prompt reaches 90% of maxInputTokens
// (the whole prompt with tools plus a compaction instruction; its answer must carry <summary> tags and is
// applied on a later turn). Either way later requests carry <conversation-summary>.
const SUMMARIZE_MARK = 'Summarize the conversation history so far';
const COMPACT_MARK = 'must be compacted now';
const SUMMARY_MARK = '<conversation-summary>';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function control(path, body) {
    const response = await fetch(`${UPSTREAM}/_control/${path}`, body === undefined ? {} : {
        method: 'POST',
        body: JSON.stringify(body),
    });
    assert.ok(response.ok, `upstream ${path}: ${response.status}`);
    return response.json();
}

/** Model requests the upstream saw after request id `since`. */
async function upstreamRequests(since = 0) {
    return (await control(`requests?route=chat&since=${since}`)).requests;
}

function lastId(requests, fallback) {
    return requests.length ? requests[requests.length - 1].id : fallback;
}

/** Text of every message of a recorded request body, joined. */
function bodyText(request) {
    const messages = (request.json && request.json.messages) || [];
    return messages.map((m) => (typeof m.content === 'string'
        ? m.content
        : (m.content || []).map((p) => p.text || '').join(''))).join('\n');
}

function lastUserText(request) {
    const messages = (request.json && request.json.messages) || [];
    for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i];
        if (m.role !== 'user') continue;
        return typeof m.content === 'string' ? m.content : (m.content || []).map((p) => p.text || '').join('');
    }
    return '';
}

const isForegroundSummary = (r) => lastUserText(r).includes(SUMMARIZE_MARK);
const isBackgroundCompaction = (r) => lastUserText(r).includes(COMPACT_MARK);
const isSummarizeRequest = (r) => isForegroundSummary(r) || isBackgroundCompaction(r);
const carriesSummary = (r) => !isSummarizeRequest(r) && bodyText(r).includes(SUMMARY_MARK);
const isTooLong = (r) => r.status === 400 && /context|too long|maximum|exceed/i.test(r.body_text || '');

// ---- large, varied, deterministic content -------------------------------------------------------

function rng(seed) {
    let s = seed >>> 0;
    return () => {
        s = (s + 0x6d2b79f5) >>> 0;
        let t = s;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const WORDS = ('account ledger invoice cache shard replica window budget token stream parser buffer ' +
    'session tenant quota retry backoff schema payload cursor offset checksum digest snapshot queue ' +
    'worker lease heartbeat gateway router upstream downstream metric sample bucket histogram').split(' ');

function pick(r, list) { return list[Math.floor(r() * list.length)]; }
function ident(r) { return `${pick(r, WORDS)}_${pick(r, WORDS)}`; }
function camel(r) { const a = pick(r, WORDS); const b = pick(r, WORDS); return a + b[0].toUpperCase() + b.slice(1); }

function pythonModule(r, size) {
    const lines = ['from __future__ import annotations', '', 'import dataclasses', 'import logging', '',
        'log = logging.getLogger(__name__)', ''];
    while (lines.join('\n').length < size) {
        const cls = camel(r).replace(/^./, (c) => c.toUpperCase());
        lines.push('', '@dataclasses.dataclass', `class ${cls}:`, `    """Tracks the ${pick(r, WORDS)} of one ${pick(r, WORDS)}."""`, '');
        for (let f = 0; f < 3 + Math.floor(r() * 4); f++) lines.push(`    ${ident(r)}: int = ${Math.floor(r() * 1000)}`);
        for (let m = 0; m < 2 + Math.floor(r() * 3); m++) {
            const name = ident(r);
            lines.push('', `    def ${name}(self, ${pick(r, WORDS)}: int, limit: int = ${Math.floor(r() * 64) + 1}) -> int:`,
                `        """Return the ${pick(r, WORDS)} after applying ${pick(r, WORDS)} rules."""`,
                `        total = 0`,
                `        for i in range(limit):`,
                `            if i % ${2 + Math.floor(r() * 7)} == 0:`,
                `                total += self.${ident(r)} if hasattr(self, "${ident(r)}") else i`,
                `            else:`,
                `                log.debug("${name}: %s %d", "${pick(r, WORDS)}", i)`,
                `        return total * ${Math.floor(r() * 9) + 1}`);
        }
    }
    return lines.join('\n');
}

function typescriptModule(r, size) {
    const lines = ["import { EventEmitter } from 'node:events';", ''];
    while (lines.join('\n').length < size) {
        const iface = camel(r).replace(/^./, (c) => c.toUpperCase());
        lines.push(`export interface ${iface} {`);
        for (let f = 0; f < 4; f++) lines.push(`    ${camel(r)}: ${pick(r, ['number', 'string', 'boolean', 'string[]'])};`);
        lines.push('}', '', `export class ${iface}Store extends EventEmitter {`,
            `    private readonly items = new Map<string, ${iface}>();`, '');
        for (let m = 0; m < 3; m++) {
            const name = camel(r);
            lines.push(`    async ${name}(key: string, retries = ${1 + Math.floor(r() * 5)}): Promise<${iface} | undefined> {`,
                `        for (let attempt = 0; attempt < retries; attempt++) {`,
                `            const found = this.items.get(\`\${key}:${pick(r, WORDS)}\`);`,
                `            if (found && found.${camel(r)} !== undefined) return found;`,
                `            await new Promise((resolve) => setTimeout(resolve, ${10 * (1 + Math.floor(r() * 20))}));`,
                `        }`,
                `        this.emit('${pick(r, WORDS)}', key);`,
                `        return undefined;`,
                `    }`, '');
        }
        lines.push('}', '');
    }
    return lines.join('\n');
}

function serviceLog(r, size) {
    const lines = [];
    let t = Date.UTC(2025, 2, 14, 9, 30, 0);
    while (lines.join('\n').length < size) {
        t += Math.floor(r() * 2500);
        const level = pick(r, ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR']);
        const rid = Math.floor(r() * 0xffffffff).toString(16).padStart(8, '0');
        lines.push(`${new Date(t).toISOString()} ${level.padEnd(5)} [${pick(r, WORDS)}-${Math.floor(r() * 8)}] ` +
            `req=${rid} ${pick(r, WORDS)} ${pick(r, ['started', 'finished', 'retrying', 'timed out', 'rejected'])} ` +
            `in ${Math.floor(r() * 4000)}ms tenant=${Math.floor(r() * 500)} bytes=${Math.floor(r() * 1e6)}`);
        if (level === 'ERROR') {
            lines.push(`Traceback (most recent call last):`,
                `  File "/srv/app/${pick(r, WORDS)}/${ident(r)}.py", line ${Math.floor(r() * 900)}, in ${ident(r)}`,
                `    return self.${ident(r)}(payload, timeout=${Math.floor(r() * 30)})`,
                `${pick(r, ['TimeoutError', 'KeyError', 'ConnectionResetError', 'ValueError'])}: ${pick(r, WORDS)} ${pick(r, WORDS)} unavailable`);
        }
    }
    return lines.join('\n');
}

function jsonRecords(r, size) {
    const records = [];
    while (JSON.stringify(records, null, 2).length < size) {
        records.push({
            id: `${pick(r, WORDS)}-${Math.floor(r() * 1e6)}`,
            tenant: Math.floor(r() * 500),
            status: pick(r, ['active', 'suspended', 'pending', 'archived']),
            limits: { [camel(r)]: Math.floor(r() * 1e4), [camel(r)]: Math.floor(r() * 1e4), burst: r() < 0.5 },
            tags: [pick(r, WORDS), pick(r, WORDS), pick(r, WORDS)],
            updatedAt: new Date(Date.UTC(2025, 0, 1) + Math.floor(r() * 3e10)).toISOString(),
            note: `${pick(r, WORDS)} ${pick(r, WORDS)} ${pick(r, WORDS)} ${pick(r, WORDS)}`,
        });
    }
    return JSON.stringify(records, null, 2);
}

const CONTENT = [
    ['python', 'Review this Python module and list the three riskiest functions', pythonModule],
    ['log', 'These are the service logs from last night\'s incident; what went wrong first', serviceLog],
    ['json', 'Here is the tenant configuration export; which tenants look misconfigured', jsonRecords],
    ['typescript', 'Review this TypeScript store for race conditions', typescriptModule],
];

/** The query of turn `i`: a question and `size` characters of content. */
function query(i, size) {
    const [lang, ask, make] = CONTENT[i % CONTENT.length];
    return `${ask} (part ${i + 1}).\n\n\`\`\`${lang}\n${make(rng(1000 + i), size)}\n\`\`\`\n`;
}

// ---- the suite -----------------------------------------------------------------------------------

const selector = { vendor: 'tokengauge', id: MODEL };

async function chat(q, mode) {
    return vscode.commands.executeCommand('workbench.action.chat.open', {
        query: q, mode, modelSelector: selector, blockOnResponse: true,
    });
}

function withTimeout(promise, ms, what) {
    let timer;
    return Promise.race([
        promise.finally(() => clearTimeout(timer)),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms); }),
    ]);
}

describe('the real Copilot Chat drives tokengauge', function () {
    this.timeout(TURN_TIMEOUT_MS + 30000);
    const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;
    const turns = [];
    const traced = [];
    let model;

    before(async function () {
        this.timeout(120000);
        assert.ok(UPSTREAM, 'TG_UPSTREAM is not set');
        assert.ok(WINDOW > 0, 'TG_COPILOT_WINDOW is not set');
        for (let i = 0; i < 150 && !model; i++) {
            model = (await vscode.lm.selectChatModels(selector))[0];
            if (!model) await sleep(200);
        }
        assert.ok(model, `tokengauge model ${MODEL} not listed`);
        console.log(`model ${MODEL}: maxInputTokens ${model.maxInputTokens}, upstream window ${WINDOW}`);
        if (API_KEY) await vscode.commands.executeCommand('tokenGauge.setApiKey', PROVIDER, API_KEY);

        // COPILOT.md step 2: chat setup runs once on a throw-away request; then Copilot activates.
        const t0 = Date.now();
        const warm = chat('hello', 'ask').then((r) => r, (e) => e);
        const copilot = () => vscode.extensions.getExtension('GitHub.copilot-chat');
        while (!(copilot() && copilot().isActive) && Date.now() - t0 < 60000) await sleep(250);
        assert.ok(copilot() && copilot().isActive, 'GitHub.copilot-chat did not activate');
        const warmResult = await Promise.race([warm, sleep(30000).then(() => 'still running')]);
        console.log(`warm-up: Copilot active after ${Date.now() - t0} ms; throw-away request: ` +
            `${warmResult instanceof Error ? warmResult.message : JSON.stringify(warmResult && warmResult.errorDetails || 'answered')}`);
        await vscode.commands.executeCommand('workbench.action.chat.newChat');
        await control('reset', {});
    });

    for (let i = 0; i < TURNS; i++) {
        it(`agent turn ${i + 1} with large content answers`, async () => {
            const before = lastId(await upstreamRequests(), 0);
            const calls0 = typeof api().tokenCountCalls === 'function' ? api().tokenCountCalls() : undefined;
            const q = query(i, SIZES[i % SIZES.length]);
            if (TRACE) api().diagnostics.startCountRecording(1_000_000);
            const t0 = Date.now();
            let result;
            try {
                result = await withTimeout(chat(q, 'agent'), TURN_TIMEOUT_MS, `turn ${i + 1}`);
            } catch (error) {
                await vscode.commands.executeCommand('workbench.action.chat.cancel').then(undefined, () => undefined);
                throw error;
            } finally {
                if (TRACE) traced.push({ turn: i + 1, ...api().diagnostics.stopCountRecording() });
            }
            const ms = Date.now() - t0;
            const requests = await upstreamRequests(before);
            const calls = calls0 === undefined ? undefined : api().tokenCountCalls() - calls0;
            const metadata = (result && result.metadata) || {};
            const largest = requests.reduce((a, r) => ((r.prompt_tokens || 0) > (a ? a.prompt_tokens || 0 : -1) ? r : a), undefined);
            const history = ((await api().usage()).history || []).filter((h) => h.kind === 'usage' && h.modelId === MODEL);
            const estimateOf = (r) => (history.find((h) => h.inputTokens === r.prompt_tokens) || {}).estimatedTokens;
            const main = requests.filter((r) => r.status === 200 && !isSummarizeRequest(r)).pop();
            const turn = {
                turn: i + 1, ms, chars: q.length, requests,
                largest: largest ? largest.prompt_tokens : 0,
                summarized: !!(metadata.summaries && metadata.summaries.length) || requests.some(isSummarizeRequest),
                calls, result,
            };
            turns.push(turn);
            // Per request: true prompt tokens / tokengauge's estimate (what Copilot's counts add up to).
            console.log(`turn ${turn.turn}: ${(ms / 1000).toFixed(1)} s, ${q.length} chars, ${requests.length} upstream requests ` +
                `[${requests.map((r) => `${r.prompt_tokens}/${estimateOf(r) ?? '?'}${isForegroundSummary(r) ? ' summarize' : ''}${isBackgroundCompaction(r) ? ' compact' : ''}` +
                    `${carriesSummary(r) ? ' +summary' : ''}${r.status === 200 ? '' : ` status ${r.status}`}`).join(', ')}], ` +
                `largest ${turn.largest} (${(100 * turn.largest / WINDOW).toFixed(1)}% of ${WINDOW}), summarized ${turn.summarized}` +
                `${calls === undefined ? '' : `, provideTokenCount calls ${calls}`}; Copilot's promptTokens ${metadata.promptTokens} ` +
                `for the answering request of ${main ? main.prompt_tokens : '?'} true tokens`);
            assert.ok(result, `turn ${i + 1}: no result`);
            assert.ok(!result.errorDetails, `turn ${i + 1}: ${JSON.stringify(result.errorDetails)}`);
            assert.ok(requests.length > 0, `turn ${i + 1}: the upstream saw no request`);
            const answered = requests.filter((r) => r.status === 200 && !isSummarizeRequest(r));
            assert.ok(answered.length > 0, `turn ${i + 1}: no answered model request`);
            for (const r of requests) {
                assert.ok(!isTooLong(r), `turn ${i + 1}: request ${r.id} rejected as too long: ${r.body_text}`);
                assert.ok(r.prompt_tokens <= WINDOW, `turn ${i + 1}: request ${r.id} has ${r.prompt_tokens} > ${WINDOW} tokens`);
            }
        });
    }

    after(async () => {
        if (DUMP) require('fs').writeFileSync(DUMP, JSON.stringify(await upstreamRequests(), null, 1));
        if (TRACE) {
            const copilot = vscode.extensions.getExtension('GitHub.copilot-chat');
            require('fs').writeFileSync(TRACE, JSON.stringify({
                format: 'tokengauge-count-trace/1',
                source: 'extension/test/host/copilot (scripts/test-copilot.sh), agent mode',
                vscode: vscode.version,
                copilotChat: copilot && copilot.packageJSON.version,
                model: { id: MODEL, family: model && model.family, maxInputTokens: model && model.maxInputTokens },
                turns: traced.map((t) => ({ ...t, summarized: (turns.find((u) => u.turn === t.turn) || {}).summarized })),
            }));
            console.log(`count trace: ${traced.length} turns, ${traced.map((t) => t.inputs.length).join(', ')} calls -> ${TRACE}`);
        }
    });

    it('summarized, and no upstream request overflowed the window', async () => {
        const all = await upstreamRequests();
        const summarizeRequests = all.filter(isSummarizeRequest);
        const compactions = all.filter(isBackgroundCompaction);
        const withSummary = all.filter(carriesSummary);
        const metadataSummaries = turns.filter((t) => t.result && t.result.metadata && t.result.metadata.summaries && t.result.metadata.summaries.length).length;
        const largest = Math.max(...all.map((r) => r.prompt_tokens || 0));
        const usage = await api().usage();
        const history = (usage.history || []).filter((h) => h.kind === 'usage' && h.modelId === MODEL);
        const errors = (usage.history || []).filter((h) => h.kind !== 'usage');
        const ratio = history.map((h) => h.estimatedTokens / h.inputTokens);
        const calls = turns.map((t) => t.calls).filter((c) => c !== undefined);
        const seconds = (ms) => (ms / 1000).toFixed(1);
        console.log([
            `copilot summary: ${turns.length} turns in ${seconds(turns.reduce((a, t) => a + t.ms, 0))} s ` +
                `(per turn ${turns.map((t) => seconds(t.ms)).join(', ')} s); ${all.length} upstream requests`,
            `  summarization: ${summarizeRequests.length} requests (${summarizeRequests.length - compactions.length} ` +
                `foreground, ${compactions.length} background compaction), ${metadataSummaries} turns with ` +
                `metadata.summaries, ${withSummary.length} requests carrying ${SUMMARY_MARK}`,
            `  largest request ${largest} true tokens = ${(100 * largest / WINDOW).toFixed(1)}% of the ${WINDOW} window`,
            `  tokengauge's estimate / true (${ratio.length} requests): min ${Math.min(...ratio).toFixed(3)}, ` +
                `max ${Math.max(...ratio).toFixed(3)}, last ${ratio.length ? ratio[ratio.length - 1].toFixed(3) : '-'}; ` +
                `model ${JSON.stringify((usage.models || []).find((m) => m.id === MODEL))}; other history ${JSON.stringify(errors)}`,
            `  provideTokenCount calls: ${calls.length ? `${calls.reduce((a, c) => a + c, 0)} (per turn ${calls.join(', ')})` : 'not reported by the extension'}`,
        ].join('\n'));
        assert.ok(summarizeRequests.length + metadataSummaries > 0, 'Copilot never summarized');
        assert.ok(withSummary.length > 0, 'no request carried <conversation-summary> after summarizing');
        assert.deepStrictEqual(all.filter(isTooLong).map((r) => r.id), [], 'requests rejected as too long');
        assert.ok(largest <= WINDOW, `largest request ${largest} > window ${WINDOW}`);
        assert.deepStrictEqual(all.filter((r) => r.status !== 200).map((r) => `${r.id}: ${r.status}`), []);
    });
});
