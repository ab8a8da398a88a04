import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { groupName, groupProvider, Groups, parseHeaders } from '../../src/groups';
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
    assert.deepEqual(byId.get('openai-responses'), {
        id: 'openai-responses',
        label: 'OpenAI, Responses API',
        baseUrl: 'https://api.openai.com/v1',
        local: false,
    });
    assert.equal(presets.length, 13);
});

void test('a group is named after its API at its usual address, else after its host', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as unknown;
    const presets = readPresets(manifest);
    assert.equal(groupName({ preset: 'openrouter' }, presets), 'OpenRouter');
    assert.equal(groupName({ preset: 'openai', baseUrl: 'https://api.openai.com/v1' }, presets), 'OpenAI');
    assert.equal(
        groupName({ preset: 'openai-compatible', baseUrl: 'http://127.0.0.1:8080/v1' }, presets),
        '127.0.0.1:8080',
    );
});

void test('groups with the same name and different keys are told apart, stably', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as unknown;
    const presets = readPresets(manifest);
    const groups = new Groups();
    const first = { preset: 'openrouter', apiKey: 'sk-a' };
    const second = { preset: 'openrouter', apiKey: 'sk-b' };
    assert.equal(groups.bind(first, presets), 'OpenRouter');
    assert.equal(groups.bind(second, presets), 'OpenRouter (2)');
    // VS Code asks again (every listing): the same names, the same keys.
    assert.equal(groups.bind(first, presets), 'OpenRouter');
    assert.equal(groups.bind(second, presets), 'OpenRouter (2)');
    assert.equal(groups.key('OpenRouter (2)'), 'sk-b');
    assert.ok(groups.has('OpenRouter') && !groups.has('OpenAI'));
    assert.deepEqual(groups.ids, ['OpenRouter', 'OpenRouter (2)']);
});
