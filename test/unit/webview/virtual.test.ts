import { test } from "node:test";
import assert from "node:assert/strict";
import { HeightCache, ListGeometry, buildOffsets, computeWindow, rowAt } from "../../../webview/model/virtual.js";

// Heights vary like a chat: short human rows, long AI rows with code.
const heightOf = (i: number): number => (i % 3 === 0 ? 40 : i % 3 === 1 ? 120 : 300);

for (const n of [1_000, 10_000]) {
  test(`${n} rows: the window covers the viewport plus overscan and nothing more`, () => {
    const offsets = buildOffsets(n, heightOf);
    const total = offsets[n]!;
    for (const scrollTop of [0, total / 3, total / 2, total - 600, total]) {
      const w = computeWindow(offsets, scrollTop, 600, 400);
      assert.ok(w.start >= 0 && w.end <= n && w.start < w.end);
      assert.equal(w.padTop, offsets[w.start]);
      assert.equal(w.padTop + (offsets[w.end]! - offsets[w.start]!) + w.padBottom, total);
      // Every pixel of the overscanned viewport is inside a rendered row.
      const top = Math.max(0, scrollTop - 400);
      const bottom = Math.min(total, scrollTop + 600 + 400);
      assert.ok(offsets[w.start]! <= top, "first row starts above the window");
      assert.ok(offsets[w.end]! >= bottom, "last row ends below the window");
      // …and only a handful of rows are rendered (1,400px / 40px at most, plus the edges).
      assert.ok(w.end - w.start <= 1400 / 40 + 2, `rendered ${w.end - w.start}`);
    }
    // How long this takes is measured in test/bench/webviewModel.bench.ts, not asserted here.
  });
}

test("pinned to the bottom of 10,000 rows renders the last rows", () => {
  const offsets = buildOffsets(10_000, heightOf);
  const total = offsets[10_000]!;
  const w = computeWindow(offsets, total - 500, 500, 200);
  assert.equal(w.end, 10_000);
  assert.equal(w.padBottom, 0);
});

test("empty list and a list shorter than the viewport", () => {
  assert.deepEqual(computeWindow(buildOffsets(0, heightOf), 0, 500, 100), { start: 0, end: 0, padTop: 0, padBottom: 0, total: 0 });
  const w = computeWindow(buildOffsets(3, () => 50), 0, 500, 100);
  assert.deepEqual([w.start, w.end, w.padTop, w.padBottom], [0, 3, 0, 0]);
});

test("rowAt finds the row containing y, clamped", () => {
  const offsets = buildOffsets(4, () => 10);
  assert.deepEqual([-5, 0, 9.9, 10, 35, 999].map((y) => rowAt(offsets, y)), [0, 0, 0, 1, 3, 3]);
});

test("HeightCache estimates unmeasured rows by the average of measured ones", () => {
  const c = new HeightCache(80);
  assert.equal(c.get("a"), 80);
  assert.equal(c.set("a", 40), true);
  assert.equal(c.set("a", 40), false);
  c.set("b", 120);
  assert.equal(c.get("zzz"), 80);
  c.set("a", 100);
  assert.equal(c.get("zzz"), 110);
});

// ListGeometry (the list's incremental geometry, issue 20) against the one-pass functions above.
function sameAsOffsets(g: ListGeometry, heights: ReadonlyArray<number | undefined>, est: number, what: string): void {
  const offsets = buildOffsets(heights.length, (i) => heights[i] ?? est);
  assert.equal(g.count, heights.length, `${what}: count`);
  for (const i of [0, 1, heights.length >> 1, heights.length - 1, heights.length]) {
    if (i >= 0 && i <= heights.length) assert.ok(Math.abs(g.offset(i) - offsets[i]!) < 1e-6, `${what}: offset(${i}) ${g.offset(i)} vs ${offsets[i]}`);
  }
  const total = offsets[heights.length]!;
  for (const y of [-1, 0, 39.5, 40, total / 3, total / 2, total - 1, total, total + 50]) assert.equal(g.rowAt(y), rowAt(offsets, y), `${what}: rowAt(${y})`);
  for (const scrollTop of [0, total / 2, Math.max(0, total - 600)]) {
    const a = g.window(scrollTop, 600, 400);
    const b = computeWindow(offsets, scrollTop, 600, 400);
    assert.deepEqual([a.start, a.end], [b.start, b.end], `${what}: window at ${scrollTop}`);
    assert.ok(Math.abs(a.padTop - b.padTop) < 1e-6 && Math.abs(a.padBottom - b.padBottom) < 1e-6, `${what}: pads`);
  }
}

test("ListGeometry: appended rows and measured heights give the offsets, rows and windows of buildOffsets", () => {
  const g = new ListGeometry(72);
  const shape = {};
  const keyOf = (i: number) => `k${i}`;
  const heights: Array<number | undefined> = [];
  // Rows arrive a few at a time (a 300-turn run: a message, then its call's result, ...).
  for (let n = 1; n <= 700; n += 1 + (n % 3)) {
    g.sync(n, keyOf, shape);
    while (heights.length < n) heights.push(undefined);
    // The list measures the rows it rendered: the last few.
    for (let i = Math.max(0, n - 4); i < n; i++) {
      const h = heightOf(i);
      g.setHeight(`k${i}`, h);
      heights[i] = h;
    }
  }
  const measured = heights.filter((h): h is number => h !== undefined);
  const est = measured.reduce((a, b) => a + b, 0) / measured.length;
  sameAsOffsets(g, heights, est, "after appends");
  assert.equal(g.indexOf("k10"), 10);
  assert.equal(g.keyAt(10), "k10");
  assert.equal(g.setHeight("k10", heights[10]!), false, "an unchanged height is no change");
  // A new shape token (a row removed) rebuilds from the rows as they are now.
  g.sync(3, (i) => ["k0", "k2", "k5"][i]!, {});
  sameAsOffsets(g, [heights[0], heights[2], heights[5]], est, "after a rebuild");
  g.clear();
  assert.deepEqual([g.count, g.total, g.rowAt(10)], [0, 0, 0]);
  assert.deepEqual(g.window(0, 600, 400), { start: 0, end: 0, padTop: 0, padBottom: 0, total: 0 });
});

test("ListGeometry: rows never measured take the running average, as HeightCache", () => {
  const g = new ListGeometry(80);
  g.sync(4, (i) => `r${i}`, {});
  assert.equal(g.total, 320, "the fallback before any measurement");
  g.setHeight("r0", 40);
  g.setHeight("r1", 120);
  assert.equal(g.total, 40 + 120 + 2 * 80);
  assert.equal(g.offset(3), 40 + 120 + 80);
});
