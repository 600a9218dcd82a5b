/**
 * The virtualized message list. Only rows intersecting the viewport (plus overscan) are in the
 * DOM, between two spacers sized from measured heights (estimated for rows never seen). A row's
 * element is rebuilt only when its MessageView changed, so a token touches one row, once per
 * frame. Scroll stays pinned to the bottom while streaming unless the user scrolled up; then the
 * first visible row is kept where it was while heights above it settle.
 *
 * Per frame the work is O(rows on screen + log n), not O(thread) (issue 20: a 300-turn run's
 * 300 tool-call cards stream without the frame cost growing): the geometry (model/virtual.ts
 * ListGeometry) takes appended rows and measured heights one at a time, and is rebuilt only when
 * the model replaced its rows' shape (a removal, a snapshot).
 */
import type { MessageView, ThreadView } from "../model/types.js";
import type { Seq } from "../model/seq.js";
import { ListGeometry } from "../model/virtual.js";
import { h, icon } from "./dom.js";
import { createRow, fitRow, patchRow } from "./messageItem.js";
import { newCallHeights } from "./callWindow.js";
import type { RowContext } from "./messageItem.js";

const OVERSCAN_PX = 600;
const PIN_SLACK_PX = 32;

interface Rendered {
  el: HTMLElement;
  msg: MessageView;
}

export class MessageList {
  readonly root: HTMLElement;
  private readonly top = h("div", { class: "vlist-pad", attrs: { "aria-hidden": "true" } });
  private readonly bottom = h("div", { class: "vlist-pad", attrs: { "aria-hidden": "true" } });
  private readonly items = h("div", { class: "vlist-items" });
  private readonly empty = h("div", { class: "messages-empty", testid: "messages-empty" });
  private readonly jump: HTMLButtonElement;
  private readonly geometry = new ListGeometry(72);
  private readonly rendered = new Map<string, Rendered>();
  private readonly resize: ResizeObserver;
  private messages: Seq<MessageView> | null = null;
  private pinned = true;
  private lastTop = 0;
  private ctx: RowContext = { runEnded: true, openCalls: new Set(), foldedTasks: new Set(), callHeights: newCallHeights() };
  private threadId: string | null = null;

  constructor(private readonly schedule: () => void) {
    this.root = h("div", {
      id: "messages",
      testid: "messages",
      class: "messages",
      // A chat transcript; aria-busy while a run streams so screen readers wait for whole messages.
      attrs: { role: "log", "aria-label": "Messages", tabindex: "0" },
    }, this.top, this.items, this.bottom, this.empty);
    this.jump = h("button", {
      class: "jump-latest",
      testid: "jump-latest",
      attrs: { type: "button", "aria-label": "Scroll to latest", title: "Scroll to latest", hidden: true },
      on: { click: () => this.scrollToBottom() },
    }, icon("arrow-down"));
    this.root.addEventListener("scroll", () => {
      // Unpin only when the view moved up (the user scrolled); reaching the bottom re-pins. A
      // shrinking viewport or growing content leaves scrollTop alone and must not unpin.
      const top = this.root.scrollTop;
      const gap = this.root.scrollHeight - top - this.root.clientHeight;
      if (gap <= PIN_SLACK_PX) this.pinned = true;
      else if (top < this.lastTop - 1) this.pinned = false;
      this.lastTop = top;
      // Only when there is more below (issue 30 item 5): nothing to jump to when all of it fits.
      this.jump.hidden = this.pinned || gap <= PIN_SLACK_PX;
      this.schedule();
    }, { passive: true });
    // The viewport itself resizes (side lists appear, the panel is resized): stay at the bottom.
    new ResizeObserver(() => this.schedule()).observe(this.root);
    this.resize = new ResizeObserver((entries) => {
      let changed = false;
      for (const e of entries) {
        const key = (e.target as HTMLElement).dataset.key;
        if (key && this.rendered.has(key)) changed = this.geometry.setHeight(key, (e.target as HTMLElement).offsetHeight) || changed;
      }
      if (changed) this.schedule();
    });
  }

  /** The jump button lives outside the scroller so it stays put. */
  get jumpButton(): HTMLButtonElement {
    return this.jump;
  }

  scrollToBottom(): void {
    this.pinned = true;
    this.jump.hidden = true;
    this.schedule();
  }

