// tokengauge inside a real VS Code: the development extension, the real Python server, the test
// upstream on 127.0.0.1 (all wired by scripts/test-extension.sh).
'use strict';
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const vscode = require('vscode');

const PYTHON = process.env.TG_PYTHON;
const REPO = process.env.TG_REPO;
const UPSTREAM = process.env.TG_UPSTREAM;

async function models() {
    for (let i = 0; i < 100; i++) {
        const found = await vscode.lm.selectChatModels({ vendor: 'tokengauge' });
        if (found.length) return found;
        await new Promise((r) => setTimeout(r, 200)); // the server starts with the extension
    }
    return [];
}

async function model(id) {
    const found = (await models()).find((m) => m.id === id);
    assert.ok(found, `model ${id} not listed`);
    return found;
}

/** What `tokengauge count --json` says of a one-message request. */
function cliCount(modelId, text, ...extra) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tg-')), 'request.json');
    fs.writeFileSync(file, JSON.stringify({ messages: [{ role: 'user', content: text }] }));
    const out = execFileSync(PYTHON, ['-m', 'tokengauge', 'count', file, '--json', '--model', modelId, ...extra], {
        cwd: REPO,
    });
    return JSON.parse(out.toString());
}

async function upstreamRequests() {
    const response = await fetch(`${UPSTREAM}/_control/requests?route=chat`);
    return (await response.json()).requests;
}

