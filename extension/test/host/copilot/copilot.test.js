// The real GitHub Copilot Chat (built into code-server 1.139) drives tokengauge in agent mode against
// the test upstream, whose window is small enough that the conversation has to be summarized
// (recipe: shared/vscode-host/COPILOT.md; wired by scripts/test-copilot.sh, once per tokenizer skew).
//
// The upstream's true tokenizer is not tokengauge's: `encoding × skew` for message text and for the
// tools' JSON, plus a per-message overhead; it rejects anything over its window with the API's real
// "prompt is too long" error. Each turn carries 4–6k true tokens of code, logs, JSON, prose or CJK
// text, and some turns make Copilot read large workspace files first (tool-call rounds scripted by
// the upstream, which Copilot really executes), so requests also grow within a turn.
//
// Asserted: every turn answers; no upstream request is rejected as too long or exceeds the window;
// Copilot summarizes at least once; the request before each summarization fills 0.60–0.95 of the
// window, 0.70 or more at the median (see FILL_RANGE; with the model's toolDocs other than full,
// the lower bounds count its tools as if they had gone whole: the same room for messages). Printed per request: its true size, what
// Copilot's budget added up (its own o200k count of the messages, our answers for the tools; see
// decompose.js) and tokengauge's own estimate; at the end one `copilot-result {json}` line with the
// figures (docs/BENCHMARKS.md).
'use strict';
const assert = require('assert');
const fs = require('fs');
const vscode = require('vscode');

const { Content } = require('./content');
const { decompose } = require('./decompose');

const env = process.env;
const UPSTREAM = env.TG_UPSTREAM;
const MODEL = env.TG_COPILOT_MODEL || 'sim';
const PROVIDER = env.TG_COPILOT_PROVIDER || 'test-openai';
const API_KEY = env.TG_COPILOT_API_KEY || '';
const WINDOW = +env.TG_COPILOT_WINDOW; // the upstream's true context window
const TURNS = +(env.TG_COPILOT_TURNS || 12);
const SKEW = +(env.TG_COPILOT_SKEW || 1);
const ENCODING = env.TG_COPILOT_ENCODING || 'o200k_base';
const TOOL_DOCS = env.TG_COPILOT_TOOL_DOCS || 'full'; // the model's toolDocs setting
// The request before each summarization, as a share of the window: never above 0.95 (the window
// was nearly full: a near miss), never below 0.60, and 0.70 or more at the median. Not 0.80: Copilot
// 0.67 compacts in the background once its count reaches 0.78–0.82 of maxInputTokens (0.70–0.74 of
// this window), and one turn here adds up to a quarter of the window, so even right counts leave
// some summarizations near 0.65. Before this suite's fixes, skew 0.7 summarized at 0.57–0.61.
const FILL_RANGE = [0.60, 0.95];
const FILL_MEDIAN = 0.70;
const DUMP = env.TG_COPILOT_DUMP; // write the upstream's requests here (JSON), for diagnosis
const RESULT = env.TG_COPILOT_RESULT; // write the figures here (JSON)
const TURN_TIMEOUT_MS = +(env.TG_COPILOT_TURN_TIMEOUT_MS || 90000);
// Write every agent turn's provideTokenCount inputs here (JSON), for bench/count_compare.sh.
const TRACE = env.TG_COPILOT_TRACE;
// The provider under test: tokengauge, or the in-process o200k baseline (bench/copilot_baseline).
const VENDOR = env.TG_COPILOT_VENDOR || 'tokengauge';
const TOKENGAUGE = VENDOR === 'tokengauge';

// Copilot 0.67 summarizes two ways: in the foreground when a prompt exceeds the agent budget (a 3-message
// request without tools), and in the background once a rendered prompt reaches ~80% of maxInputTokens
// during tool-call rounds, 90% otherwise (the whole prompt with tools plus a compaction instruction; its
// answer must carry <summary> tags and is applied on a later render). Either way later requests carry
// <conversation-summary>.
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

const textOf = (m) => (typeof m.content === 'string' ? m.content : (m.content || []).map((p) => p.text || '').join(''));
const messagesOf = (r) => (r.json && r.json.messages) || [];
const lastUserText = (r) => textOf(messagesOf(r).filter((m) => m.role === 'user').pop() || {});
const toolsOf = (r) => ((r.json && r.json.tools) || []).length;

