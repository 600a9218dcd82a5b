/**
 * A tiny element builder. Text always goes in as text nodes (never innerHTML); the only HTML the
 * panel inserts is sanitized markdown (markdown.ts). No inline `style` attributes either: the CSP
 * has no 'unsafe-inline' for styles, so geometry is set through CSSOM (`el.style.x = …`).
 */
export type Child = Node | string | null | undefined | false;

export interface Props {
  id?: string;
  class?: string;
  testid?: string;
  text?: string;
  attrs?: Record<string, string | boolean | undefined>;
  on?: { [K in keyof HTMLElementEventMap]?: (ev: HTMLElementEventMap[K]) => void };
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props, ...children: Child[]): HTMLElementTagNameMap[K];
export function h(tag: string, props?: Props, ...children: Child[]): HTMLElement;
export function h(tag: string, props: Props = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  if (props.id) el.id = props.id;
  if (props.class) el.className = props.class;
  if (props.testid) el.dataset.testid = props.testid;
  if (props.text !== undefined) el.textContent = props.text;
  for (const [k, v] of Object.entries(props.attrs ?? {})) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? "" : v);
  }
  for (const [k, fn] of Object.entries(props.on ?? {})) el.addEventListener(k, fn as EventListener);
  append(el, children);
  return el;
}

export function append(el: HTMLElement, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
}

/** A codicon glyph (dist/codicon.css is linked by the host page). Decorative: hidden from AT. */
export function icon(name: string, extra = ""): HTMLSpanElement {
  return h("span", { class: `codicon codicon-${name}${extra ? ` ${extra}` : ""}`, attrs: { "aria-hidden": "true" } });
}

/** A small native icon button: reliable accessible name (aria-label) and keyboard behaviour. */
export function iconButton(name: string, label: string, onClick: (ev: MouseEvent) => void, testid?: string): HTMLButtonElement {
  return h("button", { class: "icon-button", ...(testid ? { testid } : {}), attrs: { type: "button", "aria-label": label, title: label }, on: { click: onClick } }, icon(name));
}

/** Replaces an element's children only when `key` changed since the last call (cheap memo for sections). */
export function setText(el: HTMLElement, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

export function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1) || trimmed;
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
