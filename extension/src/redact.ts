/**
 * Keeping credentials out of what the extension writes: its log (the server's lines and the
 * language client's traces pass through it) and Copy Diagnostics. The server redacts its own
 * texts the same way (`upstream/redact.py`).
 *
 * A credential is an API key, the value of any header a provider sends unless the header is clearly
 * harmless, and a URL's user information and secret-looking query parameters. Known ones are
 * replaced as written, JSON-escaped and percent-encoded; then whatever looks like a credential,
 * whoever's it is: a URL's user information, a secret-looking query parameter's or JSON field's
 * value, a `Bearer`/`Basic` token.
 */

import type * as vscode from 'vscode';

import type { ProviderSettings } from './protocol';
import type { ISettings } from './settings';

export const REDACTED = '[redacted]';
/** A header value or URL part shorter than this is no credential (`1`, `on`). */
const MIN_SECRET = 4;
/**
 * A secret shorter than this (a test key, `ollama`) is replaced only where it stands as a whole
 * token, so that it never garbles a word or a version (the server's `MIN_PREFIX`).
 */
const WHOLE_TOKEN_BELOW = 8;
/** What may not stand before and after it: a word character, nor a `.` or `-` joining it to one. */
const WHOLE_TOKEN = [String.raw`(?<!\w)(?<!\w[.\-])`, String.raw`(?!\w)(?![.\-]\w)`];

/** Headers whose values are never credentials; any other header's value is treated as one. */
const HARMLESS_HEADERS = new Set([
    'accept',
    'accept-encoding',
    'accept-language',
    'anthropic-beta',
    'anthropic-version',
    'content-type',
    'http-referer',
    'openai-beta',
    'referer',
    'user-agent',
    'x-title',
]);

/** A parameter's or field's name that says its value is a credential (not `author`). */
const SECRET_NAME = String.raw`[\w.\-]*(?:key|token(?!gauge)|secret|passw|pwd|auth(?!ors?\b)|cookie|credential|sig|session)[\w.\-]*`;
const ESCAPED_REDACTED = REDACTED.replace(/[[\]]/g, '\\$&');
const PATTERNS: [RegExp, string][] = [
    [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>[\]]+@/gi, `$1${REDACTED}@`],
    [
        new RegExp(String.raw`([?&;]${SECRET_NAME}=)(?!${ESCAPED_REDACTED})[^&#\s"'<>]*[^&#\s"'<>.,:;)\]]`, 'gi'),
        `$1${REDACTED}`,
    ],
    [new RegExp(String.raw`("${SECRET_NAME}"\s*:\s*")(?:[^"\\]|\\.)+(")`, 'gi'), `$1${REDACTED}$2`],
    [/\b((?:bearer|basic)\s+)[\w.~+/=-]{6,}/gi, `$1${REDACTED}`],
];

/** Whether a header's value counts as a credential: any header not clearly harmless. */
export function secretHeader(name: string): boolean {
    return !HARMLESS_HEADERS.has(name.trim().toLowerCase());
}

function decoded(text: string): string {
    try {
        return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
        return text;
    }
}

/** The credentials in `url`: its user information and its secret-looking query parameters' values. */
export function urlSecrets(url: string): string[] {
    const found: string[] = [];
    const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)@/i.exec(url.trim())?.[1];
    if (userinfo) {
        found.push(userinfo, ...userinfo.split(':'));
    }
    const query = url.split('?')[1]?.split('#')[0] ?? '';
    for (const pair of query.split(/[&;]/)) {
        const [name, value = ''] = pair.split('=', 2);
        if (new RegExp(`^${SECRET_NAME}$`, 'i').test(decoded(name))) {
            found.push(value);
        }
    }
    return [...found, ...found.map(decoded)].filter((secret) => secret.length >= MIN_SECRET);
}

/** Every credential a provider's settings hold: its secret headers' values, its URL's; and the user
 * its gateway books spend to (a person's name, maybe: kept out the same way). */
export function providerSecrets(provider: ProviderSettings): string[] {
    const headers = Object.entries(provider.headers ?? {})
        .filter(([name]) => secretHeader(name))
        .flatMap(([, value]) => [value, ...value.split(/\s+/).slice(-1)]);
    const user = provider.attribution?.user;
    return [...headers, ...urlSecrets(provider.baseUrl ?? ''), ...(user ? [user] : [])].filter((secret) => secret.length >= MIN_SECRET);
}

/** Every credential the settings hold: the providers' (header values, URL parts) and the telemetry
 * collector's headers. */
export function settingsSecrets(settings: Pick<ISettings, 'providers' | 'telemetry'>): string[] {
    return [
        ...settings.providers.flatMap(providerSecrets),
        ...providerSecrets({ id: 'telemetry', headers: settings.telemetry.headers }),
    ];
}

/** The spellings of `secret` a text may hold: as is, JSON-escaped, percent-encoded. */
function forms(secret: string): string[] {
    const json = JSON.stringify(secret).slice(1, -1);
    return [secret, json, json.replace(/\//g, '\\/'), encodeURIComponent(secret)];
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\\-\/]/g, '\\$&');

/** `text` with each of `secrets` and anything that looks like a credential replaced. */
export function redact(text: string, secrets: Iterable<string> = []): string {
    const known = [...new Set([...secrets].filter(Boolean))];
    const byLength = (a: string, b: string): number => b.length - a.length;
    const spellings = [...new Set(known.filter((s) => s.length >= WHOLE_TOKEN_BELOW).flatMap(forms))].sort(byLength);
    let result = text;
    for (const spelling of spellings) {
        result = result.split(spelling).join(REDACTED);
    }
    const short = [...new Set(known.filter((s) => s.length < WHOLE_TOKEN_BELOW).flatMap(forms))].sort(byLength);
    if (short.length) {
        const [before, after] = WHOLE_TOKEN;
        result = result.replace(new RegExp(`${before}(?:${short.map(escaped).join('|')})${after}`, 'g'), REDACTED);
    }
    return PATTERNS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), result);
}

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/**
 * The extension's log with every line redacted: the credentials `secrets()` names (the settings'
 * and the keys handed to the server) and whatever looks like one.
 */
export function redactingLog(
    log: vscode.LogOutputChannel,
    secrets: () => Iterable<string>,
): vscode.LogOutputChannel {
    const clean = (value: unknown): unknown =>
        typeof value === 'string'
            ? redact(value, secrets())
            : value instanceof Error
              ? redact(value.stack ?? value.message, secrets())
              : value;
    const levels: Record<Level, true> = { trace: true, debug: true, info: true, warn: true, error: true };
    return new Proxy(log, {
        get(target, property, receiver) {
            const value: unknown = Reflect.get(target, property, receiver);
            if (typeof value !== 'function') {
                return value;
            }
            if (property in levels || property === 'append' || property === 'appendLine' || property === 'replace') {
                return (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args.map(clean));
            }
            return (value as (...a: unknown[]) => unknown).bind(target);
        },
    });
}
