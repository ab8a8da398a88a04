import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import type * as vscode from 'vscode';

import { ApiKeys, MovedKey, movedKeyMessage, providerUrl } from '../../src/apiKeys';

/** VS Code's secret storage, in memory. */
class Storage {
    readonly values = new Map<string, string>();
    get(key: string): Promise<string | undefined> {
        return Promise.resolve(this.values.get(key));
    }
    store(key: string, value: string): Promise<void> {
        this.values.set(key, value);
        return Promise.resolve();
    }
    delete(key: string): Promise<void> {
        this.values.delete(key);
        return Promise.resolve();
    }
    onDidChange(): vscode.Disposable {
        return { dispose: () => undefined };
    }
}

function keysFor(urls: Record<string, string | undefined>) {
    const storage = new Storage();
    const moved: MovedKey[] = [];
    const keys = new ApiKeys(
        storage,
        (id) => urls[id],
        (move) => moved.push(move),
    );
    return { storage, moved, keys };
}

void test('a key is handed out for the URL it was given for, and for no other', async () => {
    const urls: Record<string, string | undefined> = { openrouter: 'https://openrouter.ai/api/v1' };
    const { keys, moved } = keysFor(urls);
    await keys.set('openrouter', 'sk-or-123');
    assert.equal(await keys.get('openrouter'), 'sk-or-123');
    urls.openrouter = 'https://openrouter.ai/api/v1/'; // the same address
    assert.equal(await keys.get('openrouter'), 'sk-or-123');

    urls.openrouter = 'https://elsewhere.example/api/v1';
    assert.equal(await keys.get('openrouter'), undefined);
    assert.deepEqual(await keys.all(['openrouter']), {}); // discovery sends nothing either
    assert.deepEqual(moved, [
        { providerId: 'openrouter', from: 'https://openrouter.ai/api/v1', to: 'https://elsewhere.example/api/v1' },
    ]); // said once, however often it is asked

    await keys.confirm('openrouter');
    assert.equal(await keys.get('openrouter'), 'sk-or-123');
    urls.openrouter = 'https://openrouter.ai/api/v1';
    assert.equal(await keys.get('openrouter'), undefined); // bound to the confirmed URL now
});

void test('a key stored before keys were bound keeps working, bound to the URL of its first use', async () => {
    const urls: Record<string, string | undefined> = { openai: 'https://api.openai.com/v1' };
    const { keys, storage, moved } = keysFor(urls);
    storage.values.set('tokenGauge.apiKey.openai', 'sk-legacy-456');
    assert.equal(await keys.get('openai'), 'sk-legacy-456');
    assert.deepEqual(JSON.parse(storage.values.get('tokenGauge.apiKey.openai') ?? ''), {
        key: 'sk-legacy-456',
        baseUrl: 'https://api.openai.com/v1',
    });
    urls.openai = 'http://127.0.0.1:9/v1';
    assert.equal(await keys.get('openai'), undefined);
    assert.equal(moved.length, 1);
});

void test('a key set before its provider is configured is bound when it is', async () => {
    const urls: Record<string, string | undefined> = {};
    const { keys, moved } = keysFor(urls);
    await keys.set('groq', 'gsk-789');
    assert.equal(await keys.get('groq'), undefined); // nothing says where it would go
    urls.groq = 'https://api.groq.com/openai/v1';
    assert.equal(await keys.get('groq'), 'gsk-789');
    urls.groq = 'https://evil.example/v1';
    assert.equal(await keys.get('groq'), undefined);
    assert.equal(moved.length, 1);
});

void test('an empty key removes the stored one', async () => {
    const { keys, storage } = keysFor({ a: 'http://localhost:4000/v1' });
    await keys.set('a', 'sk-a-1234');
    await keys.set('a', '');
    assert.equal(storage.values.size, 0);
    assert.equal(await keys.get('a'), undefined);
});

void test('the message names both hosts, never a password, and offers to send the key there', () => {
    const { message, confirm } = movedKeyMessage({
        providerId: 'openrouter',
        from: 'https://openrouter.ai/api/v1',
        to: 'https://me:hunter22@elsewhere.example/api/v1',
    });
    assert.match(message, /openrouter's base URL changed from openrouter\.ai to elsewhere\.example/);
    assert.match(message, /Enter the key for elsewhere\.example, or confirm/);
    assert.equal(confirm, 'Use the Stored Key at elsewhere.example');
    assert.doesNotMatch(message, /hunter22/);
});

void test("a settings provider's URL is its own, else its preset's", () => {
    const presets = [{ id: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1' }];
    const providers = [
        { id: 'or', preset: 'openrouter' },
        { id: 'mine', preset: 'openrouter', baseUrl: ' https://gw.example/v1 ' },
    ];
    assert.equal(providerUrl(providers, presets, 'or'), 'https://openrouter.ai/api/v1');
    assert.equal(providerUrl(providers, presets, 'mine'), 'https://gw.example/v1');
    assert.equal(providerUrl(providers, presets, 'other'), undefined);
});
