// A reasoning model's tool loop in the real Copilot Chat agent, through the installed VSIX, against a
// strict stand-in of its server (tests/harness/fake_upstream/reasoning.py: DeepSeek V4, which refuses a
// tool-call message without its `reasoning_content` in any later request, or OpenRouter, which refuses
// a tool call without the `reasoning_details` it came with). Four agent turns, the first of three
// read_file rounds, the others of one; wired by scripts/test-copilot-reasoning.sh, once per server and
// provider: tokengauge (asserted) or VS Code's built-in Custom Endpoint on the same stand-in (measured,
// for docs/BENCHMARKS.md).
//
// Asserted for tokengauge: every turn answers and the stand-in refused nothing; the chats the extension
// handed its server (what Copilot kept of each answer and sent back, converted) carry the reasoning of
// the current turn's tool calls in the thinking part's metadata (the round trip through VS Code and
// Copilot); the last request sent the stand-in every tool call's reasoning, earlier turns' too, which
// Copilot drops from its history (the server's memory puts it back). At the end one
// `reasoning-result {json}` line with the figures.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { activateCopilot, chat: driveChat, findModel, withTimeout } = require('../copilotDriver');
const { control } = require('../support');

const env = process.env;
const SERVER = env.TG_REASONING_SERVER; // deepseek or openrouter
const MODEL = env.TG_REASONING_MODEL;
const PROVIDER = env.TG_REASONING_PROVIDER;
const API_KEY = env.TG_REASONING_API_KEY;
const THOUGHT = env.TG_REASONING_THOUGHT;
const VENDOR = env.TG_COPILOT_VENDOR || 'tokengauge';
const TOKENGAUGE = VENDOR === 'tokengauge';
const UPSTREAM = env.TG_UPSTREAM;
const WINDOW = 128000;
const OUTPUT = 8192;
const TURN_TIMEOUT_MS = 90000;
const READS = [['parser.py', 'lexer.py', 'tests.py'], ['parser.py'], ['lexer.py'], ['tests.py']];
const selector = { vendor: VENDOR, id: MODEL };
const CARRIED = ['field', 'details', 'calls', 'extra'];

const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;

async function upstreamRequests(since = 0) {
    return (await control(`requests?route=chat&since=${since}`)).requests.filter((r) => r.json && r.json.model === MODEL);
}

const chat = (query, mode) => driveChat(selector, query, mode);

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

