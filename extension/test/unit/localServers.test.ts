import { strict as assert } from 'node:assert';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { test } from 'node:test';

import { runningLocalServers } from '../../src/localServers';
import { Preset } from '../../src/presets';

/** A loopback server answering `GET /v1/models` with `count` models; its base URL. */
async function listing(count: number): Promise<{ server: Server; baseUrl: string }> {
    const server = createServer((request, response) => {
        if (request.url === '/v1/models') {
            response.setHeader('content-type', 'application/json');
            response.end(JSON.stringify({ object: 'list', data: Array.from({ length: count }, (_, i) => ({ id: `m${i}` })) }));
        } else {
            response.statusCode = 404;
            response.end();
        }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

const preset = (id: string, baseUrl: string): Preset => ({ id, label: id, baseUrl, local: true });

void test('offers the local servers that answer with models and are not configured yet', async () => {
    const running = await listing(3);
    const empty = await listing(0);
    try {
        const presets = [
            preset('ollama', running.baseUrl),
            preset('lmstudio', empty.baseUrl),
            preset('vllm', running.baseUrl), // not one of the servers offered on a first run
        ];
        assert.deepEqual(
            (await runningLocalServers(presets, [])).map((f) => [f.preset.id, f.models]),
            [['ollama', 3]],
        );
        // Configured already (by preset or by URL): not offered again.
        assert.deepEqual(await runningLocalServers(presets, [{ id: 'mine', preset: 'ollama' }]), []);
        assert.deepEqual(await runningLocalServers(presets, [{ id: 'x', baseUrl: running.baseUrl }]), []);
    } finally {
        running.server.close();
        empty.server.close();
    }
});

void test('a port nothing listens on is simply not offered', async () => {
    const { server, baseUrl } = await listing(1);
    server.close();
    await new Promise((resolve) => server.once('close', resolve));
    assert.deepEqual(await runningLocalServers([preset('lmstudio', baseUrl)], []), []);
});
