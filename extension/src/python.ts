/**
 * Finding a Python ≥ 3.10 to run the server: the `tokenGauge.pythonPath` setting when it is set
 * (the person chose it: nothing else is tried), else the Python extension's active interpreter
 * when that extension is installed (its published API, `@vscode/python-extension`) and the
 * workspace is trusted (in one that is not, that interpreter may be the workspace's own
 * environment), else PATH: `python3`, `python`, and on Windows the launcher `py -3`. When none
 * will do, the error says what each candidate was and which ways out there are.
 */

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const MIN_PYTHON: [number, number] = [3, 10];

/** A way to run Python: a program and the arguments that come before the script's. */
export interface PythonCommand {
    command: string;
    args: string[];
    /** Where it came from, as a person would say it. */
    source: string;
}

export interface PythonFound extends PythonCommand {
    version: [number, number];
    /** The Python extension's interpreter, when it named one that was passed over because the
     * workspace is not trusted. */
    untrustedInterpreter?: string;
}

/** The ways out of a missing or too old Python, for the error's buttons. */
export type PythonRemedy = 'install' | 'choose' | 'getPythonExtension' | 'setPath';

export class PythonNotFoundError extends Error {
    constructor(
        message: string,
        readonly remedies: PythonRemedy[],
    ) {
        super(message);
    }
}

/** What running `python -c` on a candidate found: its version; `missing` (no such program);
 * `notPython` (it ran, but did not answer as Python does); undefined (it failed to run). */
export type Found = [number, number] | 'missing' | 'notPython' | undefined;

/** Runs `python -c` on a candidate. */
export type Probe = (candidate: PythonCommand) => Promise<Found>;

export interface PythonSources {
    /** `tokenGauge.pythonPath` ('' when unset). */
    configured: string;
    /** The Python extension's active interpreter: undefined when it has none; null when the
     * extension is not installed. */
    fromPythonExtension: () => Promise<string | undefined | null>;
    /** Whether the workspace is trusted (by default it is). */
    trusted?: boolean;
    platform?: NodeJS.Platform;
    probe?: Probe;
}

export const versionOf: Probe = async ({ command, args }) => {
    let stdout: string;
    try {
        ({ stdout } = await run(command, [...args, '-c', 'import sys; print(*sys.version_info[:2])'], {
            timeout: 15_000,
            windowsHide: true,
        }));
    } catch (error) {
        const code = (error as { code?: unknown }).code;
        // A numeric code is the program's own exit status: it ran, and is not the Python we asked.
        return code === 'ENOENT' ? 'missing' : typeof code === 'number' ? 'notPython' : undefined;
    }
    const [major, minor] = stdout.trim().split(' ').map(Number);
    return Number.isInteger(major) && Number.isInteger(minor) ? [major, minor] : 'notPython';
};

/** What a person is told of a candidate that was probed and passed over. */
function verdict(found: Found): string {
    if (Array.isArray(found)) {
        return `is Python ${found.join('.')}`;
    }
    if (found === 'missing') {
        return 'was not found';
    }
    return found === 'notPython' ? 'ran but is not Python (it did not answer as Python does)' : 'did not run';
}

function atLeast([major, minor]: [number, number]): boolean {
    return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/** A candidate as a person would type it: `py -3`. */
export const shown = ({ command, args }: PythonCommand): string => [command, ...args].join(' ');

const SETTING = 'the tokenGauge.pythonPath setting';
const PYTHON_EXTENSION = "the Python extension's interpreter";

/** The candidates after the setting (unset), in the order they are tried: the Python extension's
 * interpreter, when it has one, then PATH. */
function unconfigured(active: string | undefined | null, platform: NodeJS.Platform): PythonCommand[] {
    const list: PythonCommand[] = active ? [{ command: active, args: [], source: PYTHON_EXTENSION }] : [];
    list.push({ command: 'python3', args: [], source: 'PATH' }, { command: 'python', args: [], source: 'PATH' });
    if (platform === 'win32') {
        list.push({ command: 'py', args: ['-3'], source: 'the Python launcher' });
    }
    return list;
}

/** The first candidate that is a Python ≥ 3.10; else `PythonNotFoundError`. */
export async function findPython(sources: PythonSources): Promise<PythonFound> {
    const probe = sources.probe ?? versionOf;
    const trusted = sources.trusted ?? true;
    const active = sources.configured ? null : await sources.fromPythonExtension().catch(() => undefined);
    const list = sources.configured
        ? [{ command: sources.configured, args: [], source: SETTING }]
        : unconfigured(trusted ? active : undefined, sources.platform ?? process.platform);
    const passedOver = trusted || !active ? {} : { untrustedInterpreter: active };
    const tried: string[] = [];
    for (const candidate of list) {
        const version = await probe(candidate);
        if (Array.isArray(version) && atLeast(version)) {
            return { ...candidate, version, ...passedOver };
        }
        tried.push(`${shown(candidate)} (${candidate.source}) ${verdict(version)}`);
    }
    const needed = `Python ${MIN_PYTHON.join('.')} or newer`;
    if (sources.configured) {
        throw new PythonNotFoundError(
            `Token Gauge needs ${needed} for its counting server: ${tried[0]}. ` +
                'Set tokenGauge.pythonPath to a suitable interpreter, or clear it to use the one found on its own.',
            ['setPath', 'install'],
        );
    }
    if (!trusted) {
        throw new PythonNotFoundError(
            `Token Gauge needs ${needed} for its counting server and found none: ${tried.join('; ')} ` +
                "(in a workspace you have not trusted, the Python extension's interpreter is not used). " +
                'Install Python, or set tokenGauge.pythonPath.',
            ['install', 'setPath'],
        );
    }
    throw new PythonNotFoundError(
        `Token Gauge needs ${needed} for its counting server and found none: ${tried.join('; ')}. ` +
            'Install Python, choose an interpreter, or set tokenGauge.pythonPath.',
        active === null ? ['install', 'getPythonExtension', 'setPath'] : ['install', 'choose', 'setPath'],
    );
}

/** What the log says, once, of the Python extension's interpreter passed over in an untrusted workspace. */
export function untrustedNote(interpreter: string, used: PythonCommand): string {
    return (
        `the workspace is not trusted: the Python extension's interpreter (${interpreter}) is not used, ` +
        `as it may be the workspace's own; the server runs on ${shown(used)} (${used.source}) instead`
    );
}

/**
 * Whether the server should start again now that the Python extension's interpreter is `active`:
 * never while the setting names one; always when no server runs (the new one may do); never in
 * an untrusted workspace (that interpreter is not used there); otherwise when the server would be
 * found on another interpreter than the one it runs on.
 */
export function interpreterChangeRestarts(
    configured: string,
    running: PythonCommand | undefined,
    active: string | undefined | null,
    trusted = true,
): boolean {
    if (configured) {
        return false;
    }
    if (!running) {
        return true;
    }
    if (!trusted) {
        return false;
    }
    return active ? active !== running.command : running.source === PYTHON_EXTENSION;
}
