// What VS Code 1.139.1 puts between the Copilot runtime of the Agents window and a provider
// extension, rebuilt for the tests as an extension (the web workbench of the test host never starts
// its own). Read from the code-server 4.139.1 build, which ships VS Code 1.139.1:
// - the Agent Host's loopback proxy (`ByokLmProxyService`, out/vs/platform/agentHost/node/
//   agentHostMain.js): `POST /v/<vendor>/responses` with `Bearer <nonce>.<session>`, the Responses
//   body turned into a chat request (`instructions`, `input`, `tools`, `max_output_tokens` as
//   `modelOptions.max_tokens`, `reasoning.effort`), the reply sent as one SSE burst, every failure
//   of the chat call a 502 `{"error": {"message", "type": "api_error"}}`;
// - the workbench's handler (`AgentHostByokLmHandler`, out/vs/code/browser/workbench/workbench.js):
//   the model list (`maxContextWindowTokens` = in + out, `maxPromptTokens` = maxInputTokens,
//   `maxOutputTokens`), the messages (a System message from `instructions`, consecutive assistant
//   items merged, thinking with its metadata re-encoded), `includeEncryptedThinking: true`, the
//   reply buffered whole, usage from the `usage` data part's `prompt_tokens`, else 0.
// What it cannot be: VS Code's own caller. Its requests reach the provider through `vscode.lm` as an
// extension's (`requestInitiator` is this extension's id, not "core"), with the same options.
'use strict';
const http = require('http');
const crypto = require('crypto');
const vscode = require('vscode');

const STATEFUL_MARKER = 'stateful_marker';
const USAGE = 'usage';
const REASONING_PREFIX = 'vscode-reasoning-metadata:';

/** `{id, provider, name, maxContextWindowTokens, maxPromptTokens, maxOutputTokens}` per model of `vendor`. */
async function listModels(vendor) {
    const models = await vscode.lm.selectChatModels({ vendor });
    return models.map((m) => ({
        id: m.id,
        provider: vendor,
        name: m.name,
        maxContextWindowTokens: m.maxInputTokens + (m.maxOutputTokens || 0),
        maxPromptTokens: m.maxInputTokens,
        ...(m.maxOutputTokens ? { maxOutputTokens: m.maxOutputTokens } : {}),
    }));
}

class BadRequest extends Error {}

function required(value, what) {
    if (!value) throw new BadRequest(`${what} is required`);
    return value;
}

/** The Responses body as the proxy reads it. */
function readBody(vendor, body) {
    const input = typeof body.input === 'string'
        ? [{ type: 'message', role: 'user', content: [{ type: 'text', text: body.input }] }]
        : (body.input || []).map(readItem);
    const modelOptions = {};
    if (typeof body.temperature === 'number') modelOptions.temperature = body.temperature;
    if (typeof body.top_p === 'number') modelOptions.top_p = body.top_p;
    if (typeof body.max_output_tokens === 'number') modelOptions.max_tokens = body.max_output_tokens;
    return {
        vendor,
        modelId: required(body.model, 'model'),
        instructions: body.instructions,
        input,
        tools: (body.tools || []).map((t, i) => ({ type: t.type, name: required(t.name, `tools[${i}].name`), description: t.description, parameters: t.parameters })),
        previousResponseId: body.previous_response_id,
        reasoningEffort: body.reasoning && body.reasoning.effort,
        modelOptions: Object.keys(modelOptions).length ? modelOptions : undefined,
    };
}

