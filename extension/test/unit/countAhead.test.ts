import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { countAheadWhileToolsRegister } from '../../src/countAhead';

void test('counts ahead at once, then at every look until the watch ends, summing what went', async () => {
    const sent = [3, 0, 2, 0, 0, 0];
    let looks = 0;
    const total = await countAheadWhileToolsRegister(
        () => Promise.resolve(sent[looks++] ?? 0),
        () => false,
        { everyMs: 5, watchMs: 22 },
    );
    assert.equal(total, 5);
    assert.ok(looks >= 3 && looks <= 6, `${looks} looks in 22 ms, one every 5 ms`);
});

void test('a newer start (or the extension going) stops the looks', async () => {
    let looks = 0;
    let stopped = false;
    const total = await countAheadWhileToolsRegister(
        () => {
            looks++;
            stopped = looks === 2;
            return Promise.resolve(1);
        },
        () => stopped,
        { everyMs: 1, watchMs: 60_000 },
    );
    assert.deepEqual([looks, total], [2, 2]);
});

void test('a failure ends the looks', async () => {
    let looks = 0;
    await assert.rejects(
        countAheadWhileToolsRegister(
            () => (++looks === 2 ? Promise.reject(new Error('server gone')) : Promise.resolve(1)),
            () => false,
            { everyMs: 1, watchMs: 60_000 },
        ),
        /server gone/,
    );
    assert.equal(looks, 2);
});
