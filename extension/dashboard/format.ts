/**
 * Numbers, money, percentages, days and times as the dashboard shows them (pure, no DOM).
 *
 * Times are Unix seconds, shown in local time with fixed English month names and a 24-hour clock
 * (the UI is English; this keeps the text the same in every locale).
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MINUS = '\u2212';
export const DASH = '\u2014';

// ---- numbers ---------------------------------------------------------------------------------

/** 12345 → "12,345". */
export function formatCount(n: number): string {
    const sign = n < 0 ? '-' : '';
    return sign + Math.round(Math.abs(n)).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** "1 request", "12,345 requests". */
export function plural(n: number, one: string, many = `${one}s`): string {
    return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A token count in a few characters: 950, 12.3k, 128k, 1.23M. */
export function formatTokens(n: number): string {
    const abs = Math.abs(n);
    const units: [number, string][] = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (const [size, unit] of units) {
        // 999,950 rounds to "1000k": show it as 1M instead
        if (abs >= size * 0.99995) {
            const v = n / size;
            const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
            return `${trimZeros(v.toFixed(digits))}${unit}`;
        }
    }
    return String(Math.round(n));
}

function trimZeros(s: string): string {
    return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** US dollars: "$0.0042", "$0.034", "$0.25", "$1.23", "$1,234"; null → "—". */
export function formatUsd(v: number | null): string {
    if (v === null || !Number.isFinite(v)) {
        return DASH;
    }
    const abs = Math.abs(v);
    const sign = v < 0 ? MINUS : '';
    if (abs === 0) {
        return '$0.00';
    }
    if (abs < 0.01) {
        return `${sign}$${trimZeros(abs.toPrecision(2))}`;
    }
    if (abs < 0.1) {
        return `${sign}$${abs.toFixed(3)}`;
    }
    if (abs < 1000) {
        return `${sign}$${abs.toFixed(2)}`;
    }
    return `${sign}$${formatCount(abs)}`;
}

/** 0.623 → "62%" (digits after the point as asked). */
export function formatPercent(fraction: number, digits = 0): string {
    return `${(fraction * 100).toFixed(digits)}%`;
}

/** 0.032 → "+3.2%", -0.01 → "−1.0%", 0 → "0.0%". */
export function formatSignedPercent(fraction: number): string {
    const text = (Math.abs(fraction) * 100).toFixed(1);
    if (text === '0.0') {
        return '0.0%';
    }
    return `${fraction > 0 ? '+' : MINUS}${text}%`;
}

// ---- axis ticks -------------------------------------------------------------------------------

/** How an axis writes its ticks: plain numbers, percentages (the ticks are already in percent),
 * signed percentages ("+5%", "−5%"), US dollars, or token counts (950, 12.5k, 1.5M). */
export type TickStyle = 'number' | 'percent' | 'signed-percent' | 'usd' | 'tokens';

const MAX_TICK_DECIMALS = 12;

/** The fewest digits after the point that write every one of `ticks` exactly (float noise
 * aside): 0 for 0, 5, 10; 1 for 0.5, 1, 1.5; 3 for 1.295, 1.3, 1.305. The ticks of an axis are
 * whole multiples of its step, so this is d3's `precisionFixed(step)`; read from the ticks
 * themselves, different ticks always get different labels, whatever the step. */
export function tickDecimals(ticks: readonly number[]): number {
    const finite = ticks.filter((t) => Number.isFinite(t));
    const tolerance = Math.max(...finite.map(Math.abs), 0) * 1e-9 || 1e-15;
    let digits = 0;
    for (const t of finite) {
        while (digits < MAX_TICK_DECIMALS && Math.abs(Number(t.toFixed(digits)) - t) > tolerance) {
            digits++;
        }
    }
    return digits;
}

/** "1234567.5" → "1,234,567.5". */
function groupThousands(text: string): string {
    const [whole, fraction] = text.split('.');
    const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** A token count written exactly, in the largest unit it reaches: 950, 12.5k, 1.005M. */
function exactTokens(n: number): string {
    const abs = Math.abs(n);
    const units: [number, string][] = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    const [size, unit] = units.find(([size]) => abs >= size) ?? [1, ''];
    const v = abs / size;
    return `${n < 0 ? MINUS : ''}${trimZeros(v.toFixed(tickDecimals([v])))}${unit}`;
}

/** The tick labels of an axis whose ticks are `ticks`: each written with the same digits after
 * the point, the fewest that tell them all apart (`tickDecimals`): "1.295", "1.300", "1.305";
 * "$0.00", "$0.50", "$1.00"; "0%", "+5%". Token counts are written each in its own unit, exactly
 * and without trailing zeros ("500k", "1M", "1.5M"), which keeps them apart too. */
export function tickFormat(ticks: readonly number[], style: TickStyle = 'number'): (v: number) => string {
    const digits = tickDecimals(ticks);
    return (v: number) => {
        if (!Number.isFinite(v)) {
            return '';
        }
        if (style === 'tokens') {
            return exactTokens(v);
        }
        const text = groupThousands(Math.abs(v).toFixed(digits));
        const zero = /^[0.,]*$/.test(text);
        const sign = zero ? '' : v < 0 ? MINUS : style === 'signed-percent' ? '+' : '';
        switch (style) {
            case 'usd':
                return `${sign}$${text}`;
            case 'percent':
            case 'signed-percent':
                return `${sign}${text}%`;
            default:
                return `${sign}${text}`;
        }
    };
}

// ---- time -------------------------------------------------------------------------------------

/** 7 → "07". */
export function pad(n: number): string {
    return n.toString().padStart(2, '0');
}

/** A local date as the server writes days: "2026-11-24". */
function dateKey(d: Date): string {
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** The local date of a Unix time, as the server writes days: "2026-11-24". */
export function localDay(time: number): string {
    return dateKey(new Date(time * 1000));
}

/** "2026-11-24" → "Nov 24". */
export function formatDay(day: string): string {
    const [, month, date] = day.split('-').map(Number);
    return `${MONTHS[(month ?? 1) - 1] ?? '?'} ${date ?? '?'}`;
}

/** Local "14:03". */
export function formatClock(time: number): string {
    const d = new Date(time * 1000);
    return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** "14:03" when `time` is on the local day of `now`, else "Nov 24 14:03". */
export function formatWhen(time: number, now: number): string {
    const day = localDay(time);
    return day === localDay(now) ? formatClock(time) : `${formatDay(day)} ${formatClock(time)}`;
}

/** The local date `n` days after `day` (before it when `n` is negative). */
export function shiftDay(day: string, n: number): string {
    const [y, m, d] = day.split('-').map(Number);
    return dateKey(new Date(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + n, 12));
}

/** The days from `first` to `last` (local dates, inclusive), with the ones between filled in. */
export function dayRange(first: string, last: string): string[] {
    const [y, m, d] = first.split('-').map(Number);
    const days: string[] = [];
    const date = new Date(y ?? 1970, (m ?? 1) - 1, d ?? 1, 12);
    for (let i = 0; i < 4000; i++) {
        const day = dateKey(date);
        days.push(day);
        if (day >= last) {
            break;
        }
        date.setDate(date.getDate() + 1);
    }
    return days;
}
