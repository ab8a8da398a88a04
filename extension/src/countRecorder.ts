/**
 * Diagnostics: a bounded record of what `provideTokenCount` was asked to count, as DESIGN §3 JSON
 * (strings, and messages already converted). Off by default and free when off (one check per call);
 * the Copilot host suite records an agent turn with it and the counting benchmark
 * (bench/count_compare.sh) replays that trace.
 */

import { CountInput } from './countMemo';

/** What one recording kept: the inputs in call order, and how many calls came after it was full. */
export interface CountRecording {
    inputs: CountInput[];
    dropped: number;
}

export class CountRecorder {
    private inputs: CountInput[] | undefined;
    private limit = 0;
    private dropped = 0;

    /** Start a new recording of at most `maxCalls` inputs (dropping any unfinished one). */
    start(maxCalls = 100_000): void {
        this.inputs = [];
        this.limit = Math.max(0, Math.floor(maxCalls));
        this.dropped = 0;
    }

    /** Stop and hand over what was recorded (empty if nothing was started). */
    stop(): CountRecording {
        const recording = { inputs: this.inputs ?? [], dropped: this.dropped };
        this.inputs = undefined;
        this.dropped = 0;
        return recording;
    }

    get recording(): boolean {
        return this.inputs !== undefined;
    }

    /** Note one input (the converted value, never mutated later: no copy is needed). */
    note(input: CountInput): void {
        if (this.inputs === undefined) {
            return;
        }
        if (this.inputs.length < this.limit) {
            this.inputs.push(input);
        } else {
            this.dropped++;
        }
    }
}
