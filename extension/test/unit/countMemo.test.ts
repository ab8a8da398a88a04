import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { test } from 'node:test';

import { CountMemo, scaled } from '../../src/countMemo';
import { CountInput, CountTokensResult, Message, Scales } from '../../src/protocol';

const sha = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A fake server: raw = length of the text, scale and epoch settable, every call recorded. */
class FakeServer {
    calls: CountInput[][] = [];
    scale = 1.05;
    cjkScale = 1.05;
    toolScale = 1.05;
    epoch = 1;

    scales = (): Scales => ({ text: this.scale, cjk: this.cjkScale, tools: this.toolScale });
    delayMs = 0;

    request = async (_model: string, inputs: CountInput[]): Promise<CountTokensResult> => {
        this.calls.push(inputs);
        if (this.delayMs) {
            await new Promise((r) => setTimeout(r, this.delayMs));
        }
        const raw = inputs.map((i) => (typeof i === 'string' ? i.length : JSON.stringify(i).length));
        const cjk = inputs.map((i) => (typeof i === 'string' ? [...i].filter((c) => c >= '\u4e00').length : 0));
        return {
            raw,
            cjk,
            tokens: raw.map((r) => scaled(r, this.scale)),
            epoch: this.epoch,
            scales: this.scales(),
        };
    };
}

void test('a string asked twice crosses the pipe once', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha);
    assert.equal(await memo.count('m', 'hello world'), scaled(11, 1.05));
    assert.equal(await memo.count('m', 'hello world'), scaled(11, 1.05));
    assert.equal(server.calls.length, 1);
});

void test('string counts survive a new epoch and follow the new scale', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha);
    await memo.count('m', 'x'.repeat(100));
    server.epoch = 2;
    server.scale = 2;
    await memo.count('m', 'other'); // learns the new epoch and scale
    assert.equal(await memo.count('m', 'x'.repeat(100)), 200);
    assert.equal(server.calls.length, 2);
});

void test('message counts are dropped when the epoch changes', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha);
    const message: Message = { role: 'user', content: [{ type: 'text', value: 'hi' }] };
    await memo.count('m', message);
    await memo.count('m', message);
    assert.equal(server.calls.length, 1);
    server.epoch = 2;
    await memo.count('m', 'new');
    await memo.count('m', message);
    assert.equal(server.calls.length, 3);
});

void test('calls made while a request is in flight go in one batch', async () => {
    const server = new FakeServer();
    server.delayMs = 20;
    const memo = new CountMemo(server.request, sha);
    const answers = await Promise.all(['a', 'bb', 'ccc', 'dddd'].map((s) => memo.count('m', s)));
    assert.deepEqual(answers, [1, 2, 3, 4].map((n) => scaled(n, 1.05)));
    assert.deepEqual(server.calls, [['a'], ['bb', 'ccc', 'dddd']]);
});

void test('models are memoized separately', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha);
    await memo.count('a', 'same');
    await memo.count('b', 'same');
    assert.equal(server.calls.length, 2);
});

void test('prewarmed strings never cross the pipe', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha);
    memo.prewarm('m', [[sha('"type"'), 3]], { text: 1.5, cjk: 1, tools: 1 });
    assert.equal(await memo.count('m', '"type"'), 5);
    assert.equal(server.calls.length, 0);
});

void test('a failed request rejects every call of its batch, and the next call retries', async () => {
    let fail = true;
    const server = new FakeServer();
    const memo = new CountMemo(async (model, inputs) => {
        if (fail) {
            throw new Error('server down');
        }
        return server.request(model, inputs);
    }, sha);
    await assert.rejects(memo.count('m', 'x'), /server down/);
    fail = false;
    assert.equal(await memo.count('m', 'x'), scaled(1, 1.05));
});

void test('the memo stays bounded', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha, { maxEntries: 10 });
    for (let i = 0; i < 50; i++) {
        await memo.count('m', `s${i}`);
    }
    assert.ok(memo.size <= 10);
});