function readItem(item, i) {
    switch (item.type) {
        case 'message': {
            const content = typeof item.content === 'string'
                ? (item.content ? [{ type: 'text', text: item.content }] : [])
                : (item.content || []).map((c, j) => {
                    if (['input_text', 'output_text', 'text'].includes(c.type)) return { type: 'text', text: c.text };
                    const image = c.type === 'input_image' && /^data:(image\/[^;,]+)(?:;[^,]*)?;base64,(.*)$/.exec(c.image_url || '');
                    if (image) return { type: 'image', mimeType: image[1], data: image[2] };
                    throw new BadRequest(`Unsupported input[${i}].content[${j}] type '${c.type}'`);
                });
            return { type: 'message', role: item.role, content };
        }
        case 'reasoning':
            return { type: 'reasoning', id: item.id, summary: (item.summary || []).map((s) => s.text), encryptedContent: item.encrypted_content || undefined };
        case 'function_call':
            return { type: 'function_call', callId: required(item.call_id, `input[${i}].call_id`), name: item.name, argumentsJson: item.arguments || '{}' };
        case 'function_call_output':
            return { type: 'function_call_output', callId: required(item.call_id, `input[${i}].call_id`), output: typeof item.output === 'string' ? item.output : JSON.stringify(item.output || '') };
        default:
            throw new BadRequest(`Unsupported input[${i}] type '${item.type}'`);
    }
}

function parseJson(text) {
    try { return JSON.parse(text); } catch { return {}; }
}

/** Thinking metadata from a reasoning item's encrypted content, as the handler decodes it. */
function decodeReasoning(encrypted) {
    if (!encrypted.startsWith(REASONING_PREFIX)) return { encrypted_content: encrypted };
    return JSON.parse(encrypted.slice(REASONING_PREFIX.length));
}

/** A thinking part's metadata as encrypted content, as the handler encodes it. */
function encodeReasoning(metadata) {
    const text = (key) => (metadata && typeof metadata[key] === 'string' ? metadata[key] : undefined);
    const encrypted = text('encrypted_content') || text('encrypted');
    if (encrypted) return encrypted;
    const kept = {};
    for (const key of ['signature', '_completeThinking', 'redactedData']) if (text(key)) kept[key] = text(key);
    return Object.keys(kept).length ? REASONING_PREFIX + JSON.stringify(kept) : undefined;
}

function toParts(item) {
    switch (item.type) {
        case 'message': {
            const parts = item.content.map((c) => (c.type === 'text'
                ? new vscode.LanguageModelTextPart(c.text)
                : vscode.LanguageModelDataPart.image(Buffer.from(c.data, 'base64'), c.mimeType)));
            return parts.length ? parts : [new vscode.LanguageModelTextPart('')];
        }
        case 'reasoning':
            return [new vscode.LanguageModelThinkingPart(item.summary, item.id,
                item.encryptedContent ? decodeReasoning(item.encryptedContent) : {})];
        case 'function_call':
            return [new vscode.LanguageModelToolCallPart(item.callId, item.name, parseJson(item.argumentsJson))];
        case 'function_call_output':
            return [new vscode.LanguageModelToolResultPart(item.callId, [new vscode.LanguageModelTextPart(item.output)])];
    }
    return [];
}

const ROLES = {
    system: vscode.LanguageModelChatMessageRole.System,
    developer: vscode.LanguageModelChatMessageRole.System,
    user: vscode.LanguageModelChatMessageRole.User,
    assistant: vscode.LanguageModelChatMessageRole.Assistant,
};

function roleOf(item) {
    if (item.type === 'message') return ROLES[item.role];
    return item.type === 'function_call_output' ? ROLES.user : ROLES.assistant;
}

/** The chat messages of one request: marker, instructions, then the items, assistant runs merged. */
function toMessages(request) {
    const messages = [];
    if (request.previousResponseId) {
        const marker = `${request.modelId}\\${request.previousResponseId}`;
        messages.push(new vscode.LanguageModelChatMessage(ROLES.assistant, [new vscode.LanguageModelDataPart(Buffer.from(marker), STATEFUL_MARKER)]));
    }
    if (request.instructions) messages.push(new vscode.LanguageModelChatMessage(ROLES.system, [new vscode.LanguageModelTextPart(request.instructions)]));
    for (const item of request.input) {
        const role = roleOf(item), parts = toParts(item), last = messages.at(-1);
        if (role === ROLES.assistant && last && last.role === ROLES.assistant) {
            messages[messages.length - 1] = new vscode.LanguageModelChatMessage(ROLES.assistant, [...last.content, ...parts]);
        } else {
            messages.push(new vscode.LanguageModelChatMessage(role, parts));
        }
    }
    return messages;
}

