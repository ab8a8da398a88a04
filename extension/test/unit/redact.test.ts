import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import type * as vscode from 'vscode';

import { providerSecrets, redact, REDACTED, redactingLog, urlSecrets } from '../../src/redact';

const R = REDACTED;

void test('what looks like a credential is redacted, whoever it belongs to', () => {
    const cases: [string, string][] = [
        ['at https://me:hunter22@api.acme.test/v1: refused', `at https://${R}@api.acme.test/v1: refused`],
        [
            'GET https://x.test/v1?api-version=2024-10&key=AIzaSy123&api_key=k2, then',
            `GET https://x.test/v1?api-version=2024-10&key=${R}&api_key=${R}, then`,
        ],
        [`/v1?access_token=abc.def&sig=Zm9v%3D&token=${R}`, `/v1?access_token=${R}&sig=${R}&token=${R}`],
        [
            '{"credentials":{"apiKey":"sk-1\\"2"},"headers":{"Authorization":"Bearer x"},"max_tokens":9}',
            `{"credentials":{"apiKey":"${R}"},"headers":{"Authorization":"${R}"},"max_tokens":9}`,
        ],
        ['Authorization: Bearer sk-ant-0123456789', `Authorization: Bearer ${R}`],
        ['{"author": "Ada"} https://acme.test/v1/models?page=2', '{"author": "Ada"} https://acme.test/v1/models?page=2'],
    ];
    for (const [text, shown] of cases) {
        assert.equal(redact(text), shown);
    }
});

void test('a short key is redacted only where it stands as a whole token', () => {
    const cases: [string, string, string][] = [
        ['the model is thinking', 'k', 'the model is thinking'],
        ['"version": "0.1.0"', '1', '"version": "0.1.0"'],
        ['ollama-js and ollama_py', 'ollama', 'ollama-js and ollama_py'],
        ['Incorrect API key: k.', 'k', `Incorrect API key: ${R}.`],
        ["key 'a.b' (a.b)", 'a.b', `key '${R}' (${R})`],
        ['{"tokenGauge": "0.1.0"}', '', '{"tokenGauge": "0.1.0"}'],
    ];
    for (const [text, key, shown] of cases) {
        assert.equal(redact(text, [key]), shown);
    }
});

void test("a provider's header values and URL parts are redacted in every spelling", () => {
    const provider = {
        id: 'gw',
        baseUrl: 'https://us%40er:p%3Ass@gw.test/v1?key=a%2Fbcd&api-version=1',
        headers: { 'X-Route': 'eu-west-7', Cookie: 's=abc/def', 'X-Title': 'My App', 'X-Flag': 'on' },
    };
    const secrets = providerSecrets(provider);
    assert.deepEqual(urlSecrets(provider.baseUrl).sort(), ['a%2Fbcd', 'a/bcd', 'p%3Ass', 'p:ss', 'us%40er', 'us%40er:p%3Ass', 'us@er', 'us@er:p:ss'].sort());
    assert.ok(!secrets.includes('My App') && !secrets.includes('on'));
    const text = redact(`route eu-west-7, cookie ${JSON.stringify('s=abc/def').replace('/', '\\/')}, user us@er, s%3Dabc%2Fdef`, secrets);
    assert.equal(text, `route ${R}, cookie "${R}", user ${R}, ${R}`);
});

void test("the user a provider's gateway books spend to is kept out like a credential", () => {
    const secrets = providerSecrets({ id: 'gw', preset: 'litellm', attribution: { user: 'ana-lopez', tags: ['team:payments'] } });
    assert.deepEqual(secrets, ['ana-lopez']);
    assert.equal(redact('[Trace] {"attribution":{"user":"ana-lopez"}}', secrets), `[Trace] {"attribution":{"user":"${R}"}}`);
});

void test('every line of the log is redacted, at every level', () => {
    const written: string[] = [];
    const record = (...args: unknown[]) => written.push(args.map(String).join(' '));
    const channel = { name: 'Token Gauge', trace: record, debug: record, info: record, warn: record, error: record, appendLine: record, logLevel: 2 };
    const log = redactingLog(channel as unknown as vscode.LogOutputChannel, () => ['sk-live-abcdef']);
    log.info('key sk-live-abcdef at http://u:pw12@h.test/v1');
    log.debug('{"apiKey": "sk-other-999"}');
    log.error(new Error('failed with sk-live-abcdef'));
    log.appendLine('[Trace] params: {"credentials":{"apiKey":"sk-live-abcdef"}}');
    assert.equal(log.name, 'Token Gauge');
    assert.equal(written.join('\n').includes('sk-'), false, written.join('\n'));
    assert.equal(written.length, 4);
});
