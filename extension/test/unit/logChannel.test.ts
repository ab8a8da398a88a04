import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import type * as vscode from 'vscode';

import { classify, LevelledChannel } from '../../src/logChannel';

void test('files the language client\'s lines at their level, without its timestamp', () => {
    assert.deepEqual(classify('[Error - 10:02:03] Request failed', 'info'), { level: 'error', text: 'Request failed' });
    assert.deepEqual(classify('[Warn  - 10:02:03] slow', 'info'), { level: 'warn', text: 'slow' });
    assert.deepEqual(classify('[Info  - 10:02:03] tokengauge.chat: sent', 'error'), {
        level: 'info',
        text: 'tokengauge.chat: sent',
    });
});

void test('a stop we asked for is not an error', () => {
    assert.equal(classify('[Error - 10:02:03] Server process exited with code 0.', 'info').level, 'info');
    assert.equal(classify('[Error - 10:02:03] Server process exited with code 1.', 'info').level, 'error');
});

void test('reads Python log records and tracebacks from stderr', () => {
    assert.deepEqual(classify('2026-11-24 10:02:03,120 WARNING tokengauge.settings: bad entry', 'info'), {
        level: 'warn',
        text: 'tokengauge.settings: bad entry',
    });
    assert.equal(classify('Traceback (most recent call last):', 'info').level, 'error');
    assert.equal(classify('  File "x.py", line 1', 'error').level, 'error');
});

void test('the channel writes one entry per line, joining chunks split mid-line', () => {
    const entries: string[] = [];
    const record = (level: string) => (text: string) => entries.push(`${level}: ${text}`);
    const log = {
        name: 'Token Gauge',
        error: record('error'),
        warn: record('warn'),
        info: record('info'),
        debug: record('debug'),
        trace: record('trace'),
    } as unknown as vscode.LogOutputChannel;
    const channel = new LevelledChannel(log);
    channel.append('2026-11-24 10:02:03,120 ERROR tokengauge.lsp: bro');
    channel.append('ken\nTraceback (most recent call last):\n  File "x.py"\n');
    channel.appendLine('[Info  - 10:02:04] started');
    assert.deepEqual(entries, [
        'error: tokengauge.lsp: broken',
        'error: Traceback (most recent call last):',
        'error:   File "x.py"',
        'info: started',
    ]);
});