  update(thread: ThreadView | null, runActive: boolean, emptyText: string): void {
    const threadId = thread?.threadId ?? null;
    if (threadId !== this.threadId) {
      // Another thread: nothing measured or rendered carries over.
      this.threadId = threadId;
      for (const r of this.rendered.values()) this.resize.unobserve(r.el);
      this.rendered.clear();
      this.items.replaceChildren();
      this.geometry.clear();
      this.messages = null;
      this.ctx = { runEnded: !runActive, openCalls: new Set(), foldedTasks: new Set(), callHeights: newCallHeights() };
      this.pinned = true;
    }
    const messages = thread?.messages ?? null;
    if (messages !== this.messages) {
      this.messages = messages;
      if (messages && thread) this.geometry.sync(messages.length, (i) => messages.at(i)!.key, thread.rowsShape);
      else this.geometry.clear();
    }
    if (this.ctx.runEnded === runActive) {
      // Pending tool calls read differently once the run is over: refresh the rows on screen.
      this.ctx = { ...this.ctx, runEnded: !runActive };
      for (const r of this.rendered.values()) patchRow(r.el, undefined, r.msg, this.ctx);
    }
    this.root.setAttribute("aria-busy", String(runActive));
    const count = messages?.length ?? 0;
    this.empty.hidden = count > 0;
    this.empty.textContent = emptyText;
    this.layout();
  }

  /** Render the window, measure it, and repeat while measurements move it (at most 3 passes). */
  private layout(): void {
    const viewport = this.root.clientHeight || 600;
    const g = this.geometry;
    // The row at the top edge and how far into it we are: restored after heights change.
    const anchorIndex = g.rowAt(this.root.scrollTop);
    const anchorKey = g.keyAt(anchorIndex);
    const anchorDelta = this.root.scrollTop - g.offset(anchorIndex);

    for (let pass = 0; pass < 3; pass++) {
      const scrollTop = this.pinned ? Math.max(0, g.total - viewport) : this.root.scrollTop;
      const w = g.window(scrollTop, viewport, OVERSCAN_PX);
      this.reconcile(w.start, w.end);
      this.top.style.height = `${w.padTop}px`;
      this.bottom.style.height = `${w.padBottom}px`;
      let moved = false;
      // The band rows must cover, in list coordinates: a row with many calls shows only those cards.
      const bandTop = scrollTop - OVERSCAN_PX;
      const bandBottom = scrollTop + viewport + OVERSCAN_PX;
      for (let i = w.start; i < w.end; i++) {
        const key = g.keyAt(i)!;
        const r = this.rendered.get(key);
        if (!r) continue;
        const rowTop = g.offset(i);
        if (fitRow(r.el, r.msg, this.ctx, bandTop - rowTop, bandBottom - rowTop)) moved = true;
        if (g.setHeight(key, r.el.offsetHeight)) moved = true;
      }
      if (!moved) break;
    }
    if (this.pinned) {
      this.root.scrollTop = this.root.scrollHeight;
      this.lastTop = this.root.scrollTop;
    } else if (anchorKey !== undefined) {
      const i = g.indexOf(anchorKey);
      if (i >= 0) {
        const want = g.offset(i) + anchorDelta;
        if (Math.abs(this.root.scrollTop - want) > 1) this.root.scrollTop = want;
      }
    }
    if (this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight <= PIN_SLACK_PX) this.jump.hidden = true;
  }

  /** Makes the DOM hold exactly rows [start, end), in order, each up to date. */
  private reconcile(start: number, end: number): void {
    const want = new Set<string>();
    const messages = this.messages;
    if (!messages) return;
    for (let i = start; i < end; i++) want.add(messages.at(i)!.key);
    for (const [key, r] of this.rendered) {
      if (!want.has(key)) {
        this.resize.unobserve(r.el);
        r.el.remove();
        this.rendered.delete(key);
      }
    }
    let cursor: ChildNode | null = this.items.firstChild;
    for (let i = start; i < end; i++) {
      const msg = messages.at(i)!;
      let r = this.rendered.get(msg.key);
      if (!r) {
        r = { el: createRow(msg, this.ctx), msg };
        this.rendered.set(msg.key, r);
        this.resize.observe(r.el);
      } else if (r.msg !== msg) {
        patchRow(r.el, r.msg, msg, this.ctx);
        r.msg = msg;
      }
      if (r.el !== cursor) this.items.insertBefore(r.el, cursor);
      else cursor = cursor.nextSibling;
    }
  }
}
