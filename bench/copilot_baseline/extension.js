// The baseline of the Copilot suite's comparison (scripts/test-copilot.sh with TG_COPILOT_COUNTER=
// baseline): a provider written the way GCMP and similar extensions are. It counts in process with
// js-tiktoken o200k_base (bench/count_compare/baseline.js: GCMP's counting) and streams chats from
// the test upstream's OpenAI-compatible API itself: maxInputTokens = window − maxOutputTokens,
// max_tokens = maxOutputTokens, usage reported as Copilot reads it, and an API error is the turn's
// error (no calibration, no retry, no trimming). Configured by the host's environment:
// TG_UPSTREAM, TG_COPILOT_API_KEY, TG_COPILOT_MODEL, TG_COPILOT_UPSTREAM_WINDOW, TG_COPILOT_OUTPUT.
'use strict';
const path = require('path');
const vscode = require('vscode');

const env = process.env;
const REPO = env.TG_REPO;
const { BaselineCounter } = require(path.join(REPO, 'bench', 'count_compare', 'baseline.js'));

function encoder() {
    const { getEncoding } = require(require.resolve('js-tiktoken', { paths: [REPO] }));
    return getEncoding('o200k_base');
}

const ROLES = { 1: 'user', 2: 'assistant', 3: 'system' };

/** A VS Code message as OpenAI chat messages (tool results become `tool` messages). */
function toOpenAI(message) {
    const role = ROLES[message.role] || 'user';
    const text = [];
    const calls = [];
    const results = [];
    for (const part of message.content) {
        if (part instanceof vscode.LanguageModelTextPart) text.push(part.value);
        else if (part instanceof vscode.LanguageModelToolCallPart) {
            calls.push({ id: part.callId, type: 'function', function: { name: part.name, arguments: JSON.stringify(part.input) } });
        } else if (part instanceof vscode.LanguageModelToolResultPart) {
            const content = part.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
            results.push({ role: 'tool', tool_call_id: part.callId, content });
        }
    }
    const out = [...results];
    if (text.length || calls.length || !results.length) {
        const m = { role, content: text.join('') };
        if (calls.length) m.tool_calls = calls;
        out.push(m);
    }
    return out;
}

class BaselineProvider {
    constructor() {
        this.counter = new BaselineCounter(encoder());
        this.window = +env.TG_COPILOT_UPSTREAM_WINDOW;
        this.output = +(env.TG_COPILOT_OUTPUT || 4096);
    }

    async provideLanguageModelChatInformation() {
        return [{
            id: env.TG_COPILOT_MODEL || 'sim', name: 'Baseline', family: 'claude-sonnet-4', version: '1',
            maxInputTokens: this.window - this.output, maxOutputTokens: this.output,
            capabilities: { toolCalling: true, imageInput: false },
        }];
    }

    async provideTokenCount(_model, input) {
        return this.counter.count(input);
    }

    async provideLanguageModelChatResponse(model, messages, options, progress, token) {
        const body = {
            model: model.id, stream: true, stream_options: { include_usage: true }, max_tokens: this.output,
            messages: messages.flatMap(toOpenAI),
        };
        if (options.tools && options.tools.length) {
            body.tools = options.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema || {} } }));
        }
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        const response = await fetch(`${env.TG_UPSTREAM}/v1/chat/completions`, {
            method: 'POST', signal: abort.signal, body: JSON.stringify(body),
            headers: { 'content-type': 'application/json', authorization: `Bearer ${env.TG_COPILOT_API_KEY}` },
        });
        if (!response.ok) throw new Error(`API error ${response.status}: ${await response.text()}`);
        const calls = new Map();
        let buffer = '';
        let usage;
        for await (const chunk of response.body) {
            buffer += Buffer.from(chunk).toString('utf8');
            let end;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
                const event = buffer.slice(0, end);
                buffer = buffer.slice(end + 2);
                const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('');
                if (!data || data === '[DONE]') continue;
                const json = JSON.parse(data);
                if (json.usage) usage = json.usage;
                for (const choice of json.choices || []) {
                    const delta = choice.delta || {};
                    if (delta.content) progress.report(new vscode.LanguageModelTextPart(delta.content));
                    for (const call of delta.tool_calls || []) {
                        const seen = calls.get(call.index) || { id: '', name: '', args: '' };
                        seen.id = call.id || seen.id;
                        seen.name = (call.function && call.function.name) || seen.name;
                        seen.args += (call.function && call.function.arguments) || '';
                        calls.set(call.index, seen);
                    }
                }
            }
        }
        for (const call of calls.values()) {
            progress.report(new vscode.LanguageModelToolCallPart(call.id, call.name, JSON.parse(call.args || '{}')));
        }
        if (usage && vscode.LanguageModelDataPart) {
            progress.report(new vscode.LanguageModelDataPart(Buffer.from(JSON.stringify(usage)), 'usage'));
        }
    }
}

function activate(context) {
    context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider('tg-baseline', new BaselineProvider()));
}

module.exports = { activate };
