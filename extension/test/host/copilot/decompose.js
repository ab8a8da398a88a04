// What Copilot Chat's agent budget added up for each request, from the answers tokengauge gave its
// provideTokenCount calls (recorded by the extension's diagnostics, see src/countRecorder.ts), using
// Copilot 0.67's own rules (extChatTokenizer.ts): tools `floor(1.1 × (16 + Σ(8 + every key and string
// value of {name, description, parameters})))`, each message its count + 3.
'use strict';

const EPHEMERAL = new Set(['cache_control', 'stateful_marker', 'usage']);

/**
 * A DESIGN §3 message as canonical JSON, without the parts that only carry VS Code bookkeeping and
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
    const messageSum = counted + 3 * chat.messages.length;
    return { total: tools + messageSum, tools, messages: messageSum, counted, unmatched, missingStrings,
        perMessage: perMessage.map((n) => (n === undefined ? null : n + 3)) };
}

/** The text of a DESIGN §3 message's parts, tool results included. */
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
 * does (a chat the server sent more than once, a retry, covers each of them).
 */
function decompose(recording, requests) {
    const sums = new Map();
    for (const chat of recording.chats) {
        if (!chat.tools.length || !chat.messages.length) continue;
        const tail = partsText(chat.messages[chat.messages.length - 1].content).trim().slice(-160);
        const sum = sumOf(recording, chat);
        for (const request of requests) {
            if (!sums.has(request.id) && lastText(request).includes(tail)) sums.set(request.id, sum);
        }
    }
    return sums;
}

module.exports = { canonical, decompose, toolStrings };
