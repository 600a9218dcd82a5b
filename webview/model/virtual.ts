/**
 * Virtual list geometry, pure: the message list renders only the rows that intersect the
 * viewport plus an overscan margin, positioned by prefix sums of measured (or estimated) heights.
 * Kept free of the DOM so 1,000- and 10,000-row cases are unit-tested in Node.
 */

/** offsets[i] = top of row i; offsets[n] = total height. */
export function buildOffsets(count: number, heightOf: (i: number) => number): Float64Array {
  const offsets = new Float64Array(count + 1);
  for (let i = 0; i < count; i++) offsets[i + 1] = offsets[i]! + Math.max(0, heightOf(i));
  return offsets;
}

/** Index of the row containing `y` (the last row whose top is ≤ y), clamped to [0, count-1]. */
export function rowAt(offsets: Float64Array, y: number): number {
  const count = offsets.length - 1;
  if (count <= 0) return 0;
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export interface VirtualWindow {
  /** First rendered row. */
  start: number;
  /** One past the last rendered row. */
  end: number;
  /** Space above the first rendered row. */
  padTop: number;
  /** Space below the last rendered row. */
  padBottom: number;
  total: number;
}

export function computeWindow(offsets: Float64Array, scrollTop: number, viewport: number, overscan: number): VirtualWindow {
  const count = offsets.length - 1;
  const total = offsets[count] ?? 0;
  if (count <= 0) return { start: 0, end: 0, padTop: 0, padBottom: 0, total: 0 };
  const top = Math.max(0, scrollTop - overscan);
  const bottom = Math.min(total, scrollTop + viewport + overscan);
  const start = rowAt(offsets, top);
  const end = Math.min(count, rowAt(offsets, Math.max(top, bottom - 0.001)) + 1);
  return { start, end, padTop: offsets[start]!, padBottom: total - offsets[end]!, total };
}

/**
 * Remembers measured heights by row key; rows never measured use the running average of those
 * that were (a better guess than a constant once a few rows have been seen).
 */
export class HeightCache {
  private readonly heights = new Map<string, number>();
  private sum = 0;

  constructor(private readonly fallback: number) {}

  get(key: string): number {
    return this.heights.get(key) ?? this.estimate();
  }

  has(key: string): boolean {
    return this.heights.has(key);
  }

  /** Returns true when the height changed. */
  set(key: string, h: number): boolean {
    const prev = this.heights.get(key);
    if (prev === h) return false;
    this.sum += h - (prev ?? 0);
    this.heights.set(key, h);
    return true;
  }

  estimate(): number {
    return this.heights.size === 0 ? this.fallback : this.sum / this.heights.size;
  }

  clear(): void {
    this.heights.clear();
    this.sum = 0;
  }
}

/**
 * The message list's geometry, kept up to date row by row (issue 20: a 300-turn run must not make
 * each frame walk every row). Row tops are prefix sums over two Fenwick trees — the measured
 * heights, and a count of the rows not measured yet, which take the running average of measured
 * heights (as HeightCache) — so appending a row, measuring one, a row's top and the row at a
 * given y each cost O(log n). The rows themselves are rebuilt (O(n)) only when the model says
 * rows were removed or rebuilt (ThreadView.rowsShape), or the thread changed.
 */
export class ListGeometry {
  private keys: string[] = [];
  private readonly indexOfKey = new Map<string, number>();
  /** Fenwick trees, 1-based, over [0, cap): measured heights, and 1 per unmeasured row. */
  private measured = new Float64Array(1);
  private unmeasured = new Float64Array(1);
  private cap = 0;
  private readonly heights: HeightCache;
  private shape: object | null = null;

  constructor(fallback: number) {
    this.heights = new HeightCache(fallback);
  }

  get count(): number {
    return this.keys.length;
  }

  keyAt(i: number): string | undefined {
    return this.keys[i];
  }

  indexOf(key: string): number {
    return this.indexOfKey.get(key) ?? -1;
  }

  /** Forgets everything (another thread). */
  clear(): void {
    this.heights.clear();
    this.reset([], null);
  }

  /**
   * Follows the rows: `keyOf(i)` for i < `count`. With the same `shape` token as last time only
   * rows appended at the end are new (the model's promise), so only those are read.
   */
  sync(count: number, keyOf: (i: number) => string, shape: object): void {
    if (shape === this.shape && count >= this.keys.length) {
      for (let i = this.keys.length; i < count; i++) this.append(keyOf(i));
      return;
    }
    const keys: string[] = [];
    for (let i = 0; i < count; i++) keys.push(keyOf(i));
    this.reset(keys, shape);
  }

  /** Records a row's measured height; true when it changed. */
  setHeight(key: string, h: number): boolean {
    const prev = this.heights.has(key) ? this.heights.get(key) : undefined;
    if (!this.heights.set(key, h)) return false;
    const i = this.indexOfKey.get(key);
    if (i !== undefined) {
      if (prev === undefined) add(this.unmeasured, this.cap, i, -1);
      add(this.measured, this.cap, i, h - (prev ?? 0));
    }
    return true;
  }

  /** The top of row i (i = count: the total height). */
  offset(i: number): number {
    return prefix(this.measured, i) + prefix(this.unmeasured, i) * this.heights.estimate();
  }

  get total(): number {
    return this.offset(this.keys.length);
  }

  /** The last row whose top is ≤ y, clamped to [0, count-1] (as rowAt). */
  rowAt(y: number): number {
    const n = this.keys.length;
    if (n === 0) return 0;
    const est = this.heights.estimate();
    let pos = 0;
    let acc = 0;
    for (let step = highestBit(this.cap); step > 0; step >>= 1) {
      const k = pos + step;
      if (k > n) continue;
      const v = this.measured[k]! + this.unmeasured[k]! * est;
      if (acc + v <= y) {
        pos = k;
        acc += v;
      }
    }
    return Math.min(pos, n - 1);
  }

  /** As computeWindow, over these rows. */
  window(scrollTop: number, viewport: number, overscan: number): VirtualWindow {
    const count = this.keys.length;
    const total = this.total;
    if (count === 0) return { start: 0, end: 0, padTop: 0, padBottom: 0, total: 0 };
    const top = Math.max(0, scrollTop - overscan);
    const bottom = Math.min(total, scrollTop + viewport + overscan);
    const start = this.rowAt(top);
    const end = Math.min(count, this.rowAt(Math.max(top, bottom - 0.001)) + 1);
    const padTop = this.offset(start);
    return { start, end, padTop, padBottom: total - this.offset(end), total };
  }

  private append(key: string): void {
    const i = this.keys.length;
    if (i + 1 > this.cap) {
      this.reset([...this.keys, key], this.shape);
      return;
    }
    this.keys.push(key);
    this.indexOfKey.set(key, i);
    // Rows past the end weigh 0 in both trees, so an append is a point update.
    if (this.heights.has(key)) add(this.measured, this.cap, i, this.heights.get(key));
    else add(this.unmeasured, this.cap, i, 1);
  }

  /** Rebuilds both trees over `keys` in O(n), with room to double. */
  private reset(keys: string[], shape: object | null): void {
    this.keys = keys;
    this.shape = shape;
    this.indexOfKey.clear();
    let cap = 16;
    while (cap < keys.length * 2) cap *= 2;
    this.cap = cap;
    this.measured = new Float64Array(cap + 1);
    this.unmeasured = new Float64Array(cap + 1);
    keys.forEach((key, i) => {
      this.indexOfKey.set(key, i);
      if (this.heights.has(key)) this.measured[i + 1] = this.heights.get(key);
      else this.unmeasured[i + 1] = 1;
    });
    // In-place Fenwick construction: each node passes its sum up to its parent once.
    for (let k = 1; k <= cap; k++) {
      const parent = k + (k & -k);
      if (parent <= cap) {
        this.measured[parent]! += this.measured[k]!;
        this.unmeasured[parent]! += this.unmeasured[k]!;
      }
    }
  }
}

function add(tree: Float64Array, cap: number, i: number, delta: number): void {
  for (let k = i + 1; k <= cap; k += k & -k) tree[k]! += delta;
}

/** Sum of the first i values. */
function prefix(tree: Float64Array, i: number): number {
  let s = 0;
  for (let k = i; k > 0; k -= k & -k) s += tree[k]!;
  return s;
}

function highestBit(n: number): number {
  let b = 1;
  while (b * 2 <= n) b *= 2;
  return n === 0 ? 0 : b;
}
