import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { CountRecorder } from '../../src/countRecorder';

const message = { role: 'user', content: [{ type: 'text', value: 'hi' }] };

void test('nothing is kept until a recording starts', () => {
    const recorder = new CountRecorder();
    recorder.note('before');
    assert.equal(recorder.recording, false);
    assert.deepEqual(recorder.stop(), { inputs: [], dropped: 0 });
});

void test('a recording keeps strings and messages in call order, then stops', () => {
    const recorder = new CountRecorder();
    recorder.start();
    recorder.note('a');
    recorder.note(message);
    recorder.note('a');
    assert.equal(recorder.recording, true);
    assert.deepEqual(recorder.stop(), { inputs: ['a', message, 'a'], dropped: 0 });
    recorder.note('after');
    assert.equal(recorder.recording, false);
    assert.deepEqual(recorder.stop().inputs, []);
});

void test('a recording is bounded and counts what it dropped', () => {
    const recorder = new CountRecorder();
    recorder.start(2);
    for (const s of ['a', 'b', 'c', 'd']) {
        recorder.note(s);
    }
    assert.deepEqual(recorder.stop(), { inputs: ['a', 'b'], dropped: 2 });
});

void test('starting again begins a new recording', () => {
    const recorder = new CountRecorder();
    recorder.start(1);
    recorder.note('a');
    recorder.note('b');
    recorder.start(5);
    recorder.note('c');
    assert.deepEqual(recorder.stop(), { inputs: ['c'], dropped: 0 });
});
