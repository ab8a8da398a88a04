/**
 * The colours the charts draw with. SVG presentation attributes do not resolve `var()`, so the
 * stylesheet's `--tg-*` properties (VS Code's theme variables, or the report's light and dark
 * fallbacks) are read as computed values and passed to Plot; charts are redrawn when they change.
 */

export interface Palette {
    background: string;
    foreground: string;
    muted: string;
    border: string;
    blue: string;
    red: string;
    yellow: string;
    orange: string;
    green: string;
    purple: string;
    /** Colours for models, in the order of `modelOrder`. */
    series: string[];
}

const FALLBACK: Omit<Palette, 'series'> = {
    background: '#ffffff',
    foreground: '#1f2328',
    muted: '#59636e',
    border: '#d0d7de',
    blue: '#1a85ff',
    red: '#e51400',
    yellow: '#bf8803',
    orange: '#d18616',
    green: '#388a34',
    purple: '#652d90',
};

export function readPalette(root: Element): Palette {
    const style = getComputedStyle(root);
    const read = (name: keyof typeof FALLBACK) => style.getPropertyValue(`--tg-${name}`).trim() || FALLBACK[name];
    const p = {
        background: read('background'),
        foreground: read('foreground'),
        muted: read('muted'),
        border: read('border'),
        blue: read('blue'),
        red: read('red'),
        yellow: read('yellow'),
        orange: read('orange'),
        green: read('green'),
        purple: read('purple'),
    };
    return { ...p, series: [p.blue, p.orange, p.purple, p.green, p.red, p.yellow] };
}

/** A key that changes when any colour does. */
export function paletteKey(p: Palette): string {
    return JSON.stringify(p);
}
