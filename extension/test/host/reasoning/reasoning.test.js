// A reasoning model's tool loop in the real Copilot Chat agent, through the installed VSIX, against
// strict stand-ins of its server (tests/harness/fake_upstream/reasoning.py: DeepSeek V4, which refuses a
// tool-call message without its `reasoning_content` in any later request; OpenRouter serving Gemini 3,
// which refuses a tool call without the `reasoning_details` it came with), one test upstream each.
// Four agent turns per server, the first of three read_file rounds, the others of one; wired by
// scripts/test-copilot-reasoning.sh, once per provider: tokengauge (asserted) or VS Code's built-in
// Custom Endpoint on the same stand-ins (measured, for docs/BENCHMARKS.md).
//
// Asserted for tokengauge: every turn answers and the stand-in refused nothing; the chats the extension
// handed its server (what Copilot kept of each answer and sent back, converted) carry the reasoning of
// the current turn's tool calls in the thinking part's metadata (the round trip through VS Code and
// Copilot); the last request sent the stand-in every tool call's reasoning, earlier turns' too, which
// Copilot drops from its history (the server's memory puts it back). At the end of each server one
// `reasoning-result {json}` line with the figures.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { activateCopilot, chat, findModel, withTimeout } = require('../copilotDriver');
const { control } = require('../support');

const env = process.env;
// [{server: deepseek | openrouter, model, provider, upstream}]
const RUNS = JSON.parse(env.TG_REASONING_RUNS || '[]');
const API_KEY = env.TG_REASONING_API_KEY;
const THOUGHT = env.TG_REASONING_THOUGHT;
const VENDOR = env.TG_COPILOT_VENDOR || 'tokengauge';
const TOKENGAUGE = VENDOR === 'tokengauge';
const WINDOW = 128000;
const OUTPUT = 8192;
const TURN_TIMEOUT_MS = 90000;
const READS = [['parser.py', 'lexer.py', 'tests.py'], ['parser.py'], ['lexer.py'], ['tests.py']];
const CARRIED = ['field', 'details', 'calls', 'extra'];

const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;

/** The turn's query: read `paths`, the read_file calls scripted for the stand-in to make. */
function query(workspace, paths) {
    const calls = paths.map((p) => ({ name: 'read_file', arguments: { filePath: vscode.Uri.joinPath(workspace, p).fsPath, startLine: 1, endLine: 3 } }));
    return `Read ${paths.join(', ')} and say what is wrong.\n<tg-tool-calls>${JSON.stringify(calls)}</tg-tool-calls>`;
}

/** The assistant messages of a chat's current turn (after its last user message that is not tool
 * results: the one that asked). */
function currentTurn(messages) {
    const asked = (m) => m.role === 'user' && !m.content.some((p) => p.type === 'toolResult');
    let last = -1;
    messages.forEach((m, i) => { if (asked(m)) last = i; });
    return messages.slice(last + 1).filter((m) => m.role === 'assistant');
}