void test('a cleared memo asks the server again', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha);
    await memo.count('m', 'hello');
    await memo.count('m', { role: 'user', content: [] });
    memo.clear();
    assert.equal(memo.size, 0);
    await memo.count('m', 'hello');
    assert.equal(server.calls.length, 3);
});

void test('the first miss for a model brings its companions in the same batch, once', async () => {
    const server = new FakeServer();
    const companions = ['type', 'object', 'hello', 'type'];
    const memo = new CountMemo(server.request, sha, { companions: () => companions });
    assert.equal(await memo.count('m', 'hello'), scaled(5, 1.05));
    assert.deepEqual(server.calls, [['hello', 'type', 'object']]); // no duplicates, not the asked text twice
    assert.equal(await memo.count('m', 'object'), scaled(6, 1.05));
    assert.equal(server.calls.length, 1, 'a companion is a memo hit');
    await memo.count('m', 'other');
    assert.deepEqual(server.calls[1], ['other'], 'companions go once per model');
    await memo.count('n', 'other');
    assert.deepEqual(server.calls[2], ['other', 'type', 'object', 'hello'], 'and once for each model');
});

void test('new companions (a new array) go with the next miss, less what the memo has', async () => {
    const server = new FakeServer();
    let companions = ['type'];
    const memo = new CountMemo(server.request, sha, { companions: () => companions });
    await memo.count('m', 'hello');
    companions = ['type', 'mcp_tool'];
    await memo.count('m', 'hello'); // a hit: nothing is sent
    await memo.count('m', 'other');
    assert.deepEqual(server.calls, [['hello', 'type'], ['other', 'mcp_tool']]);
});

void test('companions already memoized are not sent again, and a cleared memo sends them again', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha, { companions: () => ['type', 'object'] });
    memo.prewarm('m', [[sha('type'), 4]], { text: 1.05, cjk: 1.05, tools: 1.05 });
    await memo.count('m', 'hello');
    assert.deepEqual(server.calls, [['hello', 'object']]);
    memo.clear();
    await memo.count('m', 'hello');
    assert.deepEqual(server.calls[1], ['hello', 'type', 'object']);
});

void test('a failed batch brings the companions again with the next miss', async () => {
    let fail = true;
    const server = new FakeServer();
    const memo = new CountMemo(
        async (model, inputs) => {
            if (fail) {
                server.calls.push(inputs);
                throw new Error('server restarting');
            }
            return server.request(model, inputs);
        },
        sha,
        { companions: () => ['type'] },
    );
    await assert.rejects(memo.count('m', 'hello'), /server restarting/);
    fail = false;
    assert.equal(await memo.count('m', 'hello'), scaled(5, 1.05));
    assert.deepEqual(server.calls, [['hello', 'type'], ['hello', 'type']]);
});

void test('countAhead sends the companions before any miss, once, and resolves when they are counted', async () => {
    const server = new FakeServer();
    server.delayMs = 5;
    let companions = ['type', 'object', 'type'];
    const memo = new CountMemo(server.request, sha, { companions: () => companions });
    assert.equal(await memo.countAhead('m'), 2);
    assert.deepEqual(server.calls, [['type', 'object']]);
    assert.equal(await memo.count('m', 'object'), scaled(6, 1.05), 'a hit once countAhead has resolved');
    assert.equal(await memo.countAhead('m'), 0, 'the same companions go once');
    await memo.count('m', 'hello');
    assert.deepEqual(server.calls[1], ['hello'], 'the first miss carries nothing counted ahead');
    companions = ['type', 'mcp_tool'];
    assert.equal(await memo.countAhead('m'), 1, 'new tools: only what the memo lacks');
    assert.deepEqual(server.calls[2], ['mcp_tool']);
    assert.equal(await memo.countAhead('n'), 2, 'each model has its own');
});