const isForegroundSummary = (r) => lastUserText(r).includes(SUMMARIZE_MARK);
const isBackgroundCompaction = (r) => lastUserText(r).includes(COMPACT_MARK);
const isSummarizeRequest = (r) => isForegroundSummary(r) || isBackgroundCompaction(r);
const carriesSummary = (r) => !isSummarizeRequest(r) && messagesOf(r).map(textOf).join('\n').includes(SUMMARY_MARK);
const isMain = (r) => toolsOf(r) > 0 && !isSummarizeRequest(r);
const isTooLong = (r) => r.status === 400 && /context|too long|maximum|exceed/i.test(r.body_text || '');
const fill = (r) => (r.prompt_tokens || 0) / WINDOW;
// With toolDocs other than full the request carries smaller tools: its fill as if they had gone
// whole (the true cost of Copilot's tools in full, `toolsWhole`) is what the fill range judges, so
// the criterion is the same room for the conversation's messages under every toolDocs.
let toolsWhole = null;
const fillWhole = (r) => (toolsWhole === null ? fill(r) : ((r.prompt_tokens || 0) - (r.prompt_tools || 0) + toolsWhole) / WINDOW);

/** The true cost of `tools` (as Copilot handed them to the provider) sent whole, as the server
 * would send them (`openai_tool`). */
async function wholeToolsCost(tools) {
    const schema = (s) => (!s || typeof s !== 'object' || Object.keys(s).length === 0
        ? { type: 'object', properties: {} } : ('type' in s ? s : { type: 'object', ...s }));
    const functions = tools.map((t) => ({
        type: 'function', function: { name: t.name, description: t.description, parameters: schema(t.inputSchema) },
    }));
    return (await control('count', { body: { model: MODEL, messages: [], tools: functions } })).tools;
}
const pct = (x) => `${(100 * x).toFixed(1)}%`;

/** A tokenizer's count (js-tiktoken from the repo's node_modules). */
function counter(name) {
    const { getEncoding } = require(require.resolve('js-tiktoken', { paths: [env.TG_REPO] }));
    const encoding = getEncoding(name);
    return (text) => encoding.encode(text, 'all').length;
}

const selector = { vendor: VENDOR, id: MODEL };

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

/**
 * Summarizations and the main request before each: for a background compaction, the request whose
 * render triggered it (its messages are the compaction's, less the instruction; Copilot may send it
 * just before or just after the compaction); for a foreground one, the last main request before it.
 */
function summarizations(all) {
    return all.filter(isSummarizeRequest).map((s) => {
        const size = messagesOf(s).length - 1;
        const trigger = isBackgroundCompaction(s)
            && all.find((r) => Math.abs(r.id - s.id) === 1 && isMain(r) && messagesOf(r).length === size);
        const before = trigger || all.filter((r) => r.id < s.id && isMain(r) && r.status === 200).pop();
        return {
            id: s.id, kind: isForegroundSummary(s) ? 'foreground' : 'background', before: before && before.id,
            fill: before ? fill(before) : 0, fillWhole: before ? fillWhole(before) : 0,
            messages: before ? before.prompt_tokens - before.prompt_tools : 0,
        };
    });
}

