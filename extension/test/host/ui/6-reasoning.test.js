// OpenAI Responses reasoning across a tool call, in the real Copilot agent: the test upstream reasons
// (a reasoning item with encrypted content, its summary streamed), asks for read_file, and, stricter
// than the real API so that dropping it cannot pass, refuses the next request unless the call comes
// back after that very item, unaltered. The turn answers only if the item went out to VS Code in a
// thinking part (its id, the content in its metadata), came back in Copilot's history, and was sent
// again.
'use strict';
const assert = require('assert');
const { control } = require('../support');
const { reasoningModel, toolRound } = require('../reasoning');
const { ui } = require('../ui');

const MODEL = 'gpt-5';
const THOUGHT = 'Reading parser.py first shows what it does; one read_file call will do.';

describe('encrypted reasoning survives a tool call in the Copilot agent (Responses API)', function () {
    this.timeout(180000);
    let ready;

    before(async () => {
        ready = await reasoningModel({
            model: { id: MODEL, window: 400000 },
            provider: { id: 'responses-test', dialect: 'responses', baseUrl: `${process.env.TG_UPSTREAM}/v1`, discover: false },
            name: 'GPT-5 (reasoning)',
            options: { reasoningEffort: 'medium' },
            thought: THOUGHT,
            route: 'responses',
        });
    });

    after(async () => {
        await control('reset', { config: true });
    });

    it('sends the reasoning item back, unaltered, before the call it led to', async () => {
        const [first, second] = await toolRound(MODEL, ready.file, 'responses', ready.since);
        const kinds = (r) => r.json.input.map((i) => i.type || i.role);
        console.log(`reasoning rounds: ${[first, second].map((r) => `${r.id} reasoning=${JSON.stringify(r.json.reasoning)} ` +
            `items=${JSON.stringify(kinds(r))}`).join('; ')}`);
        for (const request of [first, second]) {
            assert.deepStrictEqual(request.json.reasoning, { effort: 'medium', summary: 'auto' });
            assert.deepStrictEqual(request.json.include, ['reasoning.encrypted_content']);
            assert.strictEqual(request.json.store, false);
        }
        const items = second.json.input;
        const call = items.findIndex((i) => i.type === 'function_call');
        assert.ok(call > 0, `a function call sent back: ${JSON.stringify(kinds(second))}`);
        const reasoning = items[call - 1];
        assert.strictEqual(reasoning.type, 'reasoning', `the reasoning item right before the call: ${JSON.stringify(kinds(second))}`);
        assert.match(reasoning.id, /^rs_/);
        assert.ok(reasoning.encrypted_content, 'its encrypted content');
        // The reasoning summary, as a person sees it in the chat view.
        const [shown] = await ui([{ shot: 'reasoning-in-agent-chat' }, { read: '.interactive-session' }]);
        assert.match(shown.join('\n'), /Read parser\.py/);
    });
});
