/**
 * The colours the charts draw with. SVG presentation attributes do not resolve `var()`, so the
 * stylesheet's `--tg-*` properties (VS Code's theme variables, or the report's light and dark
 * fallbacks) are read as computed values and passed to Plot; charts are redrawn when they change.
 * A theme's chart colours are made legible against its background, and the models' colours are
 * ours (`colors.ts`), chosen for a light or a dark background.
 */
import { legible, parseColor, seriesColors } from './colors';

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

/** The page's background as drawn (the body's computed colour), else the stylesheet's. */
function pageBackground(style: CSSStyleDeclaration): string {
    const body = getComputedStyle(document.body).backgroundColor;
    const parsed = parseColor(body);
    return parsed !== null && parsed.a === 1 ? body : style.getPropertyValue('--tg-background').trim() || FALLBACK.background;
}

export function readPalette(root: Element): Palette {
    const style = getComputedStyle(root);
    const read = (name: keyof typeof FALLBACK) => style.getPropertyValue(`--tg-${name}`).trim() || FALLBACK[name];
    const background = pageBackground(style);
    const mark = (name: keyof typeof FALLBACK) => legible(read(name), background);
    return {
        background,
        foreground: read('foreground'),
        muted: read('muted'),
        border: read('border'),
        blue: mark('blue'),
        red: mark('red'),
        yellow: mark('yellow'),
        orange: mark('orange'),
        green: mark('green'),
        purple: mark('purple'),
        series: seriesColors(background),
    };
}

/** A key that changes when any colour does. */
export function paletteKey(p: Palette): string {
    return JSON.stringify(p);
}