describe(`a reasoning model's tool loop in the real Copilot agent (${VENDOR}, ${SERVER} stand-in)`, function () {
    this.timeout(TURN_TIMEOUT_MS + 30000);
    const turns = [];
    const chats = [];

    before(async function () {
        this.timeout(120000);
        assert.ok(UPSTREAM && SERVER && MODEL, 'TG_UPSTREAM, TG_REASONING_SERVER and TG_REASONING_MODEL must be set');
        const warmSelector = { vendor: 'tokengauge' };
        assert.ok(await findModel(warmSelector), 'no tokengauge model listed');
        await vscode.commands.executeCommand('tokenGauge.setApiKey', PROVIDER, API_KEY);
        const workspace = vscode.workspace.workspaceFolders[0].uri;
        for (const [name, text] of [['parser.py', 'def parse(text):\n    return text.split(",")\n'],
            ['lexer.py', 'def lex(text):\n    return list(text)\n'], ['tests.py', 'assert parse("a b") == ["a", "b"]\n']]) {
            await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(workspace, name), Buffer.from(text, 'utf8'));
        }
        await activateCopilot(warmSelector);
        if (!TOKENGAUGE) {
            await vscode.commands.executeCommand('lm.addLanguageModelsProviderGroup', {
                name: 'Reasoning', vendor: 'customendpoint', apiKey: API_KEY, apiType: 'chat-completions',
                models: [{ id: MODEL, name: MODEL, url: `${UPSTREAM}/v1`, toolCalling: true, vision: false,
                    thinking: true, contextWindow: WINDOW, maxOutputTokens: OUTPUT }],
            });
        }
        assert.ok(await findModel(selector), `${VENDOR} model ${MODEL} not listed`);
        await withTimeout(chat('hello', 'ask'), TURN_TIMEOUT_MS, 'warm-up').catch((e) => console.log(`warm-up: ${e.message}`));
        await vscode.commands.executeCommand('workbench.action.chat.newChat');
        await control('reset', {});
    });

    READS.forEach((paths, i) => {
        it(`agent turn ${i + 1} (${paths.length} read${paths.length > 1 ? 's' : ''}) answers`, async () => {
            const since = (await upstreamRequests()).reduce((last, r) => Math.max(last, r.id), 0);
            const workspace = vscode.workspace.workspaceFolders[0].uri;
            if (TOKENGAUGE) api().diagnostics.startCountRecording(1_000_000);
            let result;
            let error;
            try {
                result = await withTimeout(chat(query(workspace, paths), 'agent'), TURN_TIMEOUT_MS, `turn ${i + 1}`);
            } catch (e) {
                error = e;
                await vscode.commands.executeCommand('workbench.action.chat.cancel').then(undefined, () => undefined);
            } finally {
                if (TOKENGAUGE) chats.push(...api().diagnostics.stopCountRecording().chats.filter((c) => c.tools.length > 0));
            }
            const requests = await upstreamRequests(since);
            const failure = error ? error.message : result && result.errorDetails && result.errorDetails.message;
            const refusal = requests.find((r) => r.status !== 200);
            turns.push({ turn: i + 1, reads: paths.length, statuses: requests.map((r) => r.status), failure,
                refusal: refusal && `${refusal.status} ${(refusal.refused || '').slice(0, 200)}` });
            console.log(`turn ${i + 1}: ${requests.map((r) => `${r.id} ${r.status}`).join(', ')}${failure ? `; failed: ${failure}` : ''}`);
            if (!TOKENGAUGE) return; // measured, not asserted
            assert.ok(!failure, `turn ${i + 1}: ${failure}`);
            assert.deepStrictEqual(requests.filter((r) => r.status !== 200).map((r) => `${r.id}: ${r.status} ${r.refused}`), []);
        });
    });

    (TOKENGAUGE ? it : it.skip)('the reasoning rode back through VS Code, and every call\'s went back to the server', async () => {
        // Within a turn, what Copilot kept of each answer: the thinking part with our metadata.
        const carried = (m) => m.content.some((p) => p.type === 'thinking' && CARRIED.some((k) => k in p));
        const loops = chats.map((c) => currentTurn(c.messages).filter((m) => m.content.some((p) => p.type === 'toolCall')));
        const kept = loops.flat();
        console.log(`chats handed to the server: ${chats.length}; the current turn's tool-call messages in them: ${kept.length}, ` +
            `with the reasoning's metadata: ${kept.filter(carried).length}`);
        assert.ok(kept.length >= 3, `the current turn's tool-call messages in the chats: ${kept.length}`);
        assert.deepStrictEqual(kept.filter((m) => !carried(m)).map((m) => JSON.stringify(m.content.map((p) => p.type))), []);
        // The last request: every tool call of the conversation with its reasoning, as the server reads it.
        const all = await upstreamRequests();
        const last = all[all.length - 1];
        const called = last.json.messages.filter((m) => m.role === 'assistant' && (m.tool_calls || []).length > 0);
        const reasoning = (m) => (SERVER === 'openrouter' ? (m.reasoning_details || [])[0] || {} : { text: m.reasoning_content });
        console.log(`last request: ${called.length} tool-call messages, their reasoning: ${JSON.stringify(called.map((m) => reasoning(m).text))}`);
        assert.strictEqual(called.length, READS.flat().length);
        assert.deepStrictEqual(called.map((m) => reasoning(m).text), called.map(() => THOUGHT));
    });

    after(async () => {
        const all = await upstreamRequests();
        const failed = turns.filter((t) => t.failure);
        console.log(`reasoning-result ${JSON.stringify({
            vendor: VENDOR, server: SERVER, model: MODEL, turns: READS.length, turnsOk: turns.length - failed.length,
            requests: all.length, refused: all.filter((r) => r.status !== 200).length,
            errors: failed.slice(0, 2).map((t) => ({ turn: t.turn, message: (t.refusal || t.failure).slice(0, 160) })),
            statuses: turns.map((t) => t.statuses),
        })}`);
    });
});
