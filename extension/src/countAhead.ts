/**
 * Counting the tools' strings before the first turn. Copilot asks for every key and string of the
 * tools it sends, one call at a time; on the first turn ever the memo knows none of them, so the
 * first miss would carry them all (~500 strings, the turn's longest wait). At start the extension
 * counts them ahead instead, and again whenever more tools have registered: Copilot registers its
 * own over its first seconds, and VS Code has no event for that, so the memo looks again every
 * `everyMs` for `watchMs` (each look that finds no new tools costs a read of `vscode.lm.tools`).
 */

export interface CountAheadTimes {
    readonly everyMs: number;
    readonly watchMs: number;
}

export const COUNT_AHEAD_TIMES: CountAheadTimes = { everyMs: 1000, watchMs: 60_000 };

/**
 * Run `countAhead` now and every `everyMs` until `watchMs` have passed or `stopped()` (the server
 * stopped, a newer start took over, or the extension is going): the strings sent in all. The first
 * failure ends it (rejects): a server that fails a batch is not asked again every second.
 */
export async function countAheadWhileToolsRegister(
    countAhead: () => Promise<number>,
    stopped: () => boolean,
    times: CountAheadTimes = COUNT_AHEAD_TIMES,
): Promise<number> {
    const end = Date.now() + times.watchMs;
    let sent = 0;
    while (!stopped()) {
        sent += await countAhead();
        if (Date.now() + times.everyMs > end) {
            break;
        }
        await new Promise((resolve) => setTimeout(resolve, times.everyMs));
    }
    return sent;
}
