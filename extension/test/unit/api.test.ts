import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { CountRecorder } from '../../src/api';
import { Message } from '../../src/protocol';

const message: Message = { role: 'user', content: [{ type: 'text', value: 'hi' }] };
const empty = { inputs: [], answers: [], chats: [], dropped: 0 };

void test('records nothing until started, and nothing after it stopped', () => {
    const recorder = new CountRecorder();
    recorder.note('before')(3);
    recorder.chat([message], []);
    assert.deepEqual(recorder.stop(), empty);
});

void test('keeps every input in call order with its answer, and the chats between them', () => {
    const recorder = new CountRecorder();
    recorder.start();
    const answerA = recorder.note('a');
    const answerMessage = recorder.note(message);
    recorder.chat([message], [{ name: 'tool' }]);
    recorder.note('a');
    answerMessage(9);
    answerA(1);
    assert.deepEqual(recorder.stop(), {
        inputs: ['a', message, 'a'],
        answers: [1, 9, null],
        chats: [{ afterCalls: 2, messages: [message], tools: [{ name: 'tool' }] }],
        dropped: 0,
    });
    recorder.note('after');
    assert.deepEqual(recorder.stop(), empty);
});

void test('stops keeping inputs at the limit and counts the rest', () => {
    const recorder = new CountRecorder();
    recorder.start(2);
    for (const s of ['a', 'b', 'c', 'd']) {
        recorder.note(s)(1);
    }
    assert.deepEqual(recorder.stop(), { inputs: ['a', 'b'], answers: [1, 1], chats: [], dropped: 2 });
});

void test('a new start drops the unfinished recording', () => {
    const recorder = new CountRecorder();
    recorder.start(1);
    recorder.note('a');
    const late = recorder.note('b');
    recorder.start(5);
    recorder.note('c');
    late(4);
    assert.deepEqual(recorder.stop(), { inputs: ['c'], answers: [null], chats: [], dropped: 0 });
});