function usageOf(data) {
    try {
        const usage = JSON.parse(Buffer.from(data).toString('utf8'));
        return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
    } catch {
        return undefined;
    }
}

/** One chat call through `vscode.lm`: the reply's output items, response id and usage, or an error. */
async function chat(request, onRequest) {
    const [model] = await vscode.lm.selectChatModels({ vendor: request.vendor, id: request.modelId });
    if (!model) return { output: [], error: `No BYOK model found for ${request.vendor}/${request.modelId}` };
    const tools = request.tools.length ? request.tools.map((t) => ({
        name: t.name,
        description: t.description || '',
        inputSchema: t.type === 'function' ? t.parameters : { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
    })) : undefined;
    const options = {
        modelOptions: request.modelOptions,
        includeEncryptedThinking: true,
        ...(request.reasoningEffort ? { configuration: { reasoningEffort: request.reasoningEffort } } : {}),
        ...(tools ? { tools } : {}),
    };
    const messages = toMessages(request);
    onRequest({ messages: messages.length });
    try {
        const response = await model.sendRequest(messages, options, new vscode.CancellationTokenSource().token);
        const output = [];
        let responseId, usage;
        for await (const part of response.stream) {
            if (part instanceof vscode.LanguageModelTextPart) {
                const last = output.at(-1);
                if (last && last.type === 'message') last.text += part.value;
                else output.push({ type: 'message', text: part.value });
            } else if (part instanceof vscode.LanguageModelThinkingPart) {
                if (part.metadata && part.metadata.vscode_reasoning_done === true) continue;
                const value = Array.isArray(part.value) ? part.value.join('') : part.value;
                const last = output.at(-1);
                const encrypted = encodeReasoning(part.metadata);
                if (last && last.type === 'reasoning' && last.id === part.id) {
                    last.text += value;
                    last.encryptedContent = encrypted || last.encryptedContent;
                } else {
                    output.push({ type: 'reasoning', id: part.id, text: value, encryptedContent: encrypted });
                }
            } else if (part instanceof vscode.LanguageModelToolCallPart) {
                output.push({ type: 'function_call', callId: part.callId, name: part.name, argumentsJson: JSON.stringify(part.input || {}) });
            } else if (part instanceof vscode.LanguageModelDataPart && part.mimeType === STATEFUL_MARKER) {
                const text = Buffer.from(part.data).toString('utf8');
                const at = text.indexOf('\\');
                if (at !== -1 && text.slice(0, at) === request.modelId) responseId = text.slice(at + 1) || undefined;
            } else if (part instanceof vscode.LanguageModelDataPart && part.mimeType === USAGE) {
                usage = usageOf(part.data);
            }
        }
        return { output, responseId, usage };
    } catch (err) {
        return { output: [], error: err instanceof Error ? err.message : String(err) };
    }
}

let counter = 0;
const newId = (kind) => `${kind}_byok_${Date.now().toString(36)}_${(++counter).toString(36)}`;

function outputItem(o) {
    switch (o.type) {
        case 'message':
            return { id: newId('msg'), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: o.text, annotations: [], logprobs: [] }] };
        case 'reasoning':
            return { id: o.id && o.id.startsWith('rs') ? o.id : newId('rs'), type: 'reasoning', status: 'completed', summary: [{ type: 'summary_text', text: o.text }], encrypted_content: o.encryptedContent || null };
        default:
            return { id: newId('fc'), type: 'function_call', status: 'completed', call_id: o.callId, name: o.name, arguments: o.argumentsJson };
    }
}

