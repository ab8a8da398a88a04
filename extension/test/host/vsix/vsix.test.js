// The packaged tokengauge VSIX, installed with --install-extension, driven from a second extension
// (extension/test/consumer is the development extension in this run). tokengauge runs on a bare
// Python (TG_VSIX_PYTHON) so that everything it imports must come from the VSIX's bundled libraries.
// tokenGauge.pythonPath is not set: the server starts on PATH's Python, and moves to the Python
// extension's interpreter (that bare Python) once the suite installs that extension (a stand-in with
// its API, extension/test/python-stub), as a person does from the "Get the Python Extension" button.
'use strict';
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const vscode = require('vscode');
const { until } = require('../support');

const TOKENGAUGE = 'tokengauge.tokengauge';
const CONSUMER = 'tokengauge-tests.tokengauge-consumer';
const UPSTREAM = process.env.TG_UPSTREAM;

async function consumer() {
    return vscode.extensions.getExtension(CONSUMER).activate();
}

function percentile(values, p) {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The server's process id when it runs on `python` (the program it was started as), else false. */
async function runningOn(api, python) {
    const { pid } = await api.usage().catch(() => ({}));
    const program = pid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    return program === python && pid;
}

/** What the repository's `tokengauge count --json` says of a one-message request. */
function cliCount(modelId, text) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tg-')), 'request.json');
    fs.writeFileSync(file, JSON.stringify({ messages: [{ role: 'user', content: text }] }));
    const out = execFileSync(process.env.TG_PYTHON, ['-m', 'tokengauge', 'count', file, '--json', '--model', modelId], {
        cwd: process.env.TG_REPO,
    });
    return JSON.parse(out.toString());
}

describe('the installed VSIX', function () {
    this.timeout(60000);

    it('is installed (not the development copy) and answers a count from another extension', async () => {
        const installed = vscode.extensions.getExtension(TOKENGAUGE);
        assert.ok(installed, `${TOKENGAUGE} is not installed`);
        assert.ok(!installed.extensionPath.startsWith(process.env.TG_REPO), installed.extensionPath);
        assert.ok(fs.existsSync(path.join(installed.extensionPath, 'bundled', 'libs', 'common')));
        const tokens = await (await consumer()).countTokens('gpt-4o', 'hello from the VSIX');
        assert.ok(tokens > 0);
        // The extension host started with this window; its age is the upper bound of activation to first count.
        console.log(`    activation to first count: ${(process.uptime() * 1000).toFixed(0)} ms after the extension host started`);
    });

    it("moves its server to the Python extension's interpreter once that extension is installed", async () => {
        assert.strictEqual(vscode.workspace.getConfiguration('tokenGauge').get('pythonPath'), '');
        assert.ok(!vscode.extensions.getExtension('ms-python.python'));
        const api = await vscode.extensions.getExtension(TOKENGAUGE).activate();
        const onPath = await until('the server on PATH', () => runningOn(api, 'python3'));
        await vscode.commands.executeCommand('workbench.extensions.installExtension', vscode.Uri.file(process.env.TG_PYTHON_STUB));
        const moved = await until('the server on the new interpreter', () => runningOn(api, process.env.TG_VSIX_PYTHON));
        assert.notStrictEqual(moved, onPath);
    });

    it('runs its server on a bare Python with only the bundled libraries', async () => {
        const { pid } = await (await vscode.extensions.getExtension(TOKENGAUGE).activate()).usage();
        const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        const pythonPath = environ.find((entry) => entry.startsWith('PYTHONPATH=')) || '';
        const libs = path.join(vscode.extensions.getExtension(TOKENGAUGE).extensionPath, 'bundled', 'libs');
        assert.ok(pythonPath.includes(path.join(libs, 'common')), pythonPath);
        assert.match(pythonPath, /bundled\/libs\/cp3\d+/);
    });

    it('starts its server again on the interpreter the Python extension selects next, and back', async () => {
        const api = await vscode.extensions.getExtension(TOKENGAUGE).activate();
        const first = await runningOn(api, process.env.TG_VSIX_PYTHON);
        assert.ok(first);
        // Another path to the same bare Python: a venv's interpreter is such a link.
        const other = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tg-python-')), 'python3');
        fs.symlinkSync(process.env.TG_VSIX_PYTHON, other);
        const python = vscode.workspace.getConfiguration('python');
        await python.update('defaultInterpreterPath', other, vscode.ConfigurationTarget.Global);
        try {
            const second = await until('the server on the new interpreter', () => runningOn(api, other));
            assert.notStrictEqual(second, first);
            assert.ok((await (await consumer()).countTokens('gpt-4o', 'counted on the new interpreter')) > 0);
        } finally {
            await python.update('defaultInterpreterPath', process.env.TG_VSIX_PYTHON, vscode.ConfigurationTarget.Global);
        }
        await until('the server back on the first interpreter', () => runningOn(api, process.env.TG_VSIX_PYTHON));
    });

    it('lists the configured models and counts as the CLI does', async () => {
        const api = await consumer();
        const gpt = (await api.listModels()).find((m) => m.id === 'gpt-4o');
        assert.strictEqual(gpt.maxInputTokens, 128000 - 16384);
        const text = 'VSIX counting — 日本語 — {"x": [1, 2, 3]}';
        // A message's count is its estimated size less the 3 tokens Copilot adds to each message.
        assert.strictEqual(await api.countTokens('gpt-4o', text, true), cliCount('gpt-4o', text).messages[0].tokens - 3);
    });

    it('streams a chat with the usage part', async () => {
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'test-openai', 'sk-tg-vsix-test-7');
        const parts = await (await consumer()).chat('gpt-4o', 'Hello from the installed VSIX');
        const text = parts.filter((p) => p.kind === 'text').map((p) => p.value).join('');
        assert.strictEqual(text, 'ok: Hello from the installed VSIX');
        const usage = parts.find((p) => p.kind === 'data' && p.mimeType === 'usage');
        assert.ok(usage, JSON.stringify(parts));
        const { requests } = await (await fetch(`${UPSTREAM}/_control/requests?route=chat`)).json();
        assert.strictEqual(JSON.parse(usage.text).prompt_tokens, requests[requests.length - 1].prompt_tokens);
    });

    it('reports the count latency an extension sees, cold and memoized', async () => {
        const api = await consumer();
        const texts = Array.from({ length: 300 }, (_, i) => `line ${i}: const value${i} = compute(${i * 7}, "${'x'.repeat(i % 40)}");`);
        const cold = await api.timeCounts('gpt-4o', texts);
        const warm = await api.timeCounts('gpt-4o', texts);
        const ms = (v) => `${v.toFixed(3)} ms`;
        console.log(`    countTokens through vscode.lm from another extension, ${texts.length} strings: ` +
            `cold p50 ${ms(percentile(cold, 50))} p99 ${ms(percentile(cold, 99))}; ` +
            `memoized p50 ${ms(percentile(warm, 50))} p99 ${ms(percentile(warm, 99))}`);
        assert.ok(percentile(warm, 50) <= percentile(cold, 50), 'a memoized count is not slower than a cold one');
    });
});
