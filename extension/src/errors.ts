/**
 * Errors a person reads: the server's sentence alone. VS Code and Copilot show an error's stack when
 * it has one (a JavaScript stack means nothing to a user), so the errors thrown to them carry none.
 */

/** An error whose text is all there is to show: no stack, no class name in front. */
export class PlainError extends Error {
    constructor(message: string) {
        super(message);
        this.name = 'Token Gauge';
        this.stack = '';
    }
}

/** The message of anything thrown (a JSON-RPC error's message is the server's sentence). */
export function messageOf(error: unknown): string {
    if (error instanceof Error) {
        return error.message;
    }
    return String(error);
}

/** The error to hand to VS Code for `error`: its message, without a stack. */
export function plain(error: unknown): PlainError {
    return error instanceof PlainError ? error : new PlainError(messageOf(error));
}