/** The reply as the proxy streams it: every event at once, after the whole reply was read. */
function sse(result, model) {
    const id = result.responseId || newId('resp');
    const output = result.output.map(outputItem);
    const input = (result.usage && result.usage.inputTokens) || 0, out = (result.usage && result.usage.outputTokens) || 0;
    const usage = { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: out, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + out };
    const response = (status, items, u) => ({ id, object: 'response', created_at: Math.floor(Date.now() / 1000), status, error: null, model, output: items, usage: u });
    let seq = 0;
    const events = [];
    const event = (type, data) => events.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    event('response.created', { response: response('in_progress', [], undefined) });
    event('response.in_progress', { response: response('in_progress', [], undefined) });
    output.forEach((item, index) => {
        event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', ...(item.type === 'message' ? { content: [] } : item.type === 'reasoning' ? { summary: [], encrypted_content: null } : { arguments: '' }) } });
        if (item.type === 'message') {
            item.content.forEach((part, c) => {
                event('response.content_part.added', { item_id: item.id, output_index: index, content_index: c, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
                event('response.output_text.delta', { item_id: item.id, output_index: index, content_index: c, delta: part.text, logprobs: [] });
                event('response.output_text.done', { item_id: item.id, output_index: index, content_index: c, text: part.text, logprobs: [] });
                event('response.content_part.done', { item_id: item.id, output_index: index, content_index: c, part });
            });
        } else if (item.type === 'reasoning') {
            item.summary.forEach((part, s) => {
                event('response.reasoning_summary_part.added', { item_id: item.id, output_index: index, summary_index: s, part: { type: 'summary_text', text: '' } });
                event('response.reasoning_summary_text.delta', { item_id: item.id, output_index: index, summary_index: s, delta: part.text });
                event('response.reasoning_summary_text.done', { item_id: item.id, output_index: index, summary_index: s, text: part.text });
                event('response.reasoning_summary_part.done', { item_id: item.id, output_index: index, summary_index: s, part });
            });
        } else {
            event('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: item.arguments });
            event('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: item.arguments });
        }
        event('response.output_item.done', { output_index: index, item });
    });
    event('response.completed', { response: response('completed', output, usage) });
    return events;
}

function jsonError(res, status, message, type = 'api_error') {
    if (res.headersSent || res.writableEnded) return;
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type } }));
}

/** Start the proxy on 127.0.0.1. `onExchange({request, result, status})` sees every call. */
async function startBridge(onExchange = () => {}) {
    const nonce = crypto.randomBytes(32).toString('hex');
    const server = http.createServer((req, res) => {
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err) => jsonError(res, 500, `Internal proxy error: ${err.message}`)));
    });
    async function handle(req, res, text) {
        const auth = req.headers.authorization || '';
        const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
        const dot = token.indexOf('.');
        if (dot === -1 || token.slice(0, dot) !== nonce || dot === token.length - 1) return jsonError(res, 401, 'Invalid authentication', 'authentication_error');
        const match = /^\/v\/([^/]+)\/responses$/.exec(new URL(req.url, 'http://127.0.0.1').pathname);
        if (req.method !== 'POST' || !match) return jsonError(res, 404, `No route for ${req.method} ${req.url}`, 'not_found_error');
        let body, request;
        try {
            body = JSON.parse(text);
            request = readBody(decodeURIComponent(match[1]), body);
        } catch (err) {
            return jsonError(res, 400, err.message, 'invalid_request_error');
        }
        const reasoning = request.input.filter((i) => i.type === 'reasoning');
        const seen = {
            model: request.modelId, started: Date.now(), interaction: req.headers['x-interaction-type'], items: request.input.length,
            reasoningItems: reasoning.length, ours: reasoning.filter((i) => (i.encryptedContent || '').startsWith('tokengauge-reasoning:')).length,
        };
        const result = await chat(request, (sent) => Object.assign(seen, sent));
        onExchange({ ...seen, result });
        if (result.error) return jsonError(res, 502, result.error);
        if (body.stream === true) {
            res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
            for (const e of sse(result, request.modelId)) res.write(e);
            res.end();
        } else {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify({ id: result.responseId, object: 'response', status: 'completed', output: result.output.map(outputItem) }));
        }
    }
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${server.address().port}`;
    return {
        nonce,
        providerBaseUrl: (vendor) => `${baseUrl}/v/${encodeURIComponent(vendor)}`,
        close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
    };
}

module.exports = { startBridge, listModels, encodeReasoning, decodeReasoning };