describe('tokengauge in VS Code', function () {
    this.timeout(60000);

    it('lists the configured models with the server\'s input budget', async () => {
        const listed = await models();
        const gpt = listed.find((m) => m.id === 'gpt-4o');
        assert.ok(gpt, `gpt-4o not listed: ${listed.map((m) => m.id)}`);
        assert.strictEqual(gpt.maxInputTokens, cliCount('gpt-4o', 'x').maxInputTokens);
        assert.strictEqual(gpt.maxInputTokens, 128000 - 16384);
        const small = listed.find((m) => m.id === 'local-small');
        assert.strictEqual(small.maxInputTokens, 8192 - 2048);
        assert.strictEqual(small.family, 'llama-3.1');
    });

    it('lists the models an Ollama-style provider reports, with their window, without a key', async () => {
        let listed = [];
        for (let i = 0; i < 100 && !listed.some((m) => m.id === 'qwen2.5-coder:7b'); i++) {
            listed = await models();
            await new Promise((r) => setTimeout(r, 100)); // discovery runs after the server starts
        }
        assert.deepStrictEqual(listed.map((m) => m.id).sort(), ['gpt-4o', 'local-small', 'qwen2.5-coder:7b']);
        const qwen = listed.find((m) => m.id === 'qwen2.5-coder:7b');
        // The window /api/show reported (not the 32,768 fallback; Ollama has it loaded whole, as
        // /api/ps says), less the usual output reservation.
        const expected = cliCount('qwen2.5-coder:7b', 'x', '--context-window', '40960').maxInputTokens;
        assert.strictEqual(qwen.maxInputTokens, expected);
    });

    it('counts strings and messages as the server\'s CLI does', async () => {
        const gpt = await model('gpt-4o');
        const text = 'The quick brown fox — 日本語のテキスト — {"json": [1, 2, 3]}';
        const report = cliCount('gpt-4o', text);
        const message = report.messages[0];
        // A message's count is its estimated size less the 3 tokens Copilot adds to each message.
        assert.strictEqual(await gpt.countTokens(vscode.LanguageModelChatMessage.User(text)), message.tokens - 3);
        // A string: its raw count (a one-part message's raw count is its text's), CJK apart.
        const { text: scale, cjk: cjkScale } = report.scales;
        const expected = Math.ceil((message.raw - message.cjk) * scale + message.cjk * cjkScale - 1e-9);
        assert.ok(message.cjk > 0 && message.cjk < message.raw, 'the text has some CJK');
        assert.strictEqual(await gpt.countTokens(text), expected);
        // Copilot passes plain objects with numeric roles: counted the same.
        const plain = { role: 1, content: [new vscode.LanguageModelTextPart(text)], name: undefined };
        assert.strictEqual(await gpt.countTokens(plain), message.tokens - 3);
    });

    it('streams a reply from the API, with the key from SecretStorage', async () => {
        const key = 'sk-tg-host-test-0123456789';
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'test-openai', key);
        const gpt = await model('gpt-4o');
        const response = await gpt.sendRequest(
            [vscode.LanguageModelChatMessage.User('Say something about tokens please')],
            {},
            new vscode.CancellationTokenSource().token,
        );
        let text = '';
        for await (const chunk of response.text) text += chunk;
        assert.strictEqual(text, 'ok: Say something about tokens please');
        const requests = await upstreamRequests();
        const last = requests[requests.length - 1];
        assert.strictEqual(last.headers.authorization, `Bearer ${key}`);
        assert.ok(last.json.stream_options.include_usage);
    });

    it('streams a tool call', async () => {
        await fetch(`${UPSTREAM}/_control/script`, {
            method: 'POST',
            body: JSON.stringify({ responses: [{ reply: { tool_call: true, tool_arguments: { path: 'a.py' } } }] }),
        });
        const gpt = await model('gpt-4o');
        const tool = { name: 'read_file', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } };
        const response = await gpt.sendRequest(
            [vscode.LanguageModelChatMessage.User('read it')],
            { tools: [tool] },
            new vscode.CancellationTokenSource().token,
        );
        const calls = [];
        for await (const part of response.stream) {
            if (part instanceof vscode.LanguageModelToolCallPart) calls.push(part);
        }
        assert.strictEqual(calls.length, 1);
        assert.strictEqual(calls[0].name, 'read_file');
        assert.deepStrictEqual(calls[0].input, { path: 'a.py' });
    });

    it('shows the real usage in the status bar after a response', async () => {
        const api = vscode.extensions.getExtension('tokengauge.tokengauge').exports;
        const gpt = await model('gpt-4o');
        // A conversation's request (a lone question without tools is taken for Copilot's helpers).
        const response = await gpt.sendRequest(
            [
                vscode.LanguageModelChatMessage.User('a question'),
                vscode.LanguageModelChatMessage.Assistant('an answer'),
                vscode.LanguageModelChatMessage.User('status please'),
            ],
            {},
            new vscode.CancellationTokenSource().token,
        );
        for await (const chunk of response.text) void chunk;
        const requests = await upstreamRequests();
        const trueInput = requests[requests.length - 1].prompt_tokens;
        const usage = await api.usage();
        assert.strictEqual(usage.latest.inputTokens, trueInput);
        // Against GPT-4o's input budget (its 128k window less the 16,384 tokens kept for output).
        const budget = 111616;
        const percent = Math.round((trueInput / budget) * 100);
        assert.strictEqual(api.statusText(), `$(pulse) ${trueInput} / 112k · ${percent}%`);
    });

    it('keeps working after the Python server is killed', async () => {
        const api = vscode.extensions.getExtension('tokengauge.tokengauge').exports;
        const { pid } = await api.usage();
        process.kill(pid, 'SIGKILL');
        const gpt = await model('gpt-4o');
        let text = '';
        for (let attempt = 0; attempt < 20 && !text; attempt++) {
            try {
                const response = await gpt.sendRequest(
                    [vscode.LanguageModelChatMessage.User('are you back')],
                    {},
                    new vscode.CancellationTokenSource().token,
                );
                for await (const chunk of response.text) text += chunk;
            } catch (error) {
                await new Promise((r) => setTimeout(r, 500)); // the client restarts the server
            }
        }
        assert.strictEqual(text, 'ok: are you back');
        const after = await api.usage();
        assert.notStrictEqual(after.pid, pid);
    });
});
