// Anthropic extended thinking across a tool call, in the real Copilot agent: the test upstream thinks
// (a signed thinking block), asks for read_file, and, as strict as the real API, refuses the next
// request with thinking on unless its tool-use turn starts with that very block. The turn answers only
// if the signature went out to VS Code in the thinking part's metadata, came back in Copilot's history,
// and was sent again.
'use strict';
const assert = require('assert');
const { control } = require('../support');
const { reasoningModel, toolRound } = require('../reasoning');

const MODEL = 'claude-sonnet-4-5';
const THOUGHT = 'The user wants parser.py read before anything else; one read_file call will do.';

describe('extended thinking survives a tool call in the Copilot agent', function () {
    this.timeout(180000);
    let ready;

    before(async () => {
        ready = await reasoningModel({
            model: { id: MODEL, window: 200000 },
            provider: { id: 'anthropic-test', dialect: 'anthropic', baseUrl: process.env.TG_UPSTREAM, discover: false },
            name: 'Claude (thinking)',
            options: { thinkingBudget: 2048 },
            thought: THOUGHT,
            route: 'messages',
        });
    });

    after(async () => {
        await control('reset', { config: true });
    });

    it('keeps thinking on after the tool call, with the signed block sent back', async () => {
        const [first, second] = await toolRound(MODEL, ready.file, 'messages', ready.since);
        const lastTurn = (r) => (r.json.messages.filter((m) => m.role === 'assistant').pop() || { content: [] }).content;
        console.log(`thinking rounds: ${[first, second].map((r) => `${r.id} thinking=${JSON.stringify(r.json.thinking)} ` +
            `assistant blocks=${JSON.stringify(lastTurn(r).map((b) => b.type))}`).join('; ')}`);
        assert.deepStrictEqual(first.json.thinking, { type: 'enabled', budget_tokens: 2048 });
        assert.deepStrictEqual(second.json.thinking, { type: 'enabled', budget_tokens: 2048 }, 'thinking still on after the tool call');
        const turn = lastTurn(second);
        assert.strictEqual(turn[0].type, 'thinking');
        assert.strictEqual(turn[0].thinking, THOUGHT);
        assert.ok(turn[0].signature, 'signed');
    });
});
