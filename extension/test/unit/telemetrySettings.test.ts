import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { TELEMETRY_KEYS, telemetryOptions } from '../../src/telemetrySettings';
import { Inspectable } from '../../src/userSettings';

/** A configuration section whose user values are `user` and whose workspace sets `workspace` too. */
function section(user: Record<string, unknown>, workspace: Record<string, unknown> = {}): Inspectable {
    return {
        inspect: <T>(key: string) => ({
            key,
            globalValue: user[key] as T,
            workspaceValue: workspace[key] as T,
        }),
    };
}

const COPILOT_ON = {
    'otel.enabled': true,
    'otel.otlpEndpoint': 'http://collector.internal:4318',
    'otel.headers': { 'x-honeycomb-team': 'collector-token', bad: 7 },
    'otel.resourceAttributes': { 'team.id': 'platform' },
};

void test('off unless asked: auto follows Copilot\'s switch, on and off say so', () => {
    assert.equal(telemetryOptions(section({}), section({}), {}).enabled, false);
    assert.equal(telemetryOptions(section({}), section(COPILOT_ON), {}).enabled, true);
    assert.equal(telemetryOptions(section({}), section({}), { COPILOT_OTEL_ENABLED: 'true' }).enabled, true);
    assert.equal(telemetryOptions(section({ 'telemetry.enabled': 'off' }), section(COPILOT_ON), {}).enabled, false);
    assert.equal(telemetryOptions(section({ 'telemetry.enabled': 'on' }), section({}), {}).enabled, true);
});

void test("Copilot's collector, its headers and attributes are followed; ours win where set", () => {
    assert.deepEqual(telemetryOptions(section({}), section(COPILOT_ON), {}), {
        enabled: true,
        endpoint: 'http://collector.internal:4318',
        headers: { 'x-honeycomb-team': 'collector-token' },
        resourceAttributes: { 'team.id': 'platform' },
        captureContent: false,
    });
    const ours = section({
        'telemetry.endpoint': 'http://127.0.0.1:4318',
        'telemetry.resourceAttributes': { 'team.id': 'tools', 'cost.center': '42' },
        'telemetry.captureContent': true,
    });
    // Copilot's collector token does not go to another collector.
    assert.deepEqual(telemetryOptions(ours, section(COPILOT_ON), {}), {
        enabled: true,
        endpoint: 'http://127.0.0.1:4318',
        headers: {},
        resourceAttributes: { 'team.id': 'tools', 'cost.center': '42' },
        captureContent: true,
    });
});

void test('the environment: COPILOT_OTEL_ENDPOINT first, OTEL_EXPORTER_OTLP_ENDPOINT left to the SDK, gRPC not taken', () => {
    const env = { COPILOT_OTEL_ENDPOINT: 'http://env-collector:4318' };
    assert.equal(telemetryOptions(section({}), section(COPILOT_ON), env).endpoint, 'http://env-collector:4318');
    const sdk = telemetryOptions(section({}), section(COPILOT_ON), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' });
    assert.equal(sdk.endpoint, undefined);
    assert.deepEqual(sdk.headers, {});
    const grpc = telemetryOptions(section({}), section({ ...COPILOT_ON, 'otel.exporterType': 'otlp-grpc' }), {});
    assert.equal(grpc.endpoint, undefined);
});

void test("a workspace's telemetry settings are never read, and the manifest lets no folder set them", () => {
    const workspace = { 'telemetry.enabled': 'on', 'telemetry.endpoint': 'http://elsewhere.example', 'telemetry.captureContent': true };
    const options = telemetryOptions(section({}, workspace), section({}, { 'otel.enabled': true }), {});
    assert.deepEqual(options, { enabled: false, headers: {}, resourceAttributes: {}, captureContent: false });
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as {
        contributes: { configuration: { properties: Record<string, { scope?: string }> } };
        capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
    };
    for (const key of TELEMETRY_KEYS) {
        assert.equal(manifest.contributes.configuration.properties[`tokenGauge.${key}`].scope, 'application', key);
        assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(`tokenGauge.${key}`));
    }
});
