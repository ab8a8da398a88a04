/**
 * Colours the charts can be read in, whatever the theme (pure, no DOM): CSS colours parsed, WCAG
 * contrast ratios, the models' series colours for a light or a dark background, and any theme
 * colour pushed away from the background until marks drawn in it stand out (at least 3:1, the
 * ratio WCAG asks of graphics).
 */

export interface Rgb {
    r: number;
    g: number;
    b: number;
    /** 0 (transparent) to 1 (opaque). */
    a: number;
}

/** The contrast graphics need against their background (WCAG 2.1, non-text contrast). */
export const MIN_CONTRAST = 3;

/** The models' colours, in order, for light backgrounds and for dark ones: blue, orange, purple,
 * green, pink, grey; each at least 4.5:1 against VS Code's default editor backgrounds of its kind
 * (4:1 against those of every theme it ships). */
export const SERIES: { light: readonly string[]; dark: readonly string[] } = {
    light: ['#0969da', '#bc4c00', '#8250df', '#1a7f37', '#bf3989', '#6e7781'],
    dark: ['#4493f8', '#f0883e', '#ab7df8', '#3fb950', '#db61a2', '#9198a1'],
};

/** A CSS colour as `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()` or `rgba()` (what themes
 * and computed styles give); null for anything else. */
export function parseColor(text: string): Rgb | null {
    const s = text.trim().toLowerCase();
    const hex = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(s);
    if (hex) {
        const digits = hex[1];
        const long = digits.length <= 4 ? [...digits].map((d) => d + d).join('') : digits;
        const byte = (i: number) => parseInt(long.slice(i * 2, i * 2 + 2), 16);
        return { r: byte(0), g: byte(1), b: byte(2), a: long.length === 8 ? byte(3) / 255 : 1 };
    }
    const fn = /^rgba?\(([^)]*)\)$/.exec(s);
    if (!fn) {
        return null;
    }
    const parts = fn[1].split(/[\s,/]+/).filter(Boolean);
    if (parts.length < 3 || parts.length > 4) {
        return null;
    }
    const value = (part: string, scale: number) => (part.endsWith('%') ? (parseFloat(part) / 100) * scale : parseFloat(part));
    const [r, g, b] = parts.slice(0, 3).map((p) => value(p, 255));
    const a = parts.length === 4 ? value(parts[3], 1) : 1;
    if (![r, g, b, a].every(Number.isFinite)) {
        return null;
    }
    const clamp = (v: number, hi: number) => Math.min(hi, Math.max(0, v));
    return { r: clamp(r, 255), g: clamp(g, 255), b: clamp(b, 255), a: clamp(a, 1) };
}

/** `#rrggbb` (opaque). */
export function toHex(c: Rgb): string {
    const byte = (v: number) => Math.round(v).toString(16).padStart(2, '0');
    return `#${byte(c.r)}${byte(c.g)}${byte(c.b)}`;
}

/** `top` painted over the opaque `bottom`. */
export function over(top: Rgb, bottom: Rgb): Rgb {
    const mix = (t: number, b: number) => t * top.a + b * (1 - top.a);
    return { r: mix(top.r, bottom.r), g: mix(top.g, bottom.g), b: mix(top.b, bottom.b), a: 1 };
}

/** WCAG relative luminance of an opaque colour. */
export function luminance(c: Rgb): number {
    const channel = (v: number) => {
        const s = v / 255;
        return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
}

/** WCAG contrast ratio of `color` (painted over `background`) against `background`: 1 to 21. */
export function contrast(color: Rgb, background: Rgb): number {
    const a = luminance(over(color, background));
    const b = luminance(background);
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

/** Whether marks on `background` are drawn for a dark theme. */
export function isDark(background: Rgb): boolean {
    return luminance(background) < 0.18;
}

/**
 * `color` if it stands out against `background` by `min`:1, else the same colour, opaque, mixed
 * step by step with black (on a light background) or white (on a dark one) until it does.
 * Colours that cannot be read are returned as they are.
 */
export function legible(color: string, background: string, min = MIN_CONTRAST): string {
    const c = parseColor(color);
    const bg = parseColor(background);
    if (c === null || bg === null || bg.a < 1) {
        return color;
    }
    if (contrast(c, bg) >= min) {
        return color;
    }
    const base = over(c, bg);
    const toward = isDark(bg) ? 255 : 0;
    for (let i = 1; i <= 20; i++) {
        const t = i / 20;
        const mixed = toHex({ r: base.r + (toward - base.r) * t, g: base.g + (toward - base.g) * t, b: base.b + (toward - base.b) * t, a: 1 });
        const parsed = parseColor(mixed);
        if (parsed !== null && contrast(parsed, bg) >= min) {
            return mixed;
        }
    }
    return toward ? '#ffffff' : '#000000';
}

/** The models' colours for `background` (a light list when it cannot be read), each made
 * legible against it. */
export function seriesColors(background: string): string[] {
    const bg = parseColor(background);
    const list = bg !== null && bg.a === 1 && isDark(bg) ? SERIES.dark : SERIES.light;
    return list.map((c) => legible(c, background));
}
