// What Copilot Chat's agent budget added up for each request. Copilot 0.67 renders its agent prompt
// with its own o200k_base tokenizer (the tokenizer provider picks it from the endpoint's `tokenizer`,
// "o200k_base" for every extension-contributed model): each message of the OpenAI form counts 3 +
// every string value (role, text, tool_call_id) + its tool calls' strings × 1.5 + 1 for a name. Only
// the tools go through tokengauge's provideTokenCount (recorded by the extension's diagnostics, see
// src/api.ts): `floor(1.1 × (16 + Σ(8 + every key and string value of {name, description,
// parameters})))`. Also reported: what our message answers (+3 each) add up to, which Copilot uses
// elsewhere (telemetry, tool-result and summary sizing), not for its render budget.
'use strict';

const EPHEMERAL = new Set(['cache_control', 'stateful_marker', 'usage']);

/**
 * A wire message (ARCHITECTURE §3) as canonical JSON, without the parts that only carry VS Code bookkeeping and
 * without Copilot's internal tool-call id suffix (`__vscode-<n>`: counted, stripped when sent).
 */
function canonical(message) {
    const callId = (p) => (p.callId === undefined ? p : { ...p, callId: p.callId.replace(/__vscode-\d+$/, '') });
    const keep = (parts) => parts
        .filter((p) => !(p.type === 'data' && EPHEMERAL.has(p.mimeType)))
        .map((p) => callId(p.type === 'toolResult' ? { ...p, content: keep(p.content) } : p));
    return JSON.stringify({ role: message.role, name: message.name, content: keep(message.content) });
}

/** The strings Copilot counts for one tool, each as often as it counts it. */
function toolStrings(tool) {
    const out = [];
    const visit = (node) => {
        for (const [key, value] of Object.entries(node)) {
            if (!value) continue;
            out.push(key);
            if (typeof value === 'string') out.push(value);
            else if (typeof value === 'object') visit(value);
        }
    };
    visit({ name: tool.name, description: tool.description, parameters: tool.inputSchema });
    return out;
}

/**
 * Copilot's sum for one recorded chat, from the last answer each input got before the chat was sent
 * (Copilot may render the next request before it sends one it rendered earlier).
 */
function sumOf(recording, chat) {
    const strings = new Map();
    const messages = new Map();
    for (let i = 0; i < chat.afterCalls; i++) {
        const input = recording.inputs[i];
        const answer = recording.answers[i];
        if (answer === null) continue;
        if (typeof input === 'string') strings.set(input, answer); else messages.set(canonical(input), answer);
    }
    let schema = 0;
    let missingStrings = 0;
    for (const tool of chat.tools) {
        schema += 8;
        for (const s of toolStrings(tool)) {
            const answer = strings.get(s);
            if (answer === undefined) missingStrings++; else schema += answer;
        }
    }
    const tools = chat.tools.length ? Math.floor(1.1 * (16 + schema)) : 0;
    const perMessage = chat.messages.map((m) => messages.get(canonical(m)));
    const counted = perMessage.filter((n) => n !== undefined).reduce((a, n) => a + n, 0);
    const unmatched = perMessage.filter((n) => n === undefined).length;
    return { tools, answers: counted + 3 * chat.messages.length, unmatched, missingStrings };
}

/** Copilot's own count of one message in the OpenAI form (its BPETokenizer.countMessageTokens). */
function copilotMessageTokens(message, count) {
    let total = 3;
    for (const [key, value] of Object.entries(message)) {
        if (!value) continue;
        if (typeof value === 'string') total += count(value);
        else if (key === 'tool_calls') {
            const strings = value.flatMap((c) => [c.id, c.type, c.function && c.function.name, c.function && c.function.arguments]);
            total += Math.floor(1.5 * strings.filter(Boolean).reduce((a, v) => a + count(v), 0));
        } else if (Array.isArray(value)) {
            total += value.filter((p) => p && p.type === 'text').reduce((a, p) => a + count(p.text || ''), 0);
        }
        if (key === 'name') total += 1;
    }
    return total;
}

/** The text of a wire message's parts, tool results included. */
function partsText(parts) {
    return parts.map((p) => (p.type === 'text' ? p.value : p.type === 'toolResult' ? partsText(p.content) : '')).join('');
}

/** The text of an upstream request's last message (OpenAI or Anthropic shape). */
function lastText(request) {
    const messages = (request.json && request.json.messages) || [];
    const last = messages[messages.length - 1] || {};
    const text = (content) => (typeof content === 'string' ? content
        : (content || []).map((p) => (p.type === 'tool_result' ? text(p.content) : p.text || '')).join(''));
    return text(last.content);
}

/**
 * Copilot's sums for the requests of one turn, by upstream request id: each of the recording's
 * chats that carried tools against the upstream request(s) whose last message ends as the chat's
 * does (a chat the server sent more than once, a retry, covers each of them); `count` is o200k_base.
 */
function decompose(recording, requests, count) {
    const sums = new Map();
    for (const chat of recording.chats) {
        if (!chat.tools.length || !chat.messages.length) continue;
        const tail = partsText(chat.messages[chat.messages.length - 1].content).trim().slice(-160);
        const sum = sumOf(recording, chat);
        for (const request of requests) {
            if (sums.has(request.id) || !lastText(request).includes(tail)) continue;
            const messages = ((request.json && request.json.messages) || [])
                .reduce((a, m) => a + copilotMessageTokens(m, count), 0);
            sums.set(request.id, { ...sum, messages, total: messages + sum.tools });
        }
    }
    return sums;
}

module.exports = { canonical, copilotMessageTokens, decompose, toolStrings };
