/**
 * The language client writes to an output channel in its own format: `[Error - 10:02:03] text`
 * for its messages and the server's `window/logMessage`, raw chunks for the server's stderr. This
 * adapter turns each line into one entry of the extension's LogOutputChannel at its own level, so
 * the log has one timestamp style and real levels.
 */

import type * as vscode from 'vscode';

type Level = 'error' | 'warn' | 'info' | 'debug' | 'trace';

const CLIENT_LINE = /^\[(Error|Warn|Info|Debug|Trace)\s*- [^\]]*\] ?([\s\S]*)$/;
const PYTHON_LINE = /^(?:\S+ \S+ )?(CRITICAL|ERROR|WARNING|INFO|DEBUG) ([\s\S]*)$/;
const CLIENT_LEVELS: Record<string, Level> = { Error: 'error', Warn: 'warn', Info: 'info', Debug: 'debug', Trace: 'trace' };
const PYTHON_LEVELS: Record<string, Level> = {
    CRITICAL: 'error',
    ERROR: 'error',
    WARNING: 'warn',
    INFO: 'info',
    DEBUG: 'debug',
};
/** The client's own lines about a stop we asked for: normal, not errors. */
const NORMAL_STOP = /^Server process exited with code 0\.?$/;

/** What the line before said: its level, and whether a traceback is under way. */
export interface LineState {
    level: Level;
    traceback: boolean;
}

export const FIRST_LINE: LineState = { level: 'info', traceback: false };

/**
 * Where one line goes and at which level. A plain line is the server's debug output (LSP's `Log`
 * messages come without a prefix), unless it continues the line before: an indented line (the
 * data of a client message, a traceback's frame) or anything in a traceback keeps its level.
 */
export function classify(line: string, previous: LineState): LineState & { text: string } {
    const client = CLIENT_LINE.exec(line);
    if (client) {
        const text = client[2];
        return { level: NORMAL_STOP.test(text) ? 'info' : CLIENT_LEVELS[client[1]], traceback: false, text };
    }
    const python = PYTHON_LINE.exec(line);
    if (python) {
        return { level: PYTHON_LEVELS[python[1]], traceback: python[1] === 'CRITICAL', text: python[2] };
    }
    if (line.startsWith('Traceback ')) {
        return { level: 'error', traceback: true, text: line };
    }
    const continues = previous.traceback || /^\s/.test(line);
    return { level: continues ? previous.level : 'debug', traceback: previous.traceback, text: line };
}

/** An `OutputChannel` for the language client that files every line in `log` at its level. */
export class LevelledChannel implements vscode.OutputChannel {
    readonly name: string;
    private pending = '';
    private state: LineState = FIRST_LINE;

    constructor(private readonly log: vscode.LogOutputChannel) {
        this.name = log.name;
    }

    append(value: string): void {
        const lines = (this.pending + value).split(/\r?\n/);
        this.pending = lines.pop() ?? '';
        lines.forEach((line) => this.write(line));
    }

    appendLine(value: string): void {
        this.append(`${value}\n`);
    }

    private write(line: string): void {
        if (!line.trim()) {
            return;
        }
        const { text, ...state } = classify(line, this.state);
        this.state = state;
        this.log[state.level](text);
    }

    replace(value: string): void {
        this.append(value);
    }

    clear(): void {
        this.pending = '';
    }

    show(): void {
        this.log.show(true);
    }

    hide(): void {
        this.log.hide();
    }

    dispose(): void {
        // The extension owns `log` and disposes of it.
    }
}