describe(`the real Copilot Chat drives ${VENDOR} (true tokenizer ${ENCODING} × ${SKEW})`, function () {
    this.timeout(TURN_TIMEOUT_MS + 30000);
    const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports; // TOKENGAUGE only
    const turns = [];
    let agentSince; // when turn 1 began (Unix seconds)
    const rows = []; // one per main request: true size, Copilot's sum, tokengauge's estimate
    let model;
    let files;
    let content;
    let copilotCount; // Copilot's own tokenizer for its agent prompt

    before(async function () {
        this.timeout(120000);
        assert.ok(UPSTREAM, 'TG_UPSTREAM is not set');
        assert.ok(WINDOW > 0, 'TG_COPILOT_WINDOW is not set');
        for (let i = 0; i < 150 && !model; i++) {
            model = (await vscode.lm.selectChatModels(selector))[0];
            if (!model) await sleep(200);
        }
        assert.ok(model, `tokengauge model ${MODEL} not listed`);
        console.log(`model ${MODEL} (${model.family}): maxInputTokens ${model.maxInputTokens}, maxOutputTokens ` +
            `${model.maxOutputTokens}; upstream window ${WINDOW}, true tokenizer ${ENCODING} × ${SKEW}`);
        if (API_KEY && TOKENGAUGE) await vscode.commands.executeCommand('tokenGauge.setApiKey', PROVIDER, API_KEY);

        const workspace = vscode.workspace.workspaceFolders[0].uri;
        content = new Content(counter(ENCODING), SKEW, workspace.fsPath);
        copilotCount = counter('o200k_base');
        files = content.files();
        for (const file of files) {
            await vscode.workspace.fs.writeFile(vscode.Uri.file(file.absolute), Buffer.from(file.text, 'utf8'));
        }

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
        it(`agent turn ${i + 1} answers`, async () => {
            const before = lastId(await upstreamRequests(), 0);
            agentSince = agentSince || Date.now() / 1000;
            const q = content.query(i, files);
            if (TOKENGAUGE) api().diagnostics.startCountRecording(1_000_000);
            const t0 = Date.now();
            let result;
            let recording;
            try {
                result = await withTimeout(chat(q.text, 'agent'), TURN_TIMEOUT_MS, `turn ${i + 1}`);
            } catch (error) {
                await vscode.commands.executeCommand('workbench.action.chat.cancel').then(undefined, () => undefined);
                throw error;
            } finally {
                recording = TOKENGAUGE ? api().diagnostics.stopCountRecording() : { inputs: [], answers: [], chats: [], dropped: 0 };
            }
            const ms = Date.now() - t0;
            const requests = await upstreamRequests(before);
            const given = recording.chats.find((c) => c.tools.length > 0);
            if (TOOL_DOCS !== 'full' && toolsWhole === null && given) toolsWhole = await wholeToolsCost(given.tools);
            const history = TOKENGAUGE ? ((await api().usage()).history || []).filter((h) => h.inputTokens != null && h.modelId === MODEL) : [];
            const estimateOf = (r) => (history.find((h) => h.inputTokens === r.prompt_tokens) || {}).estimatedTokens;
            const sums = decompose(recording, requests.filter((r) => toolsOf(r) > 0), copilotCount);
            if (DUMP) fs.writeFileSync(`${DUMP}.turn-${i + 1}.json`, JSON.stringify(recording));
            for (const r of requests.filter(isMain)) {
                const sum = sums.get(r.id);
                rows.push({ turn: i + 1, id: r.id, status: r.status, true: r.prompt_tokens, trueTools: r.prompt_tools,
                    trueMessages: r.prompt_messages, copilot: sum, estimate: estimateOf(r) });
            }
            const turn = { turn: i + 1, kind: q.kind, reads: q.reads, ms, requests, calls: recording.inputs.length,
                summarized: requests.some(isSummarizeRequest), error: result && result.errorDetails };
            turns.push(turn);
            if (TRACE) turn.trace = { turn: i + 1, inputs: recording.inputs, dropped: recording.dropped };
            console.log(`turn ${turn.turn} (${q.kind}, ${q.reads} reads): ${(ms / 1000).toFixed(1)} s, ${requests.length} upstream requests ` +
                `[${requests.map((r) => {
                    const sum = sums.get(r.id);
                    const tags = `${isForegroundSummary(r) ? ' summarize' : ''}${isBackgroundCompaction(r) ? ' compact' : ''}` +
                        `${carriesSummary(r) ? ' +summary' : ''}${r.status === 200 ? '' : ` status ${r.status}`}`;
                    return `${r.prompt_tokens} (${pct(fill(r))}; copilot ${sum ? sum.total : '-'}, tg ${estimateOf(r) ?? '-'})${tags}`;
                }).join(', ')}], provideTokenCount calls ${recording.inputs.length}`);
            if (env.DRIVE_SCREENSHOTS) console.log(`tg-screenshot copilot-skew-${SKEW}-turn-${i + 1}`);
            assert.ok(result, `turn ${i + 1}: no result`);
            assert.ok(!result.errorDetails, `turn ${i + 1}: ${JSON.stringify(result.errorDetails)}`);
            assert.ok(requests.some((r) => isMain(r) && r.status === 200), `turn ${i + 1}: no answered agent request`);
            for (const r of requests) {
                assert.ok(!isTooLong(r), `turn ${i + 1}: request ${r.id} rejected as too long: ${r.body_text}`);
                assert.ok(r.prompt_tokens <= WINDOW, `turn ${i + 1}: request ${r.id} has ${r.prompt_tokens} > ${WINDOW} tokens`);
            }
        });
    }

    after(async () => {
        const all = await upstreamRequests();
        if (DUMP) fs.writeFileSync(DUMP, JSON.stringify(all, null, 1));
        if (TRACE) {
            const copilot = vscode.extensions.getExtension('GitHub.copilot-chat');
            fs.writeFileSync(TRACE, JSON.stringify({
                format: 'tokengauge-count-trace/1',
                source: 'extension/test/host/copilot (scripts/test-copilot.sh), agent mode',
                vscode: vscode.version,
                copilotChat: copilot && copilot.packageJSON.version,
                model: { id: MODEL, family: model && model.family, maxInputTokens: model && model.maxInputTokens },
                turns: turns.filter((t) => t.trace).map((t) => ({ ...t.trace, summarized: t.summarized })),
            }));
        }
        if (RESULT) fs.writeFileSync(RESULT, JSON.stringify(report(all), null, 1));
    });

    /** The figures of the run. */
    function report(all) {
        const summaries = summarizations(all);
        const overflows = all.filter(isTooLong).length;
        const ratio = (a, b) => (a && b ? a / b : null);
        return {
            skew: SKEW, encoding: ENCODING, window: WINDOW, vendor: VENDOR, model: MODEL, family: model && model.family,
            toolDocs: TOOL_DOCS, toolTokens: all.filter((r) => r.prompt_tools).map((r) => r.prompt_tools), toolsWhole,
            maxInputTokens: model && model.maxInputTokens, turns: turns.length,
            failedTurns: turns.filter((t) => t.error).length + (TURNS - turns.length),
            requests: all.length, overflows, summaries,
            largestFill: Math.max(0, ...all.map(fill)),
            copilotOverTrue: rows.map((r) => ratio(r.copilot && r.copilot.total, r.true)),
            estimateOverTrue: rows.map((r) => ratio(r.estimate, r.true)),
            rows,
            turnsDetail: turns.map(({ requests, trace, ...t }) => ({ ...t, requests: requests.map((r) => r.id) })),
        };
    }

    it('summarized before the window was full, and no request overflowed it', async () => {
        const all = await upstreamRequests();
        const figures = report(all);
        console.log(`copilot-result ${JSON.stringify({ ...figures, rows: undefined, turnsDetail: undefined })}`);
        for (const row of rows) {
            const c = row.copilot;
            if (!c) continue;
            console.log(`  request ${row.id} (turn ${row.turn}): true ${row.true} = tools ${row.trueTools} + messages ` +
                `${(row.trueMessages || []).reduce((a, b) => a + b, 0)} (${(row.trueMessages || []).length}); copilot ${c.total} = tools ` +
                `${c.tools} (ours) + messages ${c.messages} (its o200k); our message answers + 3 each: ${c.answers} ` +
                `(${c.unmatched} not found); tokengauge's estimate ${row.estimate ?? '-'}`);
        }
        assert.deepStrictEqual(all.filter(isTooLong).map((r) => r.id), [], 'requests rejected as too long');
        assert.ok(figures.largestFill <= 1, `largest request ${pct(figures.largestFill)} of the window`);
        assert.ok(figures.summaries.length > 0, 'Copilot never summarized');
        assert.ok(all.some(carriesSummary), `no request carried ${SUMMARY_MARK} after summarizing`);
        const whole = TOOL_DOCS === 'full' ? '' : ` (${toolsWhole} tools' tokens as if whole)`;
        for (const s of figures.summaries) {
            assert.ok(s.fill <= FILL_RANGE[1], `${s.kind} summarization (request ${s.id}) after request ${s.before} ` +
                `at ${pct(s.fill)} of the window: a near miss (above ${pct(FILL_RANGE[1])})`);
            assert.ok(s.fillWhole >= FILL_RANGE[0], `${s.kind} summarization (request ${s.id}) after request ${s.before} ` +
                `at ${pct(s.fillWhole)} of the window${whole}: below ${pct(FILL_RANGE[0])}`);
        }
        const fills = figures.summaries.map((s) => s.fillWhole).sort((a, b) => a - b);
        const median = fills[Math.floor((fills.length - 1) / 2)];
        assert.ok(median >= FILL_MEDIAN, `median fill before summarizing ${pct(median)}${whole} < ${pct(FILL_MEDIAN)}: context thrown away early`);
        assert.deepStrictEqual(all.filter((r) => r.status !== 200).map((r) => `${r.id}: ${r.status}`), []);
    });

    // VS Code tells a provider nothing of chats: the dashboard groups requests by the messages they share.
    (TOKENGAUGE ? it : it.skip)('the dashboard sees the agent chat as one conversation, its summaries in it', async () => {
        // The agent's requests (tools sent) and Copilot's summarizations, found in the dashboard by the
        // input the upstream counted; the warm-up chat and Copilot's helpers are others.
        const all = await upstreamRequests();
        const agent = new Set(all.filter((r) => r.status === 200 && (isMain(r) || isSummarizeRequest(r))).map((r) => r.prompt_tokens));
        const requests = (await api().dashboard()).requests.filter((r) => r.time >= agentSince && r.modelId === MODEL);
        const mine = requests.filter((r) => agent.has(r.inputTokens));
        const conversations = new Set(mine.map((r) => r.conversation));
        const summaries = summarizations(all);
        const kinds = (kind) => mine.filter((r) => r.kind === kind).length;
        console.log(`dashboard: of ${agent.size} agent requests found ${mine.length}: ${kinds('turn')} turns, ` +
            `${kinds('summarize')} summarizations, ${mine.filter((r) => r.summarized).length} first requests after a summary; ` +
            `in order: ${requests.map((r) => `${r.kind}${r.summarized ? '+summary' : ''}@${r.conversation}`).join(' ')}`);
        assert.strictEqual(mine.length, agent.size, 'every agent request is in the dashboard');
        assert.deepStrictEqual([...conversations].length, 1, `one chat, one conversation: ${[...conversations]}`);
        assert.strictEqual(kinds('summarize'), summaries.length, 'each summarization marked');
        assert.ok(mine.some((r) => r.summarized), 'the request that brought a summary in is marked');
    });
});
