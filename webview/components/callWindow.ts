/**
 * Tool-call cards virtualised inside their row (issue 20). The message list already renders only
 * the rows near the viewport; a row whose message made many calls at once (a model turn with 150
 * parallel reads) would still put all of its cards in the DOM. Such a row renders only the cards
 * that meet the visible band the list gives it (the viewport plus overscan, in the row's own
 * coordinates), between two spacers sized from the cards' measured heights (the running average
 * for cards never seen), exactly as the list does with rows. A row with few calls, or with
 * subagent cards (those sit side by side, not one per line), renders all of them.
 */
import type { MessageView } from "../model/types.js";
import { HeightCache } from "../model/virtual.js";
import { h } from "./dom.js";

/** Rows with more tool calls than this window them. */
export const WINDOWED_CALLS = 24;
/** `.msg-calls { gap }` in styles.css: the space between two cards. */
const GAP_PX = 4;
/** A folded card's height before it was measured. */
const CARD_PX = 30;
/** The band a row gets before the list placed it: its first screenful. */
const FIRST_BAND = { top: 0, bottom: 1200 };

export function windowed(m: MessageView): boolean {
  return m.toolCalls.length > WINDOWED_CALLS && !m.toolCalls.some((c) => c.name === "task");
}

/** Card heights by call id, per thread (the list keeps one in its RowContext). */
export function newCallHeights(): HeightCache {
  return new HeightCache(CARD_PX);
}

export interface CallRange {
  from: number;
  to: number;
  /** Spacer heights above card `from` and below card `to - 1`. */
  padTop: number;
  padBottom: number;
}

interface Pads {
  top: HTMLElement;
  bottom: HTMLElement;
}

const bands = new WeakMap<HTMLElement, { top: number; bottom: number }>();
const pads = new WeakMap<HTMLElement, Pads>();

export function isPad(el: Element): boolean {
  return el.classList.contains("calls-pad");
}

export function padsOf(host: HTMLElement): Pads {
  let p = pads.get(host);
  if (!p) {
    p = { top: h("div", { class: "calls-pad", attrs: { "aria-hidden": "true" } }), bottom: h("div", { class: "calls-pad", attrs: { "aria-hidden": "true" } }) };
    pads.set(host, p);
  }
  return p;
}

const callKey = (m: MessageView, i: number): string => m.toolCalls[i]!.id || `#${i}`;

/** The cards of `m` that meet the host's band: one walk over the row's calls (never the thread's). */
export function callRange(host: HTMLElement, m: MessageView, heights: HeightCache): CallRange {
  const band = bands.get(host) ?? FIRST_BAND;
  const n = m.toolCalls.length;
  let y = 0;
  let from = -1;
  let to = n;
  let topOfFrom = 0;
  let topOfTo = 0;
  for (let k = 0; k < n; k++) {
    const slot = heights.get(callKey(m, k)) + GAP_PX;
    if (from < 0 && y + slot > band.top) {
      from = k;
      topOfFrom = y;
    }
    if (from >= 0 && to === n && y >= band.bottom) {
      to = k;
      topOfTo = y;
    }
    y += slot;
  }
  if (from < 0) {
    // The band is below every card: keep the last one, so the row keeps its real height.
    from = Math.max(0, n - 1);
    topOfFrom = y - (heights.get(callKey(m, from)) + GAP_PX);
  }
  if (to === n) topOfTo = y;
  // Card k starts at the sum of the slots before it; a spacer is followed by one gap itself.
  return { from, to, padTop: from > 0 ? topOfFrom - GAP_PX : 0, padBottom: to < n ? y - topOfTo - GAP_PX : 0 };
}

/**
 * The list placed the row: `top`/`bottom` is the band to cover, in the row's coordinates. Returns
 * true when the cards to show changed (the caller re-patches the calls).
 */
export function setBand(host: HTMLElement, row: HTMLElement, m: MessageView, heights: HeightCache, top: number, bottom: number): boolean {
  const offset = host.offsetTop - row.offsetTop;
  const before = callRange(host, m, heights);
  bands.set(host, { top: top - offset, bottom: bottom - offset });
  const after = callRange(host, m, heights);
  return before.from !== after.from || before.to !== after.to || before.padTop !== after.padTop || before.padBottom !== after.padBottom;
}

/** Records the rendered cards' heights; true when one changed (the spacers move). */
export function measureCalls(host: HTMLElement, heights: HeightCache): boolean {
  let changed = false;
  for (const el of Array.from(host.children) as HTMLElement[]) {
    const id = el.dataset.toolCallId;
    if (id && !isPad(el)) changed = heights.set(id, el.offsetHeight) || changed;
  }
  return changed;
}
