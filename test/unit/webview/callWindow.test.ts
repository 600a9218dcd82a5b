// Tool-call cards windowed inside a row with many calls (webview/components/callWindow.ts): the
// cards that meet the band the list gives the row, and spacers that keep every card where it
// would be if all were rendered. The band walk is pure; elements only key the band (no DOM here).
import { test } from "node:test";
import assert from "node:assert/strict";
import { WINDOWED_CALLS, callRange, newCallHeights, setBand, windowed } from "../../../webview/components/callWindow.js";
import type { MessageView } from "../../../webview/model/types.js";

const GAP = 4;
const row = (n: number, name = "read_file"): MessageView => ({
  key: "a1", role: "ai", text: "", streaming: false, files: [],
  toolCalls: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name, args: {}, argsText: "", result: undefined })),
});
/** A stand-in for the row and its calls host: only their offsets are read. */
const el = (offsetTop: number) => ({ offsetTop }) as HTMLElement;

test("only rows with many calls, and without subagent cards, window them", () => {
  assert.equal(windowed(row(WINDOWED_CALLS)), false);
  assert.equal(windowed(row(WINDOWED_CALLS + 1)), true);
  assert.equal(windowed(row(100, "task")), false, "subagent cards sit side by side: not one per line");
});

test("a band in the middle of 300 cards: the cards that meet it, spacers that add up to the whole", () => {
  const m = row(300);
  const heights = newCallHeights();
  for (let i = 0; i < 300; i++) heights.set(`c${i}`, i % 2 ? 30 : 46); // slots of 34 and 50 px
  const slot = (i: number) => (i % 2 ? 30 : 46) + GAP;
  const top = (k: number) => Array.from({ length: k }, (_, i) => slot(i)).reduce((a, b) => a + b, 0);
  const host = el(40);
  // The calls host sits 40px into the row (the message text above the cards).
  assert.equal(setBand(host, el(0), m, heights, 4000 + 40, 5200 + 40), true);
  const r = callRange(host, m, heights);
  assert.ok(top(r.from) <= 4000 && top(r.from + 1) > 4000, `the first card shown (${r.from}) meets the band's top`);
  assert.ok(top(r.to) >= 5200 && top(r.to - 1) < 5200, `the last card shown (${r.to - 1}) meets the band's bottom`);
  assert.ok(r.to - r.from <= 1200 / 34 + 2, `${r.to - r.from} cards for a 1,200px band`);
  assert.equal(r.padTop + GAP, top(r.from), "the top spacer (and its gap) stands for the cards above");
  // spacer, gap, the cards shown (gaps between them), gap, spacer: the height of all 300 cards.
  assert.equal(r.padTop + GAP + (top(r.to) - top(r.from) - GAP) + GAP + r.padBottom, top(300) - GAP, "spacers and cards add up to every card");
  assert.equal(setBand(host, el(0), m, heights, 4000 + 40, 5200 + 40), false, "the same band: nothing to redo");
});

test("the ends: a band at the top shows the first cards, one past the end keeps the last card", () => {
  const m = row(100);
  const heights = newCallHeights(); // never measured: 30px each
  const host = el(0);
  setBand(host, el(0), m, heights, -600, 600);
  const first = callRange(host, m, heights);
  assert.deepEqual([first.from, first.padTop], [0, 0]);
  assert.equal(first.to, Math.ceil(600 / 34));
  setBand(host, el(0), m, heights, 10_000, 11_000);
  const past = callRange(host, m, heights);
  assert.deepEqual([past.from, past.to, past.padBottom], [99, 100, 0]);
  assert.equal(past.padTop, 99 * 34 - GAP);
  // Before the list placed it, a row shows its first screenful.
  const fresh = callRange(el(0), m, heights);
  assert.equal(fresh.from, 0);
  assert.equal(fresh.to, Math.ceil(1200 / 34));
});
