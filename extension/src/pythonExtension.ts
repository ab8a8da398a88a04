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

export { PVSC_EXTENSION_ID };
