// The in-process approach of GCMP and similar extensions, as the counting benchmark's baseline:
// js-tiktoken (o200k_base ranks from the npm package, offline) inside the extension host, with a
// 5000-entry LRU of text counts.
//
// Counting follows GCMP's TokenCounter (VicBilibily/GCMP src/utils/model/tokenCounter.ts; read,
// not copied): a string is its token count; a message is 3 tokens plus a walk over its own
// enumerable properties (role, content, name, and recursively each part's): every string counted,
// numbers and booleans counted as text, byte arrays and data parts by a small size estimate,
// thinking parts by their text only. `cacheStrings: false` is GCMP exactly as written (only the
// texts inside messages go through its LRU; top-level strings are encoded every time);
// the default, `true`, puts top-level strings through the LRU as well: the stronger baseline.
'use strict';

const IGNORED_MIME_TYPES = new Set(['cache_control', 'stateful_marker']);

/** A Map-backed LRU: a hit moves the key to the back, a full cache drops the front. */
class Lru {
    constructor(max) {
        this.max = max;
        this.map = new Map();
    }

    get(key) {
        const value = this.map.get(key);
        if (value !== undefined) {
            this.map.delete(key);
            this.map.set(key, value);
        }
        return value;
    }

    set(key, value) {
        if (this.map.has(key)) this.map.delete(key);
        else if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value);
        this.map.set(key, value);
    }

    get size() {
        return this.map.size;
    }
}

function byteLength(value) {
    return value instanceof Uint8Array ? value.byteLength : 0;
}

class BaselineCounter {
    /** `encoder` has js-tiktoken's `encode(text, allowedSpecial, disallowedSpecial)`. */
    constructor(encoder, { cacheSize = 5000, cacheStrings = true } = {}) {
        this.encoder = encoder;
        this.cache = new Lru(cacheSize);
        this.cacheStrings = cacheStrings;
    }

    /** Tokens of ordinary text (special-token text counted as text, as tiktoken's encode_ordinary). */
    encode(text) {
        return this.encoder.encode(text, [], []).length;
    }

    text(text) {
        if (!text) return 0;
        const cached = this.cache.get(text);
        if (cached !== undefined) return cached;
        const tokens = this.encode(text);
        this.cache.set(text, tokens);
        return tokens;
    }

    /** The count of a string or a message (plain object or class instance). */
    count(input) {
        if (typeof input === 'string') return this.cacheStrings ? this.text(input) : this.encode(input);
        return this.walk(input, 0);
    }

    walk(node, depth) {
        if (node && node.constructor && /Thinking/.test(node.constructor.name)) {
            const value = Array.isArray(node.value) ? node.value.join('') : node.value;
            return typeof value === 'string' ? this.text(value) : 0;
        }
        if (node && typeof node.mimeType === 'string' && 'data' in node) {
            if (IGNORED_MIME_TYPES.has(node.mimeType)) return 0;
            const bytes = byteLength(node.data);
            // GCMP estimates images by tiles; the trace has none, so every data part is sized alike.
            return this.text(node.mimeType) + (bytes ? Math.min(200, 20 + Math.ceil(bytes / 16384)) : 0);
        }
        let tokens = depth === 0 ? 3 : 0;
        for (const value of Object.values(node)) {
            if (!value) continue;
            const bytes = byteLength(value);
            if (bytes) {
                tokens += Math.min(200, 20 + Math.ceil(bytes / 16384));
            } else if (typeof value === 'string') {
                tokens += this.text(value);
            } else if (typeof value === 'number' || typeof value === 'boolean') {
                tokens += this.text(String(value));
            } else if (Array.isArray(value)) {
                for (const item of value) {
                    if (typeof item === 'string') tokens += this.text(item);
                    else if (typeof item === 'number' || typeof item === 'boolean') tokens += this.text(String(item));
                    else if (item && typeof item === 'object') tokens += this.walk(item, depth + 2);
                }
            } else if (typeof value === 'object') {
                tokens += this.walk(value, depth + 1);
            }
        }
        return tokens;
    }
}

/** Load js-tiktoken's o200k_base encoder from `repo`'s node_modules, timing each step. */
function loadEncoder(repo) {
    const t0 = performance.now();
    const { Tiktoken } = require(require.resolve('js-tiktoken/lite', { paths: [repo] }));
    const ranks = require(require.resolve('js-tiktoken/ranks/o200k_base', { paths: [repo] }));
    const t1 = performance.now();
    const encoder = new Tiktoken(ranks);
    const t2 = performance.now();
    return { encoder, Tiktoken, ranks, requireMs: t1 - t0, constructMs: t2 - t1 };
}

/** A LanguageModelChatProvider (one model) that counts with `counter()` — the current counter. */
function baselineProvider(vscode, counter) {
    const model = {
        id: 'o200k-lru', name: 'js-tiktoken o200k_base + LRU (baseline)', family: 'gpt-4o', version: '1',
        maxInputTokens: 111616, maxOutputTokens: 16384, capabilities: { toolCalling: true },
    };
    return {
        model,
        provider: {
            onDidChangeLanguageModelChatInformation: new vscode.EventEmitter().event,
            provideLanguageModelChatInformation: async () => [model],
            provideLanguageModelChatResponse: async () => { throw new Error('the baseline only counts'); },
            provideTokenCount: async (_model, input) => counter().count(input),
        },
    };
}

module.exports = { Lru, BaselineCounter, loadEncoder, baselineProvider };
