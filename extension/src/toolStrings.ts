/**
 * The strings Copilot Chat asks `provideTokenCount` about when it counts the tools of a request:
 * for each tool, every key and every string value of `{name, description, parameters}`, in order,
 * recursively (falsy values skipped, array items keyed "0", "1", …), as its `countToolTokens`
 * walks them (vscode-copilot-chat, extChatTokenizer.ts). About a quarter of an agent turn's calls
 * are these; counting them in one batch up front spares a round trip each on the first turn.
 * Copilot's own tools are walked as the model sees them (copilotToolNames.ts), and as registered,
 * for the clients that send them unchanged.
 */

import { modelFacingName, modelFacingSchema, modelFacingText } from './copilotToolNames';

/** What this needs of a `vscode.LanguageModelToolInformation`. */
export interface ToolSchema {
    readonly name: string;
    readonly description: string;
    readonly inputSchema?: object | undefined;
}

/** Every key and string value Copilot counts for these tools, each distinct string once. */
export function toolSchemaStrings(tools: readonly ToolSchema[]): string[] {
    const seen = new Set<string>();
    for (const tool of tools) {
        visit({ name: tool.name, description: tool.description, parameters: tool.inputSchema }, seen);
    }
    for (const tool of tools) {
        const parameters = tool.inputSchema && modelFacingSchema(tool.inputSchema);
        visit({ name: modelFacingName(tool.name), description: modelFacingText(tool.description), parameters }, seen);
    }
    return [...seen];
}

function visit(node: object, seen: Set<string>): void {
    for (const [key, value] of Object.entries(node)) {
        if (!value) {
            continue; // JavaScript falsiness, as Copilot's walk: '', 0, false, null, undefined
        }
        seen.add(key);
        if (typeof value === 'string') {
            seen.add(value);
        } else if (typeof value === 'object') {
            visit(value as object, seen);
        }
    }
}

/** `toolSchemaStrings` of the current tools, worked out again only when their number changes. */
export function currentToolStrings(tools: () => readonly ToolSchema[]): () => readonly string[] {
    let counted = -1;
    let strings: readonly string[] = [];
    return () => {
        const now = tools();
        if (now.length !== counted) {
            counted = now.length;
            strings = toolSchemaStrings(now);
        }
        return strings;
    };
}
