// The thread view's persistent structures (webview/model/seq.ts, pmap.ts), against plain arrays
// and Maps under the same random operations: every version, old ones included, reads what its
// array/Map twin holds, at the sizes where the tries grow levels (32, 1,024, 32,768 elements).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Seq } from "../../../webview/model/seq.js";
import { PMap } from "../../../webview/model/pmap.js";

/** A small deterministic PRNG (mulberry32), so a failure replays. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sameSeq<T>(s: Seq<T>, a: readonly T[], what: string): void {
  assert.equal(s.length, a.length, `${what}: length`);
  assert.deepEqual(s.toArray(), a, `${what}: elements`);
  assert.deepEqual([...s], a, `${what}: iteration`);
  for (const i of [0, 1, 31, 32, 33, a.length - 1, -1, -a.length]) assert.equal(s.at(i), a.at(i), `${what}: at(${i})`);
  assert.equal(s.at(a.length), undefined);
}

test("Seq: push and set agree with an array at every size up to past two trie levels, old versions untouched", () => {
  let s = Seq.empty<number>();
  const a: number[] = [];
  const kept: Array<[Seq<number>, number[]]> = [];
  for (let i = 0; i < 33_000; i++) {
    s = s.push(i);
    a.push(i);
    if ([1, 31, 32, 33, 64, 1024, 1025, 1056, 32_768, 32_800, 32_801].includes(a.length)) kept.push([s, a.slice()]);
  }
  sameSeq(s, a, "33,000 pushes");
  const r = rng(7);
  for (let k = 0; k < 2000; k++) {
    const i = Math.floor(r() * a.length);
    s = s.set(i, -k);
    a[i] = -k;
  }
  sameSeq(s, a, "after 2,000 sets");
  for (const [old, twin] of kept) sameSeq(old, twin, `the version of length ${twin.length}`);
  assert.equal(s.set(5, s.at(5)!), s, "setting the same value keeps the version");
  assert.throws(() => s.set(a.length, 1), RangeError);
});

test("Seq.from builds the same vector as pushing one by one, and pushes on from there", () => {
  for (const n of [0, 1, 31, 32, 33, 1023, 1024, 1025, 1056, 1057, 5000, 32_769]) {
    const a = Array.from({ length: n }, (_, i) => i * 3);
    const s = Seq.from(a);
    sameSeq(s, a, `from(${n})`);
    sameSeq(s.push(-1), [...a, -1], `from(${n}).push`);
    if (n > 0) sameSeq(s.set(n - 1, -2), [...a.slice(0, -1), -2], `from(${n}).set(last)`);
  }
});

test("Seq's readers match the array methods they stand for", () => {
  const a = Array.from({ length: 100 }, (_, i) => i);
  const s = Seq.from(a);
  assert.deepEqual(s.map((x, i) => x + i), a.map((x, i) => x + i));
  assert.deepEqual(s.filter((x) => x % 7 === 0), a.filter((x) => x % 7 === 0));
  assert.deepEqual(s.flatMap((x) => (x % 10 ? [] : [x, x])), a.flatMap((x) => (x % 10 ? [] : [x, x])));
  assert.equal(s.findIndex((x) => x === 77), 77);
  assert.equal(s.find((x) => x > 50), 51);
  assert.equal(s.some((x) => x === 99), true);
  assert.equal(s.every((x) => x < 100), true);
  assert.equal(s.every((x) => x < 99), false);
  const seen: number[] = [];
  s.forEach((x, i) => seen.push(x - i));
  assert.ok(seen.every((d) => d === 0) && seen.length === 100);
});

test("PMap: set, overwrite and delete agree with a Map, old versions untouched, hash collisions included", () => {
  const r = rng(11);
  let m = PMap.empty<number>();
  const ref = new Map<string, number>();
  const kept: Array<[PMap<number>, Map<string, number>]> = [];
  for (let k = 0; k < 20_000; k++) {
    const key = `key-${Math.floor(r() * 6000)}`;
    if (r() < 0.2) {
      m = m.delete(key);
      ref.delete(key);
    } else {
      m = m.set(key, k);
      ref.set(key, k);
    }
    if (k % 4000 === 0) kept.push([m, new Map(ref)]);
  }
  const check = (p: PMap<number>, twin: Map<string, number>, what: string) => {
    assert.equal(p.size, twin.size, `${what}: size`);
    for (const [k, v] of twin) assert.equal(p.get(k), v, `${what}: ${k}`);
    assert.deepEqual(new Map(p), twin, `${what}: entries`);
    assert.equal(p.has("absent"), false);
    assert.equal(p.get("absent"), undefined);
  };
  check(m, ref, "after 20,000 operations");
  for (const [old, twin] of kept) check(old, twin, `a version of ${twin.size} keys`);
  assert.equal(m.set("key-1", m.get("key-1")!), m, "setting the same value keeps the version");
  assert.equal(m.delete("absent"), m);
  // Keys that agree in their last 24 characters and their length share a hash (pmap.ts hashOf):
  // both live in one bucket, each readable and removable.
  const tail = "-0f4b3c2e-1234-5678-9abc";
  const [a, b] = [`x${tail}`, `y${tail}`];
  let c = PMap.empty<string>().set(a, "A").set(b, "B");
  assert.deepEqual([c.get(a), c.get(b), c.size], ["A", "B", 2]);
  c = c.delete(a);
  assert.deepEqual([c.get(a), c.get(b), c.size, c.has(b)], [undefined, "B", 1, true]);
  assert.equal(PMap.from([["x", 1], ["y", 2]]).get("y"), 2);
});
