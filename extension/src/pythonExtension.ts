/** The Python extension's active interpreter, through its published API (`@vscode/python-extension`). */

import * as vscode from 'vscode';
import { PVSC_EXTENSION_ID, PythonExtension } from '@vscode/python-extension';

/** The interpreter the Python extension has selected: undefined when it has none, null when the
 * extension is not installed. */
export async function activeInterpreter(): Promise<string | undefined | null> {
    if (!vscode.extensions.getExtension(PVSC_EXTENSION_ID)) {
        return null;
    }
    const api = await PythonExtension.api();
    const selected = api.environments.getActiveEnvironmentPath();
    const environment = await api.environments.resolveEnvironment(selected);
    return environment?.executable.uri?.fsPath ?? undefined;
}

/**
 * Call `changed` when the Python extension selects another interpreter, and when that extension
 * is installed or enabled while this one runs (it may bring the Python that was missing).
 */
export function watchInterpreter(changed: () => void, log: vscode.LogOutputChannel): vscode.Disposable {
    let watching: vscode.Disposable | undefined;
    const watch = async (): Promise<void> => {
        if (watching || !vscode.extensions.getExtension(PVSC_EXTENSION_ID)) {
            return;
        }
        const api = await PythonExtension.api();
        watching ??= api.environments.onDidChangeActiveEnvironmentPath(changed);
    };
    const failed = (error: unknown): void => log.warn(`following the Python extension's interpreter: ${String(error)}`);
    void watch().catch(failed);
    const installed = vscode.extensions.onDidChange(() => {
        if (!watching && vscode.extensions.getExtension(PVSC_EXTENSION_ID)) {
            void watch().then(changed, failed);
        }
    });
    return new vscode.Disposable(() => {
        installed.dispose();
        watching?.dispose();
    });
}

export { PVSC_EXTENSION_ID };
