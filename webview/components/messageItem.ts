/**
 * One row of the message list. A row is rebuilt only when its MessageView changed (identity), and
 * then patched in parts: the markdown body is re-rendered only when the text changed, each tool
 * call only when its signature changed, so a streaming message costs one markdown parse per frame
 * and a focused or opened tool call elsewhere in the row is left alone.
 */
import type { MessageView } from "../model/types.js";
import { h, icon } from "./dom.js";
import { setMarkdown } from "./markdown.js";
import { callSignature, renderToolCall } from "./toolCall.js";
import { patchTaskCard, renderTaskCard } from "./taskCard.js";
import { callRange, isPad, measureCalls, padsOf, setBand, windowed } from "./callWindow.js";
import type { HeightCache } from "../model/virtual.js";

export interface RowContext {
  /** True when no run is active: pending calls will never get a result. */
  runEnded: boolean;
  /** Open tool-call ids, kept across re-renders and virtual-list recycling. */
  openCalls: Set<string>;
  /** Subagent cards whose step list the user folded (taskCard.ts). */
  foldedTasks: Set<string>;
  /** Measured tool-call card heights, for rows that window their calls (callWindow.ts). */
  callHeights: HeightCache;
}

const callSigs = new WeakMap<HTMLElement, string>();

export function createRow(m: MessageView, ctx: RowContext): HTMLElement {
  const row = h("article", { class: `msg msg-${m.role}`, testid: "message", attrs: { "data-role": m.role, "data-key": m.key } });
  fillRow(row, m, ctx);
  return row;
}

/** Brings `row` up to date with `m` (same key), touching only the parts that changed. */
export function patchRow(row: HTMLElement, prev: MessageView | undefined, m: MessageView, ctx: RowContext): void {
  if (!prev || prev.role !== m.role || m.role === "human" || m.role === "error" || m.role === "tool") {
    row.replaceChildren();
    fillRow(row, m, ctx);
    return;
  }
  row.toggleAttribute("data-streaming", m.streaming);
  setStopReason(row, m);
  const body = row.querySelector<HTMLElement>(":scope > .msg-body");
  if (body) {
    setMarkdown(body, m.text, m.streaming);
    body.hidden = m.text === "";
  }
  const calls = row.querySelector<HTMLElement>(":scope > .msg-calls");
  if (calls) patchCalls(calls, m, ctx);
}

function fillRow(row: HTMLElement, m: MessageView, ctx: RowContext): void {
  row.toggleAttribute("data-streaming", m.streaming);
  setStopReason(row, m);
  switch (m.role) {
    case "human": {
      row.append(h("div", { class: "msg-author", text: "You" }), h("div", { class: "msg-text", text: m.text }));
      if (m.files.length > 0) {
        row.append(h("ul", { class: "msg-files", attrs: { "aria-label": "Attached files" } },
          ...m.files.map((f) => h("li", {}, icon("file"), h("span", { text: f })))));
      }
      return;
    }
    case "error":
      row.append(h("div", { class: "msg-error", testid: "run-error" }, icon("error"), h("span", { text: m.text })));
      return;
    case "tool":
      // A result whose call is not in the thread (e.g. trimmed history): show it on its own.
      row.append(h("details", { class: "tool-call tool-success", testid: "tool-call", attrs: { "data-tool-name": m.toolName ?? "tool", "data-status": "success" } },
        h("summary", {}, icon("tools"), h("span", { class: "tool-name", text: m.toolName ?? "tool" }), h("span", { class: "tool-hint", text: "result" })),
        h("div", { class: "tool-section", testid: "tool-result" }, h("pre", { text: m.text })),
      ));
      return;
    case "ai": {
      const body = h("div", { class: "msg-body markdown" });
      setMarkdown(body, m.text, m.streaming);
      body.hidden = m.text === "";
      const calls = h("div", { class: "msg-calls" });
      patchCalls(calls, m, ctx);
      row.append(body, calls);
      return;
    }
  }
}

/** `data-stop-reason` on the message the harness wrote for how the run stopped (e.g. turn_capped). */
function setStopReason(row: HTMLElement, m: MessageView): void {
  if (m.stopReason) row.dataset.stopReason = m.stopReason;
  else delete row.dataset.stopReason;
}

/**
 * The list placed row `row` (message `m`) and asks it to cover `top`..`bottom` (row coordinates):
 * a row that windows its calls shows the cards in that band. True when its height may have
 * changed (cards swapped in, or measured anew), so the list measures it again.
 */
export function fitRow(row: HTMLElement, m: MessageView, ctx: RowContext, top: number, bottom: number): boolean {
  if (m.role !== "ai" || !windowed(m)) return false;
  const host = row.querySelector<HTMLElement>(":scope > .msg-calls");
  if (!host) return false;
  const moved = setBand(host, row, m, ctx.callHeights, top, bottom);
  if (moved) patchCalls(host, m, ctx);
  const measured = measureCalls(host, ctx.callHeights);
  if (measured) patchCalls(host, m, ctx);
  return moved || measured;
}

function patchCalls(host: HTMLElement, m: MessageView, ctx: RowContext): void {
  const existing = new Map<string, HTMLElement>();
  for (const el of Array.from(host.children) as HTMLElement[]) if (!isPad(el)) existing.set(el.dataset.toolCallId ?? "", el);
  const range = windowed(m) ? callRange(host, m, ctx.callHeights) : { from: 0, to: m.toolCalls.length, padTop: 0, padBottom: 0 };
  const next: HTMLElement[] = m.toolCalls.slice(range.from, range.to).map((c, k) => {
    const i = range.from + k;
    const id = c.id || `#${i}`;
    if (c.name === "task" && c.id) {
      // A subagent card patches itself in place (its task changes without its call changing).
      const old = existing.get(id);
      const card = old?.dataset.testid === "task-card" ? old : renderTaskCard(c, { ...ctx, runEnded: ctx.runEnded && !m.streaming });
      patchTaskCard(card, c, { ...ctx, runEnded: ctx.runEnded && !m.streaming });
      return card;
    }
    const sig = callSignature(c, m.streaming) + (ctx.runEnded ? "|ended" : "");
    const old = existing.get(id);
    if (old && callSigs.get(old) === sig) return old;
    const el = renderToolCall({ ...c, id }, ctx.runEnded && !m.streaming, ctx.openCalls);
    callSigs.set(el, sig);
    return el;
  });
  if (range.padTop > 0 || range.padBottom > 0) {
    const p = padsOf(host);
    p.top.style.height = `${range.padTop}px`;
    p.bottom.style.height = `${range.padBottom}px`;
    if (range.padTop > 0) next.unshift(p.top);
    if (range.padBottom > 0) next.push(p.bottom);
  }
  const same = next.length === host.children.length && next.every((el, i) => host.children[i] === el);
  if (!same) host.replaceChildren(...next);
}
