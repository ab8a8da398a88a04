/**
 * VS Code's language-model objects to ARCHITECTURE §3 JSON, and the server's parts back to plain values.
 * Copilot passes plain objects `{role, content, name}` with numeric roles as often as real class
 * instances, so everything here goes by shape, never by `instanceof`.
 */

import { Message, Part, Role, Tool } from './protocol';
import { decodeReasoning } from './reasoning';

/** VS Code's `LanguageModelChatMessageRole`: 1 user, 2 assistant, 3 system. */
const ROLES: Record<number | string, Role> = {
    1: 'user',
    2: 'assistant',
    3: 'system',
    user: 'user',
    assistant: 'assistant',
    system: 'system',
};

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null;
}

function base64(data: unknown): string {
    if (data instanceof Uint8Array) {
        return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
    }
    return typeof data === 'string' ? Buffer.from(data, 'utf8').toString('base64') : '';
}

function jsonSafe(value: unknown): unknown {
    try {
        return JSON.parse(JSON.stringify(value ?? null)) as unknown;
    } catch {
        return String(value);
    }
}

/** One VS Code part (class instance or plain object) as a wire part (ARCHITECTURE §3). */
export function toPart(part: unknown): Part {
    if (typeof part === 'string') {
        return { type: 'text', value: part };
    }
    if (!isRecord(part)) {
        return { type: 'unknown', json: jsonSafe(part) };
    }
    if (typeof part.callId === 'string' && typeof part.name === 'string' && 'input' in part) {
        return { type: 'toolCall', callId: part.callId, name: part.name, input: jsonSafe(part.input) };
    }
    if (typeof part.callId === 'string' && Array.isArray(part.content)) {
        return { type: 'toolResult', callId: part.callId, content: part.content.map(toPart) };
    }
    if (typeof part.mimeType === 'string' && 'data' in part) {
        return { type: 'data', mimeType: part.mimeType, data: base64(part.data) };
    }
    // VS Code's own class is minified in the host ('rs' in 1.139): know it by its fields too.
    const thinking = (part.constructor?.name?.includes('Thinking') ?? false) || ('id' in part && 'metadata' in part);
    if (thinking && (typeof part.value === 'string' || Array.isArray(part.value))) {
        return toThinking(Array.isArray(part.value) ? part.value.join('') : part.value, part.id, part.metadata);
    }
    if (typeof part.value === 'string') {
        return { type: 'text', value: part.value };
    }
    return { type: 'unknown', json: jsonSafe(part.value ?? part) };
}

/**
 * A thinking part, with what it carries for the API in its id and metadata, by the names Copilot's
 * own clients use (and keep in the history they send back): Anthropic's `signature` with
 * `_completeThinking` (the whole block) or `redactedData`; a Responses reasoning item's
 * `encrypted_content` (the part's id is the item's); a Chat Completions server's reasoning in ours
 * (`reasoning.ts`).
 */
function toThinking(value: string, id: unknown, metadata: unknown): Part {
    const meta = isRecord(metadata) ? metadata : {};
    const carried = typeof meta.encrypted_content === 'string' ? decodeReasoning(meta.encrypted_content, value) : undefined;
    if (carried) {
        return carried;
    }
    if (typeof meta.encrypted_content === 'string' && meta.encrypted_content && typeof id === 'string' && id) {
        return { type: 'thinking', value: '', id, encrypted: meta.encrypted_content };
    }
    if (typeof meta.redactedData === 'string') {
        return { type: 'thinking', value: '', redacted: meta.redactedData };
    }
    if (typeof meta.signature === 'string' && meta.signature) {
        const whole = typeof meta._completeThinking === 'string' ? meta._completeThinking : value;
        return { type: 'thinking', value: whole, signature: meta.signature };
    }
    return { type: 'thinking', value };
}

/** A chat message (class instance or `{role, content, name}`) as a wire message (ARCHITECTURE §3). */
export function toMessage(message: unknown): Message {
    if (!isRecord(message)) {
        throw new Error(`not a chat message: ${typeof message}`);
    }
    const role = ROLES[message.role as number | string];
    if (role === undefined) {
        throw new Error(`unknown chat message role ${String(message.role)}`);
    }
    const content = message.content;
    const parts = Array.isArray(content) ? content.map(toPart) : [toPart(content ?? '')];
    const name = typeof message.name === 'string' && message.name ? message.name : undefined;
    return name === undefined ? { role, content: parts } : { role, name, content: parts };
}

/** A tool as the server wants it. */
export function toTool(tool: { name: string; description?: string; inputSchema?: unknown }): Tool {
    return { name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema ?? {} };
}

/** A count input: strings stay strings, anything else is a message. */
export function toCountInput(input: unknown): string | Message {
    return typeof input === 'string' ? input : toMessage(input);
}