void test('companions already on their way are not counted ahead again; another model\'s go at once', async () => {
    const server = new FakeServer();
    server.delayMs = 5;
    const tools = ['type'];
    const memo = new CountMemo(server.request, sha, { companions: () => tools });
    const miss = memo.count('m', 'hello'); // in flight, with its companions
    assert.equal(await memo.countAhead('m'), 0, 'already on their way');
    await miss;
    const more = ['type', 'object'];
    const other = new CountMemo(server.request, sha, { companions: () => more });
    const first = other.count('m', 'first'); // in flight, carrying the companions
    const ahead = other.countAhead('n'); // another model: queued behind nothing, sent at once
    await Promise.all([first, ahead]);
    assert.deepEqual(server.calls.slice(1), [['first', 'type', 'object'], ['type', 'object']]);
});

void test('a failed countAhead leaves the companions to the next miss', async () => {
    let fail = true;
    const server = new FakeServer();
    const memo = new CountMemo(
        async (model, inputs) => {
            if (fail) {
                throw new Error('server restarting');
            }
            return server.request(model, inputs);
        },
        sha,
        { companions: () => ['type'] },
    );
    await assert.rejects(memo.countAhead('m'), /server restarting/);
    fail = false;
    await memo.count('m', 'hello');
    assert.deepEqual(server.calls, [['hello', 'type']]);
});

void test('short texts are their own key: a hit digests nothing; longer strings and messages are digested', async () => {
    const server = new FakeServer();
    const digested: string[] = [];
    const memo = new CountMemo(server.request, (text) => (digested.push(text), sha(text)));
    const long = 'x'.repeat(257);
    const message: Message = { role: 'user', content: [{ type: 'text', value: 'z'.repeat(300) }] };
    for (let i = 0; i < 3; i++) {
        await memo.count('m', 'short');
        await memo.count('m', long);
        await memo.count('m', message);
    }
    assert.equal(server.calls.length, 3, 'one miss each');
    assert.equal(digested.filter((t) => t === 'short').length, 0, 'the first miss had no scales to look for a prewarmed entry with');
    assert.equal(digested.filter((t) => t === long).length, 3);
    assert.equal(digested.filter((t) => t === JSON.stringify(message)).length, 3);
});

void test('prewarmed strings, known by digest, are found by short and long texts alike', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha);
    const long = 'y'.repeat(300);
    memo.prewarm('m', [[sha('type'), 4], [sha(long), 75]], { text: 2, cjk: 2, tools: 2 });
    assert.equal(await memo.count('m', 'type'), 8);
    assert.equal(await memo.count('m', 'type'), 8, 'moved to its own key');
    assert.equal(await memo.count('m', long), 150);
    assert.equal(server.calls.length, 0);
    assert.equal(await memo.count('n', 'type'), scaled(4, 1.05), "another model's entry is not this one's");
});

void test('CJK text and tool-schema strings have scales of their own', async () => {
    const server = new FakeServer();
    server.scale = 1.5;
    server.cjkScale = 0.5;
    server.toolScale = 2;
    const memo = new CountMemo(server.request, sha, { companions: () => ['description'] });
    assert.equal(await memo.count('m', 'ab中文字'), Math.ceil(2 * 1.5 + 3 * 0.5));
    assert.equal(await memo.count('m', 'description'), 22, 'a companion is a tool string');
    assert.equal(await memo.count('m', 'read_file'), Math.ceil(9 * 1.5));
    memo.addToolStrings(['read_file']);
    assert.equal(await memo.count('m', 'read_file'), 18, "a chat request's tool names too");
    assert.equal(server.calls.length, 2);
});

void test('a calibration push rescales strings at once and drops stale message counts', async () => {
    const server = new FakeServer();
    const memo = new CountMemo(server.request, sha);
    const message: Message = { role: 'user', content: [{ type: 'text', value: 'hi' }] };
    await memo.count('m', 'x'.repeat(10));
    await memo.count('m', message);
    memo.calibrate('m', { text: 3, cjk: 3, tools: 3 }, 2);
    assert.equal(await memo.count('m', 'x'.repeat(10)), 30);
    assert.equal(server.calls.length, 2);
    await memo.count('m', message);
    assert.equal(server.calls.length, 3, 'the message is asked again');
});
