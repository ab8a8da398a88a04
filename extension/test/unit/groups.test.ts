import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { groupProvider, parseHeaders } from '../../src/groups';
import { readPresets } from '../../src/presets';

void test('reads extra headers written as Name: value pairs', () => {
    assert.deepEqual(parseHeaders('HTTP-Referer: https://example.com; X-Title: My App;'), {
        'HTTP-Referer': 'https://example.com',
        'X-Title': 'My App',
    });
    assert.deepEqual(parseHeaders(undefined), {});
    assert.deepEqual(parseHeaders('  '), {});
});

void test('a header without a name is an error that says how to write it', () => {
    assert.throws(() => parseHeaders('X-Title My App'), /has no name\. Write each as Name: value/);
    assert.throws(() => parseHeaders(': value'), /has no name/);
});

void test('a Manage Models group becomes a provider named after the group', () => {
    assert.deepEqual(groupProvider('OpenRouter', { preset: 'openrouter', apiKey: 'sk-x', baseUrl: ' ' }), {
        id: 'OpenRouter',
        preset: 'openrouter',
        headers: {},
    });
    assert.deepEqual(groupProvider('work', { preset: 'azure-openai', baseUrl: 'https://a.openai.azure.com/openai/v1' }), {
        id: 'work',
        preset: 'azure-openai',
        baseUrl: 'https://a.openai.azure.com/openai/v1',
        headers: {},
    });
});

void test('the manifest\'s presets: labels, default URLs, and which need a URL or are local', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as unknown;
    const presets = readPresets(manifest);
    const byId = new Map(presets.map((p) => [p.id, p]));
    assert.deepEqual(byId.get('openai'), {
        id: 'openai',
        label: 'OpenAI',
        baseUrl: 'https://api.openai.com/v1',
        local: false,
    });
    assert.equal(byId.get('azure-openai')?.baseUrl, undefined);
    assert.equal(byId.get('ollama')?.local, true);
    assert.equal(byId.get('lmstudio')?.baseUrl, 'http://localhost:1234/v1');
    assert.equal(presets.length, 12);
});
