/**
 * The time ticks of the requests' axis (pure, no DOM). The axis runs in request order (`seq`), so
 * a tick stands at the first request of each step of local time: a step of minutes, hours or days,
 * the smallest that leaves room between the labels. Every axis of two or more requests gets two
 * ticks at least, and a label that says what the ticks are and in which time zone.
 */
import { formatDay, localDay, pad } from './format';

export interface AxisTick {
    /** The request's `seq` the tick stands at. */
    seq: number;
    label: string;
}

export interface TimeTicks {
    ticks: AxisTick[];
    /** The axis's label: "requests in order, time on Nov 24 (UTC+1)". */
    label: string;
}

interface Step {
    /** The step's length: seconds of a local day (a divisor of 24 h), or whole days. */
    seconds?: number;
    days?: number;
}

const STEPS: readonly Step[] = [
    ...[1, 2, 5, 10, 15, 30].map((m) => ({ seconds: m * 60 })),
    ...[1, 2, 3, 6, 12].map((h) => ({ seconds: h * 3600 })),
    ...[1, 2, 7, 14, 28].map((d) => ({ days: d })),
];

interface Candidate extends AxisTick {
    /** Its request's local date. */
    date: string;
    /** The first tick of a local day (on an axis of several days). */
    day: boolean;
}

/** "UTC", "UTC+1", "UTC−3:30": the local zone's offset at `time`. */
export function zoneLabel(time: number): string {
    const minutes = -new Date(time * 1000).getTimezoneOffset();
    if (minutes === 0) {
        return 'UTC';
    }
    const abs = Math.abs(minutes);
    const hours = Math.floor(abs / 60);
    return `UTC${minutes > 0 ? '+' : '\u2212'}${hours}${abs % 60 ? `:${pad(abs % 60)}` : ''}`;
}

/** Whole days from 1970-01-01 to the local date of `time`. */
function dayNumber(time: number): number {
    const d = new Date(time * 1000);
    return Math.round(Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) / 86400000);
}

/** Seconds since local midnight. */
function secondOfDay(time: number): number {
    const d = new Date(time * 1000);
    return d.getHours() * 3600 + d.getMinutes() * 60 + d.getSeconds();
}

function clock(second: number, seconds = false): string {
    const base = `${pad(Math.floor(second / 3600))}:${pad(Math.floor(second / 60) % 60)}`;
    return seconds ? `${base}:${pad(second % 60)}` : base;
}

/** The first request of each step: its bucket's start as the label, days named where they begin
 * (when the axis spans several). */
function candidates(sorted: readonly { seq: number; time: number }[], step: Step, manyDays: boolean): Candidate[] {
    const out: Candidate[] = [];
    let lastBucket = '';
    let lastDay = '';
    for (const r of sorted) {
        const day = localDay(r.time);
        let bucket: string;
        let label: string;
        if (step.days) {
            const start = Math.floor(dayNumber(r.time) / step.days) * step.days;
            bucket = String(start);
            label = formatDay(day);
        } else {
            const seconds = step.seconds ?? 3600;
            const start = Math.floor(secondOfDay(r.time) / seconds) * seconds;
            bucket = `${day} ${start}`;
            label = clock(start);
        }
        if (bucket !== lastBucket) {
            const newDay = manyDays && day !== lastDay;
            out.push({ seq: r.seq, label: newDay ? formatDay(day) : label, date: day, day: newDay });
        }
        lastBucket = bucket;
        lastDay = day;
    }
    return out;
}

/** `found` thinned so that no two ticks are closer than `minGap` seqs: day ticks first, then the
 * others where they leave room; on an axis of several days, the first tick kept of each day
 * names the day. */
function spaced(found: readonly Candidate[], minGap: number, manyDays: boolean): AxisTick[] {
    const kept: Candidate[] = [];
    const fits = (seq: number) => kept.every((k) => Math.abs(k.seq - seq) >= minGap);
    for (const c of [...found.filter((c) => c.day), ...found.filter((c) => !c.day)]) {
        if (fits(c.seq)) {
            kept.push(c);
        }
    }
    let date = '';
    return kept.sort((a, b) => a.seq - b.seq).map((c) => {
        const label = manyDays && c.date !== date ? formatDay(c.date) : c.label;
        date = c.date;
        return { seq: c.seq, label };
    });
}

/**
 * Ticks for an axis of requests in `seq` order, `minGap` seqs apart at least: the smallest step
 * of minutes, hours or days whose ticks fit, each at the first request of its step. When the
 * requests share one step (all in one minute) or crowd, the first and the last request are
 * ticked with their own times.
 */
export function requestTicks(requests: readonly { seq: number; time: number }[], minGap: number): TimeTicks {
    const sorted = [...requests].sort((a, b) => a.seq - b.seq);
    if (sorted.length === 0) {
        return { ticks: [], label: 'requests in order' };
    }
    const first = sorted[0];
    const last = sorted[sorted.length - 1];
    const zone = zoneLabel(last.time);
    const manyDays = localDay(first.time) !== localDay(last.time);
    const room = Math.max(2, Math.floor((last.seq - first.seq) / Math.max(minGap, 1e-9)) + 1);
    let step = STEPS[STEPS.length - 1];
    let found: Candidate[] = [];
    for (const s of STEPS) {
        found = candidates(sorted, s, manyDays);
        step = s;
        if (found.length <= room) {
            break;
        }
    }
    let ticks = spaced(found, minGap, manyDays);
    if (ticks.length < 2 && last.seq !== first.seq) {
        // one step holds them all: the ends, with their own times (seconds if they share a minute)
        const a = secondOfDay(first.time);
        const b = secondOfDay(last.time);
        const seconds = !manyDays && Math.floor(a / 60) === Math.floor(b / 60);
        ticks = [
            { seq: first.seq, label: manyDays ? formatDay(localDay(first.time)) : clock(a, seconds) },
            { seq: last.seq, label: manyDays ? formatDay(localDay(last.time)) : clock(b, seconds) },
        ];
    }
    const label = step.days
        ? `requests in order, date (${zone})`
        : manyDays
            ? `requests in order, date and time (${zone})`
            : `requests in order, time on ${formatDay(localDay(first.time))} (${zone})`;
    return { ticks, label };
}
