/**
 * The names Copilot Chat gives the model for the tools it registers. Copilot contributes its tools
 * to VS Code as `copilot_readFile`, … (what `vscode.lm.tools` lists), but sends them to the model,
 * and counts them, as `read_file`, …: it renames each tool and, in its description and in every
 * string of its input schema, every mention of one of these names (Copilot Chat 0.67.0,
 * dist/extension.js: the enums `ContributedToolName` and `ToolName`, paired by key, and the
 * rewrite of the tools it hands to a request). tests/test_copilot_tool_names.py compares this
 * table with the Copilot the VS Code host runs.
 */

/** Copilot's contributed tool name → the name the model sees, in Copilot's order. */
export const MODEL_FACING_NAMES: ReadonlyMap<string, string> = new Map([
    ['copilot_applyPatch', 'apply_patch'],
    ['copilot_searchCodebase', 'semantic_search'],
    ['copilot_searchWorkspaceSymbols', 'search_workspace_symbols'],
    ['copilot_getVSCodeAPI', 'get_vscode_api'],
    ['copilot_findFiles', 'file_search'],
    ['copilot_findTextInFiles', 'grep_search'],
    ['copilot_readFile', 'read_file'],
    ['copilot_viewImage', 'view_image'],
    ['copilot_listDirectory', 'list_dir'],
    ['copilot_getErrors', 'get_errors'],
    ['copilot_getChangedFiles', 'get_changed_files'],
    ['copilot_readProjectStructure', 'read_project_structure'],
    ['copilot_createNewWorkspace', 'create_new_workspace'],
    ['copilot_createNewJupyterNotebook', 'create_new_jupyter_notebook'],
    ['copilot_insertEdit', 'insert_edit_into_file'],
    ['copilot_createFile', 'create_file'],
    ['copilot_replaceString', 'replace_string_in_file'],
    ['copilot_multiReplaceString', 'multi_replace_string_in_file'],
    ['copilot_editNotebook', 'edit_notebook_file'],
    ['copilot_runNotebookCell', 'run_notebook_cell'],
    ['copilot_readNotebookCellOutput', 'read_notebook_cell_output'],
    ['copilot_installExtension', 'install_extension'],
    ['copilot_fetchWebPage', 'fetch_webpage'],
    ['copilot_memory', 'memory'],
    ['copilot_findTestFiles', 'test_search'],
    ['copilot_githubRepo', 'github_repo'],
    ['copilot_githubTextSearch', 'github_text_search'],
    ['copilot_createDirectory', 'create_directory'],
    ['copilot_runVscodeCommand', 'run_vscode_command'],
    ['copilot_editFiles', 'edit_files'],
    ['copilot_switchAgent', 'switch_agent'],
    ['copilot_resolveMemoryFileUri', 'resolve_memory_file_uri'],
    ['copilot_sessionStoreSql', 'session_store_sql'],
]);

const MENTIONS = [...MODEL_FACING_NAMES].map(([contributed, facing]) => [new RegExp(`\\b${contributed}\\b`, 'g'), facing] as const);

/** A text with every mention of a contributed name replaced by the name the model sees. */
export function modelFacingText(text: string): string {
    return MENTIONS.reduce((out, [mention, facing]) => out.replace(mention, facing), text);
}

/** A value with every string in it (not the keys) as `modelFacingText`, as Copilot rewrites a schema. */
export function modelFacingSchema(value: unknown): unknown {
    if (typeof value === 'string') {
        return modelFacingText(value);
    }
    if (Array.isArray(value)) {
        return value.map(modelFacingSchema);
    }
    if (value !== null && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, modelFacingSchema(item)]));
    }
    return value;
}

/** The name the model sees for a tool: Copilot's rename, or the name itself. */
export function modelFacingName(name: string): string {
    return MODEL_FACING_NAMES.get(name) ?? name;
}
