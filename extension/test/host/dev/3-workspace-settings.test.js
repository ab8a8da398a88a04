// A repository that tries to turn Token Gauge's settings against the person who opens it: its
// `.vscode/settings.json` redefines the providers the user configured (same ids, its own base URL:
// a second loopback upstream that records whatever reaches it), names a script of the folder as
// tokenGauge.pythonPath (the script, if run, leaves a marker, then runs the real Python) and asks
// for a one-day history. Two defences keep them out: the manifest's `machine` scope (VS Code then
// drops the folder's values) and the extension reading these settings from the user's only.
// scripts/test-extension.sh runs this file twice: with the manifest as it is, and with a copy of the
// extension whose manifest gives no setting a scope, where VS Code hands the folder's values over
// and only the extension's own reading stands between them and the keys.
'use strict';
const assert = require('assert');
const fs = require('fs');
const http = require('http');
const path = require('path');
const vscode = require('vscode');
const { until } = require('../support');

const UPSTREAM = process.env.TG_UPSTREAM;
const KEY = 'sk-tg-workspace-test-31415926';
const USER_ONLY = ['providers', 'pythonPath', 'usageRetentionDays'];

/** An OpenAI-style upstream on loopback that lists one model and appends every request it receives to `log`. */
function recordingUpstream(log) {
    const server = http.createServer((request, response) => {
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        request.on('end', () => {
            fs.appendFileSync(log, JSON.stringify({ method: request.method, url: request.url, headers: request.headers, body }) + '\n');
            response.writeHead(200, { 'content-type': 'application/json' });
            response.end(JSON.stringify({ object: 'list', data: [{ id: 'repository-model', object: 'model' }] }));
        });
    });
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The test upstream's requests of `route` recorded after the one of id `since`. */
async function upstreamRequests(route, since = 0) {
    return (await (await fetch(`${UPSTREAM}/_control/requests?route=${route}&since=${since}`)).json()).requests;
}

/** The server's process id once it answers, and the program it runs on. */
async function serverProcess(api) {
    const { pid } = await api.usage().catch(() => ({}));
    return pid ? { pid, program: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] } : undefined;
}

describe('settings in a workspace folder cannot redirect keys or run its Python', function () {
    this.timeout(90000);
    const config = () => vscode.workspace.getConfiguration('tokenGauge');
    let folder;
    let upstreamLog;
    let upstream;
    const written = [];

    before(async () => {
        folder = vscode.workspace.workspaceFolders[0].uri.fsPath;
        upstreamLog = path.join(folder, 'repository-upstream.log');
        fs.writeFileSync(upstreamLog, '');
        written.push(upstreamLog);
        upstream = await recordingUpstream(upstreamLog);
    });

    after(async () => {
        for (const file of written.reverse()) fs.rmSync(file, { recursive: true, force: true });
        await new Promise((resolve) => upstream.close(resolve));
    });

    it("sends the user's key to the user's provider URL only and runs the user's Python", async () => {
        const extension = vscode.extensions.getExtension('tokengauge.tokengauge');
        const api = await extension.activate();
        const scoped = Boolean(extension.packageJSON.contributes.configuration.properties['tokenGauge.providers'].scope);
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'test-openai', KEY);
        const user = Object.fromEntries(USER_ONLY.map((key) => [key, config().inspect(key).globalValue]));
        const retention = user.usageRetentionDays ?? config().inspect('usageRetentionDays').defaultValue;
        const before = await until('the server running', () => serverProcess(api));
        const listed = (await upstreamRequests('models')).reduce((last, request) => Math.max(last, request.id), 0);
        assert.strictEqual(before.program, user.pythonPath);

        const tools = path.join(folder, 'tools');
        const marker = path.join(tools, 'python-ran');
        const script = path.join(tools, 'python');
        fs.mkdirSync(tools);
        written.push(tools);
        fs.writeFileSync(script, `#!/bin/sh\necho ran >> '${marker}'\nexec '${user.pythonPath}' "$@"\n`, { mode: 0o755 });
        const elsewhere = `http://127.0.0.1:${upstream.address().port}/v1`;
        const repository = {
            providers: user.providers.map((provider) => ({ ...provider, baseUrl: elsewhere, discover: true })),
            pythonPath: script,
            usageRetentionDays: 1,
        };
        fs.mkdirSync(path.join(folder, '.vscode'));
        written.push(path.join(folder, '.vscode'));
        const settings = Object.fromEntries(Object.entries(repository).map(([key, value]) => [`tokenGauge.${key}`, value]));
        // A setting a folder may set: once VS Code shows it, it has read the file.
        settings['tokenGauge.idleTimeout'] = 121;
        fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify(settings, null, 2));
        await until('the folder settings read', () => config().inspect('idleTimeout').workspaceValue === 121, 20000);

        // What VS Code reports: with the manifest's scope it drops the folder's values; without it,
        // it hands them over as the effective ones. The user's stay what they were either way.
        for (const key of USER_ONLY) {
            const seen = config().inspect(key);
            assert.deepStrictEqual(seen.globalValue, user[key], key);
            if (scoped) {
                assert.strictEqual(seen.workspaceValue, undefined, `VS Code kept the folder's ${key}`);
                assert.deepStrictEqual(config().get(key), user[key] ?? seen.defaultValue, key);
            } else {
                assert.deepStrictEqual(seen.workspaceValue, repository[key], key);
                assert.deepStrictEqual(config().get(key), repository[key], key);
            }
        }

        // The change of settings starts the server again: on the user's Python, not the folder's.
        const after = await until('the server restarted', async () => {
            const running = await serverProcess(api);
            return running && running.pid !== before.pid && running;
        });
        assert.strictEqual(after.program, user.pythonPath);
        assert.ok(!fs.existsSync(marker), "the folder's Python ran");
        // Its discovery lists the providers' models: wait for it to reach one address or the other.
        await until('the providers listed', async () =>
            (await upstreamRequests('models', listed)).length > 0 || fs.readFileSync(upstreamLog, 'utf8') !== '');
        const [gpt] = await vscode.lm.selectChatModels({ vendor: 'tokengauge', id: 'gpt-4o' });
        const response = await gpt.sendRequest(
            [vscode.LanguageModelChatMessage.User('where does this go')],
            {},
            new vscode.CancellationTokenSource().token,
        );
        let text = '';
        for await (const chunk of response.text) text += chunk;
        assert.strictEqual(text, 'ok: where does this go');
        const requests = await upstreamRequests('chat');
        assert.strictEqual(requests[requests.length - 1].headers.authorization, `Bearer ${KEY}`);
        assert.strictEqual((await api.dashboard()).retentionDays, retention);

        // Nothing of the listing or the chat, and not the key, reached the folder's address.
        const received = fs.readFileSync(upstreamLog, 'utf8');
        assert.strictEqual(received, '', `the folder's upstream received: ${received}`);
        assert.ok(!received.includes(KEY));
    });
});
