/**
 * Building DOM nodes without markup (data strings may contain anything: they only ever become
 * text nodes and attribute values), and making Plot's output safe under the page's strict CSP.
 */

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined>;

function setAttrs(el: Element, attrs: Attrs): void {
    for (const [name, value] of Object.entries(attrs)) {
        if (value === null || value === undefined || value === false) {
            continue;
        }
        if (name === 'style') {
            throw new Error('inline style attributes are blocked by the CSP: use a class');
        }
        el.setAttribute(name, value === true ? '' : String(value));
    }
}

function append(el: Element, children: Child[]): void {
    for (const child of children) {
        if (child === null || child === undefined || child === false) {
            continue;
        }
        el.append(child);
    }
}

/** An HTML element with attributes and children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
    const el = document.createElement(tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes and children. */
export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): SVGElementTagNameMap[K] {
    const el = document.createElementNS(SVG_NS, tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
}

/** A `<style>` element the CSP lets in: it carries the page's nonce. */
export function styleElement(css: string, nonce: string): HTMLStyleElement {
    const el = document.createElement('style');
    stampNonce(el, nonce);
    el.textContent = css;
    return el;
}

function stampNonce(el: HTMLElement | SVGElement, nonce: string): void {
    if (nonce) {
        el.setAttribute('nonce', nonce);
        el.nonce = nonce;
    }
}

/**
 * Make a node built outside the document (Plot's output) pass the CSP before it is inserted:
 * its `<style>` elements get the nonce (the CSP checks them on insertion), and any inline `style`
 * attribute becomes CSSOM (the CSP blocks style attributes parsed or set with setAttribute, not
 * declarations set through `element.style`). Plot 0.6 sets its inline styles through CSSOM already;
 * the attribute pass is a guard in case a version does not.
 */
export function adopt<T extends Element>(node: T, nonce: string): T {
    for (const el of [node, ...node.querySelectorAll('*')]) {
        if (el instanceof HTMLStyleElement || el instanceof SVGStyleElement) {
            stampNonce(el, nonce);
        }
        const inline = el.getAttribute('style');
        if (inline !== null && (el instanceof HTMLElement || el instanceof SVGElement)) {
            el.removeAttribute('style');
            el.style.cssText = inline;
        }
    }
    return node;
}

/** Put `next` in `parent` in this order, moving or removing only what differs (focus, scroll
 * and unchanged nodes stay as they are). */
export function reconcile(parent: Element, next: readonly Element[]): void {
    for (let i = 0; i < next.length; i++) {
        const want = next[i];
        const have = parent.children.item(i);
        if (have !== want) {
            parent.insertBefore(want, have);
        }
    }
    while (parent.children.length > next.length) {
        parent.lastElementChild?.remove();
    }
}
