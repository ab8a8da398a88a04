// A second extension (extension/test/consumer, installed as a VSIX by scripts/test-extension.sh) uses
// tokengauge only through `vscode.lm`, as Copilot Chat does: it must see the streamed parts and the
// final `usage` data part with the real usage the API reported.
// Runs after 1-provider.test.js (files run in name order): its exact-count checks need a model
// whose correction factor no usage report has moved yet.
'use strict';
const assert = require('assert');
const vscode = require('vscode');

const UPSTREAM = process.env.TG_UPSTREAM;
const CONSUMER = 'tokengauge-tests.tokengauge-consumer';

async function consumer() {
    const extension = vscode.extensions.getExtension(CONSUMER);
    assert.ok(extension, `${CONSUMER} is not installed`);
    return extension.activate();
}

async function lastUpstreamRequest() {
    const response = await fetch(`${UPSTREAM}/_control/requests?route=chat`);
    const { requests } = await response.json();
    return requests[requests.length - 1];
}

describe('a second extension using tokengauge through vscode.lm', function () {
    this.timeout(60000);

    it('sees the models and their input budget', async () => {
        const listed = await (await consumer()).listModels();
        const gpt = listed.find((m) => m.id === 'gpt-4o');
        assert.ok(gpt, `gpt-4o not listed: ${JSON.stringify(listed)}`);
        assert.strictEqual(gpt.maxInputTokens, 128000 - 16384);
    });

    it('gets the same counts as tokengauge\'s own callers', async () => {
        const api = await consumer();
        const text = 'Counting from another extension: 東京 — {"a": [1, 2]}';
        const ours = (await vscode.lm.selectChatModels({ vendor: 'tokengauge', id: 'gpt-4o' }))[0];
        assert.strictEqual(await api.countTokens('gpt-4o', text), await ours.countTokens(text));
        assert.strictEqual(
            await api.countTokens('gpt-4o', text, true),
            await ours.countTokens(vscode.LanguageModelChatMessage.User(text)),
        );
    });

    it('receives the text and then the usage data part with the API\'s real usage', async () => {
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'test-openai', 'sk-tg-consumer-test-42');
        const parts = await (await consumer()).chat('gpt-4o', 'Hello from the consumer extension');
        const text = parts.filter((p) => p.kind === 'text').map((p) => p.value).join('');
        assert.strictEqual(text, 'ok: Hello from the consumer extension');
        const usageParts = parts.filter((p) => p.kind === 'data' && p.mimeType === 'usage');
        assert.strictEqual(usageParts.length, 1, `parts seen: ${JSON.stringify(parts)}`);
        assert.strictEqual(parts[parts.length - 1], usageParts[0], 'usage comes last');
        const usage = JSON.parse(usageParts[0].text);
        const upstream = await lastUpstreamRequest();
        assert.strictEqual(usage.prompt_tokens, upstream.prompt_tokens);
        assert.ok(usage.completion_tokens > 0);
        assert.strictEqual(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
    });
});
