import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import type * as vscode from 'vscode';

import { classify, FIRST_LINE, LevelledChannel, LineState } from '../../src/logChannel';

const after = (level: LineState['level'], traceback = false): LineState => ({ level, traceback });

void test('files the language client\'s lines at their level, without its timestamp', () => {
    assert.deepEqual(classify('[Error - 10:02:03] Request failed', FIRST_LINE), {
        level: 'error',
        traceback: false,
        text: 'Request failed',
    });
    assert.equal(classify('[Warn  - 10:02:03] slow', FIRST_LINE).level, 'warn');
    assert.equal(classify('[Info  - 10:02:03] tokengauge.chat: sent', after('error')).text, 'tokengauge.chat: sent');
    // The data of the line before is indented: same level.
    assert.equal(classify('  Message: boom', after('error')).level, 'error');
});

void test('a stop we asked for is not an error', () => {
    assert.equal(classify('[Error - 10:02:03] Server process exited with code 0.', FIRST_LINE).level, 'info');
    assert.equal(classify('[Error - 10:02:03] Server process exited with code 1.', FIRST_LINE).level, 'error');
});

void test('reads Python log records and tracebacks from stderr', () => {
    assert.deepEqual(classify('2026-11-24 10:02:03,120 WARNING tokengauge.settings: bad entry', FIRST_LINE), {
        level: 'warn',
        traceback: false,
        text: 'tokengauge.settings: bad entry',
    });
    assert.equal(classify('Traceback (most recent call last):', FIRST_LINE).level, 'error');
    assert.equal(classify('  File "x.py", line 1', after('error', true)).level, 'error');
    assert.equal(classify('ValueError: broken', after('error', true)).level, 'error');
});

void test('a plain line is the server\'s debug output (LSP Log messages come without a prefix)', () => {
    assert.equal(classify('tokengauge.chat: POST http://x/v1/chat/completions', after('error')).level, 'debug');
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
    channel.append('ken\nTraceback (most recent call last):\n  File "x.py"\nOSError: gone\n');
    channel.appendLine('[Info  - 10:02:04] started');
    channel.appendLine('tokengauge.chat: sent');
    assert.deepEqual(entries, [
        'error: tokengauge.lsp: broken',
        'error: Traceback (most recent call last):',
        'error:   File "x.py"',
        'error: OSError: gone',
        'info: started',
        'debug: tokengauge.chat: sent',
    ]);
});
