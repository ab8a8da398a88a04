/** Finding a Python ≥ 3.10 to run the server, with a clear message when there is none. */

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const MIN_PYTHON: [number, number] = [3, 10];

export interface PythonFound {
    command: string;
    version: [number, number];
}

export class PythonNotFoundError extends Error {}

async function versionOf(command: string): Promise<[number, number] | undefined> {
    try {
        const { stdout } = await run(command, ['-c', 'import sys; print(*sys.version_info[:2])'], {
            timeout: 15_000,
        });
        const [major, minor] = stdout.trim().split(' ').map(Number);
        return Number.isInteger(major) && Number.isInteger(minor) ? [major, minor] : undefined;
    } catch {
        return undefined;
    }
}

function atLeast([major, minor]: [number, number]): boolean {
    return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/** The configured interpreter, else `python3`, else `python` on PATH. */
export async function findPython(configured: string): Promise<PythonFound> {
    const candidates = configured ? [configured] : ['python3', 'python'];
    const tried: string[] = [];
    for (const command of candidates) {
        const version = await versionOf(command);
        if (version && atLeast(version)) {
            return { command, version };
        }
        tried.push(version ? `${command} is Python ${version.join('.')}` : `${command} did not run`);
    }
    throw new PythonNotFoundError(
        `tokengauge needs Python ${MIN_PYTHON.join('.')} or newer (${tried.join('; ')}). ` +
            'Set "tokenGauge.pythonPath" to a suitable interpreter.',
    );
}
