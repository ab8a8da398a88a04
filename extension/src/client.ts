/**
 * Which of Copilot's runtimes a chat request comes from (ARCHITECTURE §1). VS Code's Agent Host
 * bridge, the Agents window's, sends its requests as VS Code itself (`requestInitiator` "core", an
 * extension's being its id) and alone asks for encrypted thinking: `includeEncryptedThinking` is
 * set by VS Code 1.139.1's `AgentHostByokLmHandler` on every request, and never by Copilot Chat
 * 0.67's agent (both read in their builds).
 */

import type * as vscode from 'vscode';

import { Client } from './protocol';

/** VS Code 1.139's request options (newer than the 1.104 typings). */
interface NewerOptions {
    requestInitiator?: unknown;
    includeEncryptedThinking?: unknown;
}

export function clientOf(options: vscode.ProvideLanguageModelChatResponseOptions): Client {
    const newer = options as NewerOptions;
    return newer.requestInitiator === 'core' || newer.includeEncryptedThinking === true ? 'agentHost' : 'chat';
}
