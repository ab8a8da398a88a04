/**
 * The point symbols of the charts: Plot draws them from these definitions, and the legends draw
 * the same shapes as SVG paths (`symbolPath`), so a swatch always matches its marks.
 */

export type SymbolName = 'circle' | 'diamond' | 'triangle' | 'square';

interface PathContext {
    moveTo(x: number, y: number): void;
    lineTo(x: number, y: number): void;
    arc(x: number, y: number, r: number, a0: number, a1: number): void;
    closePath(): void;
}

type Draw = (context: PathContext, size: number) => void;

const DRAW: Record<SymbolName, Draw> = {
    circle(c, size) {
        const r = Math.sqrt(size / Math.PI);
        c.moveTo(r, 0);
        c.arc(0, 0, r, 0, 2 * Math.PI);
        c.closePath();
    },
    diamond(c, size) {
        const r = Math.sqrt(size / 2) * 1.15;
        c.moveTo(0, -r);
        c.lineTo(r * 0.8, 0);
        c.lineTo(0, r);
        c.lineTo(-r * 0.8, 0);
        c.closePath();
    },
    triangle(c, size) {
        // pointing down: the conversation got smaller
        const a = Math.sqrt(size * 4 / Math.sqrt(3)) * 1.1;
        const hgt = a * Math.sqrt(3) / 2;
        c.moveTo(0, hgt * 2 / 3);
        c.lineTo(a / 2, -hgt / 3);
        c.lineTo(-a / 2, -hgt / 3);
        c.closePath();
    },
    square(c, size) {
        const r = Math.sqrt(size) / 2 * 1.05;
        c.moveTo(-r, -r);
        c.lineTo(r, -r);
        c.lineTo(r, r);
        c.lineTo(-r, r);
        c.closePath();
    },
};

/** The symbols as Plot's `symbol` scale takes them (objects with a `draw` method). */
export const SYMBOLS = Object.fromEntries(Object.entries(DRAW).map(([name, draw]) => [name, { draw }])) as Record<SymbolName, { draw: Draw }>;

/** The SVG path data of a symbol of `size` (square pixels) around 0,0. */
export function symbolPath(name: SymbolName, size: number): string {
    const parts: string[] = [];
    const f = (n: number) => String(Math.round(n * 100) / 100);
    DRAW[name]({
        moveTo: (x, y) => parts.push(`M${f(x)},${f(y)}`),
        lineTo: (x, y) => parts.push(`L${f(x)},${f(y)}`),
        arc: (x, y, r) => parts.push(`M${f(x + r)},${f(y)}A${f(r)},${f(r)} 0 1,1 ${f(x - r)},${f(y)}A${f(r)},${f(r)} 0 1,1 ${f(x + r)},${f(y)}`),
        closePath: () => parts.push('Z'),
    }, size);
    return parts.join('');
}
