// The exact text a person reads for each way a request can fail, as a chat participant (Copilot)
// gets it from vscode.lm: what happened, naming the provider and the URL, then what to do.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { closedPort, configure, listed, sleep } = require('../support');
const { notifications } = require('../ui');

const UPSTREAM = process.env.TG_UPSTREAM;
const KEY = process.env.TG_UI_KEY;
const HOST = new URL(UPSTREAM).host;

/** The error message a consumer of vscode.lm gets from `id`. */
async function failure(id) {
    const model = await listed(id);
    try {
        const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('hello')], {});
        for await (const part of response.text) void part;
    } catch (error) {
        return error.message;
    }
    throw new Error(`${id} answered`);
}

const sized = { contextWindow: 32768, maxOutputTokens: 4096 };

describe('error texts, each as a person reads it', function () {
    this.timeout(120000);
    let closed;

    before(async () => {
        closed = await closedPort();
        await configure(
            [
                { id: 'unknown-host', baseUrl: 'http://nonexistent.invalid/v1', discover: false },
                { id: 'tls', baseUrl: `https://${HOST}/v1`, discover: false },
                { id: 'local', baseUrl: `${UPSTREAM}/v1`, discover: false },
                { id: 'closed', baseUrl: `http://127.0.0.1:${closed}/v1`, discover: false },
                { id: 'nov1', baseUrl: UPSTREAM, discover: false },
                { id: 'wrongkey', baseUrl: `${UPSTREAM}/v1`, discover: false },
            ],
            [
                { id: 'closed-model', provider: 'closed', ...sized },
                { id: 'nov1-model', provider: 'nov1', ...sized },
                { id: 'qwen2.5-coder:7b', provider: 'wrongkey' },
                { id: 'dns-model', provider: 'unknown-host', ...sized },
                { id: 'tls-model', provider: 'tls', ...sized },
                { id: 'no-such-model', provider: 'local', ...sized },
                { id: 'gpt-4o', provider: 'local' },
            ],
        );
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'local', KEY);
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'nov1', KEY);
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'wrongkey', 'sk-wrong-key-000');
    });

    // The reloaded window (ui-reload) starts with the Manage Models providers only.
    after(() => configure([], []));

    it('a closed port', async () => {
        assert.strictEqual(
            await failure('closed-model'),
            `closed could not be reached at http://127.0.0.1:${closed}/v1/chat/completions: nothing is listening at ` +
                `127.0.0.1:${closed} (connection refused). Start the server there, or correct closed's base URL in ` +
                'the tokenGauge.providers setting.',
        );
    });

    it('a base URL without /v1', async () => {
        assert.strictEqual(
            await failure('nov1-model'),
            `nov1 answered 404 Not Found at ${UPSTREAM}/chat/completions: its base URL ${UPSTREAM} does not end in ` +
                `/v1. Try ${UPSTREAM}/v1 as nov1's base URL in the tokenGauge.providers setting.`,
        );
    });

    it('a key the provider rejects', async () => {
        assert.strictEqual(
            await failure('qwen2.5-coder:7b'),
            `wrongkey rejected the API key at ${UPSTREAM}/v1/chat/completions (401 Unauthorized). Run 'Token Gauge: ` +
                "Set API Key' to enter a valid key for wrongkey.",
        );
    });

    it('a host name that does not resolve', async () => {
        assert.strictEqual(
            await failure('dns-model'),
            'unknown-host could not be reached at http://nonexistent.invalid/v1/chat/completions: the host name ' +
                "nonexistent.invalid was not found. Check the host name in unknown-host's base URL in the " +
                'tokenGauge.providers setting, and your network connection.',
        );
    });

    it('https:// to a server that speaks plain HTTP', async () => {
        assert.strictEqual(
            await failure('tls-model'),
            `tls could not be reached at https://${HOST}/v1/chat/completions: the TLS handshake with ${HOST} failed ` +
                "(wrong version number). If the server speaks plain HTTP, use http:// in tls's base URL in the " +
                'tokenGauge.providers setting.',
        );
    });

    it('a model the provider does not have', async () => {
        const text = await failure('no-such-model');
        assert.ok(
            text.startsWith(`local has no model named no-such-model at ${UPSTREAM}/v1/chat/completions (404 Not Found)`),
            text,
        );
        assert.ok(text.endsWith('Choose another model, or check the model id local expects.'), text);
    });

    it('a rate limit that asks for a longer wait than a chat is held for', async () => {
        await fetch(`${UPSTREAM}/_control/script`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
                responses: [{
                    status: 429,
                    headers: { 'retry-after': '90' },
                    content_type: 'application/json',
                    body: JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }),
                }],
            }),
        });
        assert.strictEqual(
            await failure('gpt-4o'),
            `local is limiting requests at ${UPSTREAM}/v1/chat/completions (429 Too Many Requests) and asks to wait ` +
                '90 s (it said: Rate limit reached for requests). Wait 90 s before sending again; if it keeps ' +
                "happening, check your plan's limits with local.",
        );
    });

    it('a proxy that refuses the connection', async () => {
        process.env.HTTP_PROXY = `http://127.0.0.1:${closed}`;
        try {
            await vscode.commands.executeCommand('tokenGauge.restartServer');
            assert.strictEqual(
                await failure('gpt-4o'),
                `local could not be reached at ${UPSTREAM}/v1/chat/completions: the proxy 127.0.0.1:${closed} failed ` +
                    '(connection refused). Check that proxy, or the HTTPS_PROXY, HTTP_PROXY and NO_PROXY environment ' +
                    'variables VS Code was started with.',
            );
        } finally {
            delete process.env.HTTP_PROXY;
            await vscode.commands.executeCommand('tokenGauge.restartServer');
        }
    });

    it('a provider that wants a key and has none: a notification offers to set it', async () => {
        await configure([{ id: 'nokey', baseUrl: `${UPSTREAM}/v1` }], []);
        let text;
        for (let i = 0; i < 60 && !text; i++) {
            text = (await notifications()).find((t) => t.startsWith('Token Gauge: nokey asked for an API key'));
            if (!text) await sleep(500);
        }
        assert.strictEqual(
            text,
            `Token Gauge: nokey asked for an API key at ${UPSTREAM}/v1/models (401 Unauthorized), and none is set. ` +
                "Run 'Token Gauge: Set API Key' to enter a valid key for nokey.",
        );
    });
});
