// A second extension for the host tests: it reaches tokengauge only through the public `vscode.lm`
// API, as Copilot Chat or any other chat extension does, and hands the tests what it saw.
'use strict';
const vscode = require('vscode');

const VENDOR = 'tokengauge';

/** The tokengauge models, waiting up to `ms` for the provider to register them. */
async function models(ms = 30000) {
    const until = Date.now() + ms;
    for (;;) {
        const found = await vscode.lm.selectChatModels({ vendor: VENDOR });
        if (found.length || Date.now() > until) return found;
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

async function model(id) {
    const found = (await models()).find((m) => m.id === id);
    if (!found) throw new Error(`tokengauge model ${id} is not available`);
    return found;
}

/** Describe a response part without relying on the tests' own `vscode` classes. */
function describePart(part) {
    if (part instanceof vscode.LanguageModelTextPart) return { kind: 'text', value: part.value };
    if (part instanceof vscode.LanguageModelToolCallPart) {
        return { kind: 'toolCall', name: part.name, input: part.input };
    }
    if (vscode.LanguageModelDataPart && part instanceof vscode.LanguageModelDataPart) {
        return { kind: 'data', mimeType: part.mimeType, text: Buffer.from(part.data).toString('utf8') };
    }
    return { kind: 'other', type: part && part.constructor ? part.constructor.name : typeof part };
}

function activate() {
    return {
        /** `{id, maxInputTokens, maxOutputTokens}` of every tokengauge model. */
        async listModels() {
            return (await models()).map((m) => ({
                id: m.id,
                maxInputTokens: m.maxInputTokens,
                maxOutputTokens: m.maxOutputTokens,
            }));
        },
        /** countTokens of a string, or of a user message when `asMessage`. */
        async countTokens(id, text, asMessage = false) {
            const input = asMessage ? vscode.LanguageModelChatMessage.User(text) : text;
            return (await model(id)).countTokens(input);
        },
        /** Milliseconds each countTokens call took, in order (the model is looked up once, untimed). */
        async timeCounts(id, texts) {
            const m = await model(id);
            const times = [];
            for (const text of texts) {
                const start = performance.now();
                await m.countTokens(text);
                times.push(performance.now() - start);
            }
            return times;
        },
        /** Send one user message; every streamed part, described. */
        async chat(id, text, options = {}) {
            const response = await (await model(id)).sendRequest(
                [vscode.LanguageModelChatMessage.User(text)],
                options,
                new vscode.CancellationTokenSource().token,
            );
            const parts = [];
            for await (const part of response.stream) parts.push(describePart(part));
            return parts;
        },
    };
}

module.exports = { activate, deactivate() {} };
