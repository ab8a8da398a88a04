// The part of the Python extension's API (@vscode/python-extension) Token Gauge uses: the active
// environment and its interpreter, here the one python.defaultInterpreterPath names, and the event
// that it changed (fired when that setting changes).
'use strict';
const vscode = require('vscode');

function activate(context) {
    const interpreter = () => vscode.workspace.getConfiguration('python').get('defaultInterpreterPath');
    const changed = new vscode.EventEmitter();
    context.subscriptions.push(
        changed,
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (event.affectsConfiguration('python.defaultInterpreterPath')) {
                changed.fire({ id: interpreter(), path: interpreter(), resource: undefined });
            }
        }),
    );
    return {
        environments: {
            getActiveEnvironmentPath: () => ({ id: interpreter(), path: interpreter() }),
            resolveEnvironment: async (environment) => {
                const path = typeof environment === 'string' ? environment : environment.path;
                return path ? { id: path, path, executable: { uri: vscode.Uri.file(path) } } : undefined;
            },
            onDidChangeActiveEnvironmentPath: changed.event,
        },
    };
}

module.exports = { activate };
