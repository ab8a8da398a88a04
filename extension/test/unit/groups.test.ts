import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { GroupKeys } from '../../src/groupKeys';
import { groupName, groupOf, groupProvider, Groups, ListedGroup, managedId, parseHeaders, parseListedGroups } from '../../src/groups';
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
    assert.deepEqual(byId.get('zai'), {
        id: 'zai',
        label: 'Z.ai GLM',
        baseUrl: 'https://api.z.ai/api/paas/v4',
        local: false,
    });
    assert.equal(presets.length, 17);
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

const presets = readPresets(JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as unknown);

/** Groups over VS Code's list `listed`, beside providers of settings with the ids `taken`. */
function groupsOf(listed: ListedGroup[], taken: string[] = []): Groups {
    return new Groups(() => Promise.resolve(listed), () => taken);
}

void test('a group is named as the person named it in Manage Models, in a namespace of its own', async () => {
    const local = { preset: 'openai-compatible', baseUrl: 'http://127.0.0.1:18705/v1' };
    const listed = [
        { name: 'Work', values: { ...local, apiKey: '${input:chat.lm.secret.1}' } },
        { name: 'Home', values: { ...local, apiKey: '${input:chat.lm.secret.2}' } },
        { name: 'Router', values: { preset: 'openrouter' } },
    ];
    const groups = groupsOf(listed);
    // VS Code asks in its list's order, after the models of settings: the same values are told
    // apart by their place.
    for (let pass = 0; pass < 2; pass++) {
        groups.startPass();
        assert.equal(await groups.bind({ ...local, apiKey: 'sk-a' }, presets), 'Work (Manage Models)');
        assert.equal(await groups.bind({ ...local, apiKey: 'sk-b' }, presets), 'Home (Manage Models)');
        assert.equal(await groups.bind({ preset: 'openrouter', apiKey: 'sk-c' }, presets), 'Router (Manage Models)');
    }
    assert.equal(groupOf('Home (Manage Models)'), 'Home');
    assert.equal(groupOf('openrouter'), undefined);
    // A key changed in Manage Models: the same group, the same name.
    groups.startPass();
    assert.equal(await groups.bind({ ...local, apiKey: 'sk-new' }, presets), 'Work (Manage Models)');
    assert.equal(groups.configuration('Work (Manage Models)')?.apiKey, 'sk-new');
    // Out of order (a group added while VS Code was asking): the values still name the only match.
    groups.startPass();
    assert.equal(await groups.bind({ preset: 'openrouter', apiKey: 'sk-c' }, presets), 'Router (Manage Models)');
});

void test('a group named like a provider of settings never shares its id', async () => {
    // VS Code's default name for a group, and the name of a provider of settings.
    const listed = [{ name: 'OpenAI', values: { preset: 'openai' } }];
    const groups = groupsOf(listed, ['OpenAI', 'openai', 'OpenAI (Manage Models)']);
    groups.startPass();
    const id = await groups.bind({ preset: 'openai', apiKey: 'sk-a' }, presets);
    assert.equal(id, 'OpenAI 2 (Manage Models)');
    assert.deepEqual(groupProvider(id, { preset: 'openai' }).id, id);
    assert.equal(managedId('OpenAI'), 'OpenAI (Manage Models)');
});

void test('groups VS Code\'s list does not name are named after their API, told apart by key', async () => {
    const groups = groupsOf([]);
    const first = { preset: 'openrouter', apiKey: 'sk-a' };
    const second = { preset: 'openrouter', apiKey: 'sk-b' };
    for (let pass = 0; pass < 2; pass++) {
        groups.startPass();
        assert.equal(await groups.bind(first, presets), 'OpenRouter (Manage Models)');
        assert.equal(await groups.bind(second, presets), 'OpenRouter 2 (Manage Models)');
    }
    assert.ok(groups.has('OpenRouter (Manage Models)') && !groups.has('OpenRouter'));
    assert.deepEqual(groups.ids, ['OpenRouter (Manage Models)', 'OpenRouter 2 (Manage Models)']);
});

void test('VS Code\'s list of groups: this extension\'s, in order; nothing from a list it cannot read', () => {
    const text = JSON.stringify([
        { name: 'Copilot', vendor: 'copilot' },
        { name: 'Test API', vendor: 'tokengauge', preset: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', apiKey: '${input:x}', settings: {} },
        { name: 'Token Gauge', vendor: 'tokengauge', settings: { 'gpt-4o': {} } },
    ]);
    assert.deepEqual(parseListedGroups(text, 'tokengauge'), [
        { name: 'Test API', values: { preset: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', apiKey: '${input:x}' } },
        { name: 'Token Gauge', values: {} },
    ]);
    assert.deepEqual(parseListedGroups('[{"name": "a", // a comment', 'tokengauge'), []);
    assert.deepEqual(parseListedGroups('{}', 'tokengauge'), []);
});

void test('a key set for a group replaces VS Code\'s until the group changes in Manage Models', async () => {
    const stored = new Map<string, string>();
    const secrets = {
        get: (key: string) => Promise.resolve(stored.get(key)),
        store: (key: string, value: string) => Promise.resolve(void stored.set(key, value)),
        delete: (key: string) => Promise.resolve(void stored.delete(key)),
    };
    const keys = new GroupKeys(secrets);
    const group = { preset: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-wrong' };
    const id = 'Test API (Manage Models)';
    assert.deepEqual(await keys.apply(id, group), group);
    await keys.set(id, group, 'sk-right');
    assert.equal((await keys.apply(id, group)).apiKey, 'sk-right');
    assert.ok(![...stored.values()].some((value) => value.includes('sk-wrong')));
    // Another group of the same name elsewhere, or a key changed in Manage Models: VS Code's wins.
    assert.equal((await keys.apply(id, { ...group, baseUrl: 'http://127.0.0.1:2/v1' })).apiKey, 'sk-wrong');
    assert.equal(stored.size, 0);
    await keys.set(id, group, 'sk-right');
    assert.equal((await keys.apply(id, { ...group, apiKey: 'sk-newer' })).apiKey, 'sk-newer');
    // Set empty: VS Code's again.
    await keys.set(id, group, 'sk-right');
    await keys.set(id, group, '');
    assert.equal((await keys.apply(id, group)).apiKey, 'sk-wrong');
});
