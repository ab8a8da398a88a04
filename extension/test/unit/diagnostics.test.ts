import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { diagnosticsText } from '../../src/diagnostics';
import { GroupKeys } from '../../src/groupKeys';
import { REDACTED } from '../../src/redact';
import type { ISettings } from '../../src/settings';

const settings: ISettings = {
    providers: [{ id: 'work', preset: 'openai', headers: { 'X-Gateway': 'gw-settings-0001' } }],
    defaultProviders: false,
    models: [],
    pythonPath: '',
    statusBarEnabled: true,
    logLevel: 'info',
    idleTimeout: 120,
    responseTimeout: 1800,
    toolResultMaxTokens: 0,
    deduplicateToolResults: true,
    maskToolResultsAfter: 0,
    usageRetentionDays: 30,
    telemetry: {
        enabled: true,
        endpoint: 'http://collector.test:4318',
        headers: { authorization: 'Bearer otel-collector-0006' },
        resourceAttributes: { 'team.id': 'platform' },
        captureContent: false,
    },
};

void test("a Manage Models group's key, header values and URL parts never reach the diagnostics", async () => {
    const group = {
        providerId: 'Gateway (Manage Models)',
        configuration: {
            preset: 'openai-compatible',
            baseUrl: 'https://gw.test/v1?team=a&code=1',
            apiKey: 'sk-group-vscode-0002',
            headers: 'X-Title: My App; X-Portkey-Api-Key: pk-group-0003',
        },
    };
    const groupKeys = new GroupKeys({ get: () => Promise.resolve(undefined), store: () => Promise.resolve(), delete: () => Promise.resolve() });
    await groupKeys.set(group.providerId, group.configuration, 'sk-group-set-0004');
    // Whatever the server's usage says, a text echoing each of them.
    const echoed = 'gw-settings-0001 sk-group-vscode-0002 pk-group-0003 sk-group-set-0004 otel-collector-0006';
    const text = diagnosticsText({
        about: { tokenGauge: '1.0.0', vscode: '1.139.0', platform: 'linux-x64' },
        settings,
        groups: [group],
        keys: groupKeys.seen,
        server: { history: [{ error: `the API said: ${echoed}` }, { error: JSON.stringify(echoed) }] },
    });
    for (const secret of echoed.split(' ')) {
        assert.ok(!text.includes(secret), `${secret} in\n${text}`);
    }
    const report = JSON.parse(text) as {
        manageModels: { id: string; headers: Record<string, string> }[];
        settings: { telemetry: { headers: Record<string, string>; endpoint: string } };
    };
    assert.deepEqual(report.settings.telemetry.headers, { authorization: REDACTED });
    assert.equal(report.settings.telemetry.endpoint, 'http://collector.test:4318');
    assert.deepEqual(report.manageModels, [
        {
            id: 'Gateway (Manage Models)',
            preset: 'openai-compatible',
            baseUrl: 'https://gw.test/v1?team=a&code=1',
            headers: { 'X-Title': REDACTED, 'X-Portkey-Api-Key': REDACTED },
        },
    ]);
});

void test('a group whose headers cannot be read is listed without them, its values still redacted', () => {
    const text = diagnosticsText({
        about: { tokenGauge: '1.0.0', vscode: '1.139.0', platform: 'linux-x64' },
        settings: { ...settings, providers: [] },
        groups: [{ providerId: 'Odd (Manage Models)', configuration: { baseUrl: 'https://odd.test/v1', headers: 'hdr-secret-0005' } }],
        keys: [],
        server: { note: 'sent hdr-secret-0005' },
    });
    assert.ok(!text.includes('hdr-secret-0005'), text);
    assert.match(text, /"id": "Odd \(Manage Models\)"/);
});

void test("the user a gateway books spend to is left out of the diagnostics, the rest of the attribution kept", () => {
    const attribution = { user: 'ana-lopez', tags: ['team:payments', 'ws:${workspaceName}'], session: true };
    const text = diagnosticsText({
        about: { tokenGauge: '1.0.0', vscode: '1.139.0', platform: 'linux-x64' },
        settings: { ...settings, providers: [{ id: 'gw', preset: 'litellm', attribution }] },
        groups: [],
        keys: [],
        server: {},
    });
    assert.ok(!text.includes('ana-lopez'), text);
    const report = JSON.parse(text) as { settings: { providers: { attribution: object }[] } };
    assert.deepEqual(report.settings.providers[0].attribution, { ...attribution, user: REDACTED });
});
