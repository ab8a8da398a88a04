import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { configurationSchema, tokensLabel, withPicked } from '../../src/modelChoices';
import { ModelChoices } from '../../src/protocol';

const CHOICES: ModelChoices = {
    reasoningEffort: { values: ['low', 'medium', 'high'], default: 'medium' },
    thinkingBudget: { values: [0, 4096, 16384], default: 0 },
    contextSize: { values: [200_000, 1_047_576], default: 1_047_576 },
    compactAt: { values: [128_000, 200_000, 1_047_576], default: 1_047_576 },
    toolDocs: { values: ['full', 'progressive', 'minimal'], default: 'progressive' },
};

void test('token counts as the picker shows them', () => {
    assert.deepEqual([200_000, 1_047_576, 1_500_000, 4096, 512].map(tokensLabel), ['200K', '1M', '1.5M', '4K', '512']);
});

void test('the schema offers each choice with labels, in the shape of Copilot\'s own models', () => {
    const schema = configurationSchema(CHOICES);
    assert.deepEqual(schema?.properties.reasoningEffort, {
        type: 'string', title: 'Thinking Effort', enum: ['low', 'medium', 'high'],
        enumItemLabels: ['Low', 'Medium', 'High'], default: 'medium', group: 'navigation',
    });
    assert.deepEqual(schema?.properties.thinkingBudget.enumItemLabels, ['Off', '4K tokens', '16K tokens']);
    const size = schema?.properties.contextSize;
    assert.equal(size?.type, 'number');
    assert.equal(size?.group, 'tokens');
    assert.deepEqual(size?.enumItemLabels, ['200K', '1M']);
    assert.equal(size?.enumDescriptions?.length, 2);
    const at = schema?.properties.compactAt;
    assert.equal(at?.title, 'Summarize At');
    assert.deepEqual(at?.enumItemLabels, ['128K', '200K', '1M']);
    assert.equal(at?.default, 1_047_576);
    assert.match(at?.enumDescriptions?.[0] ?? '', /whole window/);
    assert.equal(at?.enumDescriptions?.[2], 'When the whole window fills');
    const docs = schema?.properties.toolDocs;
    assert.deepEqual(docs?.enumItemLabels, ['Full', 'Progressive', 'Minimal']);
    assert.equal(docs?.default, 'progressive');
    assert.ok(docs?.enumDescriptions?.every((text) => text.length > 0));
    assert.equal(configurationSchema(undefined), undefined);
    assert.equal(configurationSchema({}), undefined);
});

void test('a pick goes over the caller\'s options; values not offered are left out', () => {
    const picked = { reasoningEffort: 'high', contextSize: 200_000, compactAt: 200_000, thinkingBudget: 99, toolDocs: 'minimal', other: 1 };
    assert.deepEqual(withPicked({ reasoningEffort: 'low', temperature: 0.2 }, picked, CHOICES), {
        reasoningEffort: 'high', temperature: 0.2, contextSize: 200_000, compactAt: 200_000, toolDocs: 'minimal',
    });
    assert.deepEqual(withPicked({ a: 1 }, undefined, CHOICES), { a: 1 });
    assert.deepEqual(withPicked({ a: 1 }, picked, undefined), { a: 1 });
});
