// What a Chat Completions server's reasoning must carry to go back as it came (ARCHITECTURE §3):
// the field it was streamed in, its `reasoning_details`, the tool calls' `extra_content`, the
// message's own. It rides in the thinking part's `encrypted_content` metadata, behind a prefix
// of ours: the one metadata key both of Copilot's runtimes keep (the chat panel keeps every key;
// the Agents window's bridge keeps only `encrypted_content`, `signature`, `_completeThinking` and
// `redactedData`, as VS Code's own `vscode-reasoning-metadata:` does).
import { Part } from './protocol';

type Thinking = Extract<Part, { type: 'thinking' }>;
type Carried = Pick<Thinking, 'field' | 'details' | 'calls' | 'extra'>;

export const REASONING_PREFIX = 'tokengauge-reasoning:';

/** Whether the part carries reasoning of a Chat Completions server. */
export function carriesReasoning(part: Thinking): boolean {
    return part.field !== undefined || part.details !== undefined || part.calls !== undefined || part.extra !== undefined;
}

/** The part's reasoning as the `encrypted_content` metadata value. */
export function encodeReasoning(part: Thinking): string {
    const carried: Carried = { field: part.field, details: part.details, calls: part.calls, extra: part.extra };
    return REASONING_PREFIX + JSON.stringify(carried);
}

/**
 * The reasoning an `encrypted_content` value carries, as a thinking part of `value` (the text
 * Copilot gathered from the pieces shown); undefined for a value that is not ours, or damaged.
 */
export function decodeReasoning(encrypted: string, value: string): Thinking | undefined {
    if (!encrypted.startsWith(REASONING_PREFIX)) {
        return undefined;
    }
    let carried: unknown;
    try {
        carried = JSON.parse(encrypted.slice(REASONING_PREFIX.length));
    } catch {
        return undefined;
    }
    if (typeof carried !== 'object' || carried === null || Array.isArray(carried)) {
        return undefined;
    }
    const { field, details, calls, extra } = carried as Record<string, unknown>;
    const part: Thinking = { type: 'thinking', value };
    if (typeof field === 'string') {
        part.field = field;
    }
    if (Array.isArray(details)) {
        part.details = details;
    }
    if (isObject(calls)) {
        part.calls = calls;
    }
    if (isObject(extra)) {
        part.extra = extra;
    }
    return part;
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
