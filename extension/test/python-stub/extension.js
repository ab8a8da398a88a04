// The part of the Python extension's API (@vscode/python-extension) Token Gauge uses: the active
// environment and its interpreter, here the one python.defaultInterpreterPath names.
'use strict';
const vscode = require('vscode');

function activate() {
    const interpreter = () => vscode.workspace.getConfiguration('python').get('defaultInterpreterPath');
    return {
        environments: {
            getActiveEnvironmentPath: () => ({ id: interpreter(), path: interpreter() }),
            resolveEnvironment: async (environment) => {
                const path = typeof environment === 'string' ? environment : environment.path;
                return path ? { id: path, path, executable: { uri: vscode.Uri.file(path) } } : undefined;
            },
        },
    };
}

module.exports = { activate };
