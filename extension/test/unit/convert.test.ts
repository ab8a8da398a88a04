import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { toCountInput, toMessage, toPart, toTool } from '../../src/convert';
import { carriesReasoning, decodeReasoning, encodeReasoning, REASONING_PREFIX } from '../../src/reasoning';

// Stand-ins with VS Code's class names and fields: conversion must go by shape.
class LanguageModelTextPart {
    constructor(public value: string) {}
}
class LanguageModelThinkingPart {
    constructor(public value: string | string[], public id?: string, public metadata?: object) {}
}
class LanguageModelToolCallPart {
    constructor(public callId: string, public name: string, public input: object) {}
}
class LanguageModelToolResultPart {
    constructor(public callId: string, public content: unknown[]) {}
}
class LanguageModelDataPart {
    constructor(public data: Uint8Array, public mimeType: string) {}
}

void test('parts by shape', () => {
    assert.deepEqual(toPart(new LanguageModelTextPart('hi')), { type: 'text', value: 'hi' });
    assert.deepEqual(toPart(new LanguageModelThinkingPart(['a', 'b'])), { type: 'thinking', value: 'ab' });
    assert.deepEqual(toPart(new LanguageModelToolCallPart('c1', 'read', { p: 1 })), {
        type: 'toolCall', callId: 'c1', name: 'read', input: { p: 1 },
    });
    assert.deepEqual(
        toPart(new LanguageModelToolResultPart('c1', [new LanguageModelTextPart('out')])),
        { type: 'toolResult', callId: 'c1', content: [{ type: 'text', value: 'out' }] },
    );
    assert.deepEqual(toPart(new LanguageModelDataPart(new Uint8Array([104, 105]), 'text/plain')), {
        type: 'data', mimeType: 'text/plain', data: 'aGk=',
    });
    assert.deepEqual(toPart({ value: { tsx: true } }), { type: 'unknown', json: { tsx: true } });
});

void test('signed and redacted thinking, as the history carries them back', () => {
    const signed = new LanguageModelThinkingPart('', undefined, { signature: 'c2ln', _completeThinking: 'Hm.' });
    assert.deepEqual(toPart(signed), { type: 'thinking', value: 'Hm.', signature: 'c2ln' });
    // Copilot's history: the block's text as the value, the metadata kept.
    const rendered = new LanguageModelThinkingPart('Hm.', 'thinking_0', { signature: 'c2ln' });
    assert.deepEqual(toPart(rendered), { type: 'thinking', value: 'Hm.', signature: 'c2ln' });
    const redacted = new LanguageModelThinkingPart('', undefined, { redactedData: 'EmwK' });
    assert.deepEqual(toPart(redacted), { type: 'thinking', value: '', redacted: 'EmwK' });
    assert.deepEqual(toPart(new LanguageModelThinkingPart('x', undefined, { other: 1 })), { type: 'thinking', value: 'x' });
    // The host's class is minified: a thinking part is known by its fields as well.
    class rs {
        constructor(public value: string, public id?: string, public metadata?: object) {}
    }
    assert.deepEqual(toPart(new rs('Hm.', undefined, { signature: 'c2ln' })), { type: 'thinking', value: 'Hm.', signature: 'c2ln' });
});

void test('an encrypted reasoning item, as the history carries it back', () => {
    const item = new LanguageModelThinkingPart('', 'rs_1', { encrypted_content: 'gAAAA' });
    assert.deepEqual(toPart(item), { type: 'thinking', value: '', id: 'rs_1', encrypted: 'gAAAA' });
    // Copilot's history shows the summary as the value: what goes back is the item alone.
    const shown = new LanguageModelThinkingPart(['Plan', 'ning.'], 'rs_1', { encrypted_content: 'gAAAA' });
    assert.deepEqual(toPart(shown), { type: 'thinking', value: '', id: 'rs_1', encrypted: 'gAAAA' });
    // Without its item id the content cannot be sent back: it is what was shown, nothing more.
    assert.deepEqual(toPart(new LanguageModelThinkingPart('x', undefined, { encrypted_content: 'gAAAA' })), {
        type: 'thinking', value: 'x',
    });
});

void test("a Chat Completions server's reasoning, as both runtimes carry it back", () => {
    const part = {
        type: 'thinking' as const, value: 'Read it first.', field: 'reasoning',
        details: [{ type: 'reasoning.text', text: 'Read it first.', signature: 'sig', index: 0 }],
        calls: { call_1: { google: { thought_signature: 'c2ln' } } }, extra: { google: { thought: true } },
    };
    assert.ok(carriesReasoning(part));
    assert.ok(!carriesReasoning({ type: 'thinking', value: 'x' }));
    const encrypted = encodeReasoning(part);
    // The chat panel: Copilot gathers the pieces shown into the value, our metadata kept whole.
    assert.deepEqual(toPart(new LanguageModelThinkingPart('Read it first.', 'a1b2', { encrypted_content: encrypted })), part);
    // The Agents window: an item id of its own, the summary pieces as the value.
    assert.deepEqual(toPart(new LanguageModelThinkingPart(['Read it ', 'first.'], 'rs_byok_1', { encrypted_content: encrypted })), part);
    // Fields VS Code adds to a thinking part's metadata (vscode #337307) are never carried to a server.
    const leaked = { encrypted_content: encrypted, cot_id: 'cot_1', cot_summary: 'Read it.', vscode_reasoning_done: true };
    assert.deepEqual(toPart(new LanguageModelThinkingPart('Read it first.', 'rs_byok_2', leaked)), part);
    // Only what is there is carried; a damaged value is not ours and is read as before.
    assert.deepEqual(toPart(new LanguageModelThinkingPart('Hm.', undefined, { encrypted_content: encodeReasoning({ type: 'thinking', value: '', field: 'reasoning_content' }) })), {
        type: 'thinking', value: 'Hm.', field: 'reasoning_content',
    });
    assert.equal(decodeReasoning(`${REASONING_PREFIX}{not json`, 'x'), undefined);
    assert.equal(decodeReasoning(`${REASONING_PREFIX}[1]`, 'x'), undefined);
    assert.deepEqual(toPart(new LanguageModelThinkingPart('x', 'rs_1', { encrypted_content: `${REASONING_PREFIX}{` })), {
        type: 'thinking', value: '', id: 'rs_1', encrypted: `${REASONING_PREFIX}{`,
    });
});

void test('plain messages with numeric roles, as Copilot sends them', () => {
    assert.deepEqual(toMessage({ role: 1, content: [new LanguageModelTextPart('q')], name: '' }), {
        role: 'user', content: [{ type: 'text', value: 'q' }],
    });
    assert.deepEqual(toMessage({ role: 2, content: 'a', name: 'bot' }), {
        role: 'assistant', name: 'bot', content: [{ type: 'text', value: 'a' }],
    });
    assert.equal(toMessage({ role: 3, content: [] }).role, 'system');
    assert.throws(() => toMessage({ role: 9, content: [] }), /unknown chat message role 9/);
});

void test('count inputs and tools', () => {
    assert.equal(toCountInput('text'), 'text');
    assert.deepEqual(toCountInput({ role: 1, content: 'x' }), {
        role: 'user', content: [{ type: 'text', value: 'x' }],
    });
    assert.deepEqual(toTool({ name: 't' }), { name: 't', description: '', inputSchema: {} });
});