describe(`reasoning models' tool loops in the real Copilot agent (${VENDOR})`, function () {
    this.timeout(120000);

    before(async () => {
        assert.ok(RUNS.length > 0 && THOUGHT, 'TG_REASONING_RUNS and TG_REASONING_THOUGHT must be set');
        assert.ok(await findModel({ vendor: 'tokengauge' }), 'no tokengauge model listed');
        for (const run of RUNS) await vscode.commands.executeCommand('tokenGauge.setApiKey', run.provider, API_KEY);
        const workspace = vscode.workspace.workspaceFolders[0].uri;
        for (const [name, text] of [['parser.py', 'def parse(text):\n    return text.split(",")\n'],
            ['lexer.py', 'def lex(text):\n    return list(text)\n'], ['tests.py', 'assert parse("a b") == ["a", "b"]\n']]) {
            await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(workspace, name), Buffer.from(text, 'utf8'));
        }
        await activateCopilot({ vendor: 'tokengauge' });
        if (!TOKENGAUGE) {
            await vscode.commands.executeCommand('lm.addLanguageModelsProviderGroup', {
                name: 'Reasoning', vendor: 'customendpoint', apiKey: API_KEY, apiType: 'chat-completions',
                models: RUNS.map((run) => ({ id: run.model, name: run.model, url: `${run.upstream}/v1`, toolCalling: true,
                    vision: false, thinking: true, contextWindow: WINDOW, maxOutputTokens: OUTPUT })),
            });
        }
    });

    for (const run of RUNS) describe(`${run.server} stand-in, ${run.model}`, function () {
        const selector = { vendor: VENDOR, id: run.model };
        const requestsSince = async (since = 0) => (await control(`requests?route=chat&since=${since}`, undefined, run.upstream))
            .requests.filter((r) => r.json && r.json.model === run.model);
        const turns = [];
        const chats = [];

        before(async () => {
            assert.ok(await findModel(selector), `${VENDOR} model ${run.model} not listed`);
            // Copilot sends its helpers (titles, progress) to the model of the last request: make it this one.
            await withTimeout(chat(selector, 'hello', 'ask'), TURN_TIMEOUT_MS, 'warm-up').catch((e) => console.log(`warm-up: ${e.message}`));
            await vscode.commands.executeCommand('workbench.action.chat.newChat');
            await control('reset', {}, run.upstream);
        });

        READS.forEach((paths, i) => {
            it(`agent turn ${i + 1} (${paths.length} read${paths.length > 1 ? 's' : ''}) answers`, async () => {
                const since = (await requestsSince()).reduce((last, r) => Math.max(last, r.id), 0);
                const workspace = vscode.workspace.workspaceFolders[0].uri;
                if (TOKENGAUGE) api().diagnostics.startCountRecording(1_000_000);
                let result;
                let error;
                try {
                    result = await withTimeout(chat(selector, query(workspace, paths), 'agent'), TURN_TIMEOUT_MS, `turn ${i + 1}`);
                } catch (e) {
                    error = e;
                    await vscode.commands.executeCommand('workbench.action.chat.cancel').then(undefined, () => undefined);
                } finally {
                    if (TOKENGAUGE) chats.push(...api().diagnostics.stopCountRecording().chats.filter((c) => c.tools.length > 0));
                }
                const requests = await requestsSince(since);
                const failure = error ? error.message : result && result.errorDetails && result.errorDetails.message;
                const refusal = requests.find((r) => r.status !== 200);
                turns.push({ turn: i + 1, reads: paths.length, statuses: requests.map((r) => r.status), failure,
                    refusal: refusal && `${refusal.status} ${(refusal.refused || '').slice(0, 200)}` });
                console.log(`${run.server} turn ${i + 1}: ${requests.map((r) => `${r.id} ${r.status}`).join(', ')}${failure ? `; failed: ${failure}` : ''}`);
                if (!TOKENGAUGE) return; // measured, not asserted
                assert.ok(!failure, `turn ${i + 1}: ${failure}`);
                assert.deepStrictEqual(requests.filter((r) => r.status !== 200).map((r) => `${r.id}: ${r.status} ${r.refused}`), []);
            });
        });

        (TOKENGAUGE ? it : it.skip)('the reasoning rode back through VS Code, and every call\'s went back to the server', async () => {
            // Within a turn, what Copilot kept of each answer: the thinking part with our metadata.
            const carried = (m) => m.content.some((p) => p.type === 'thinking' && CARRIED.some((k) => k in p));
            const kept = chats.flatMap((c) => currentTurn(c.messages).filter((m) => m.content.some((p) => p.type === 'toolCall')));
            console.log(`${run.server}: chats handed to the server: ${chats.length}; the current turn's tool-call messages in them: ` +
                `${kept.length}, with the reasoning's metadata: ${kept.filter(carried).length}`);
            assert.ok(kept.length >= 3, `the current turn's tool-call messages in the chats: ${kept.length}`);
            assert.deepStrictEqual(kept.filter((m) => !carried(m)).map((m) => JSON.stringify(m.content.map((p) => p.type))), []);
            // The last request: every tool call of the conversation with its reasoning, as the server reads it.
            const all = await requestsSince();
            const called = all[all.length - 1].json.messages.filter((m) => m.role === 'assistant' && (m.tool_calls || []).length > 0);
            const reasoning = (m) => (run.server === 'openrouter' ? (m.reasoning_details || [])[0] || {} : { text: m.reasoning_content });
            console.log(`${run.server}: last request: ${called.length} tool-call messages, their reasoning: ${JSON.stringify(called.map((m) => reasoning(m).text))}`);
            assert.strictEqual(called.length, READS.flat().length);
            assert.deepStrictEqual(called.map((m) => reasoning(m).text), called.map(() => THOUGHT));
        });

        after(async () => {
            const all = await requestsSince();
            const failed = turns.filter((t) => t.failure);
            console.log(`reasoning-result ${JSON.stringify({
                vendor: VENDOR, server: run.server, model: run.model, turns: READS.length, turnsOk: turns.length - failed.length,
                requests: all.length, refused: all.filter((r) => r.status !== 200).length,
                errors: failed.slice(0, 2).map((t) => ({ turn: t.turn, message: (t.refusal || t.failure).slice(0, 160) })),
                statuses: turns.map((t) => t.statuses),
            })}`);
        });
    });
});
