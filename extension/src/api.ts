/**
 * Diagnostics: a bounded record of what `provideTokenCount` was asked to count, as DESIGN §3 JSON
 * (strings, and messages already converted), the answer each call got, and where in that sequence
 * each chat request was sent. Off by default and free when off (one check per call); the Copilot
 * host suite records agent turns with it (to decompose what Copilot's budget added up from our
 * answers) and the counting benchmark (bench/count_compare.sh) replays the inputs.
 */

import { CountInput } from './countMemo';

/** A chat request as the server got it: sent after `afterCalls` recorded count calls. */
export interface RecordedChat {
    afterCalls: number;
    messages: unknown[];
    tools: unknown[];
}

/** What one recording kept: the inputs in call order with their answers, the chats, and how many calls came after it was full. */
export interface CountRecording {
    inputs: CountInput[];
    answers: (number | null)[];
    chats: RecordedChat[];
    dropped: number;
}

export class CountRecorder {
    private current: CountRecording | undefined;
    private limit = 0;

    /** Start a new recording of at most `maxCalls` inputs (dropping any unfinished one). */
    start(maxCalls = 100_000): void {
        this.current = { inputs: [], answers: [], chats: [], dropped: 0 };
        this.limit = Math.max(0, Math.floor(maxCalls));
    }

    /** Stop and hand over what was recorded (empty if nothing was started). */
    stop(): CountRecording {
        const recording = this.current ?? { inputs: [], answers: [], chats: [], dropped: 0 };
        this.current = undefined;
        return recording;
    }

    /**
     * Note one input (the converted value, never mutated later: no copy is needed); returns the
     * callback that records its answer.
     */
    note(input: CountInput): (tokens: number) => void {
        const recording = this.current;
        if (recording === undefined) {
            return ignore;
        }
        if (recording.inputs.length >= this.limit) {
            recording.dropped++;
            return ignore;
        }
        const index = recording.inputs.push(input) - 1;
        recording.answers.push(null);
        return (tokens) => {
            recording.answers[index] = tokens;
        };
    }

    /** Note a chat request, after the count calls recorded so far. */
    chat(messages: unknown[], tools: unknown[]): void {
        this.current?.chats.push({ afterCalls: this.current.inputs.length, messages, tools });
    }
}

const ignore = (): void => undefined;
