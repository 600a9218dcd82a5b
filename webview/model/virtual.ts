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
