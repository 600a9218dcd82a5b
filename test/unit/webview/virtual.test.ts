import { test } from "node:test";
import assert from "node:assert/strict";
import { HeightCache, buildOffsets, computeWindow, rowAt } from "../../../webview/model/virtual.js";

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
