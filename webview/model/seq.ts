/**
 * A persistent vector: the thread view's message list. Replacing or appending one element copies
 * at most one 32-slot path of a 32-way trie (plus a tail of at most 32), never the whole list, so
 * a streamed token, a tool result or a new message costs the same in a 600-message thread as in a
 * 6-message one (issue 20: a 300-turn run streams without the panel's per-event cost growing; a
 * plain array copied per event made it grow with the thread). Old versions stay valid and
 * unchanged, so the reducers stay pure and a renderer still tells "changed" from "same" by
 * identity. The layout is Clojure's PersistentVector (Bagwell/Hickey): the elements in 32-wide
 * leaves under a left-packed trie, the last 1..32 of them in `tail`.
 *
 * Reads mirror the array methods the panel uses (length, at, iteration, map, some, ...); there is
 * no `[i]`. Removing an element rebuilds the vector (O(n)): the model does that only for a
 * LangGraph RemoveMessage, a retried model call's dropped partial answer, or an adopted orphan result.
 */
const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;

/** An internal node holds child nodes; a leaf holds elements (at level 0). */
type Node = readonly unknown[];

export class Seq<T> implements Iterable<T> {
  private static readonly EMPTY = new Seq<never>(0, BITS, [], []);

  private constructor(
    readonly length: number,
    private readonly shift: number,
    private readonly root: Node,
    private readonly tail: readonly T[],
  ) {}

  static empty<T>(): Seq<T> {
    return Seq.EMPTY;
  }

  /** The vector of `items`, built bottom-up in one pass (a snapshot of a 10,000-message thread). */
  static from<T>(items: readonly T[]): Seq<T> {
    const n = items.length;
    if (n === 0) return Seq.empty();
    const tailOff = n < WIDTH ? 0 : ((n - 1) >>> BITS) << BITS;
    let nodes: Node[] = [];
    for (let i = 0; i < tailOff; i += WIDTH) nodes.push(items.slice(i, i + WIDTH));
    let shift = BITS;
    while (nodes.length > WIDTH) {
      const up: Node[] = [];
      for (let i = 0; i < nodes.length; i += WIDTH) up.push(nodes.slice(i, i + WIDTH));
      nodes = up;
      shift += BITS;
    }
    return new Seq<T>(n, shift, nodes, items.slice(tailOff));
  }

  private tailOffset(): number {
    return this.length < WIDTH ? 0 : ((this.length - 1) >>> BITS) << BITS;
  }

  /** The leaf (or the tail) holding index i, which must be in range. */
  private leafFor(i: number): readonly T[] {
    if (i >= this.tailOffset()) return this.tail;
    let node = this.root;
    for (let level = this.shift; level > 0; level -= BITS) node = node[(i >>> level) & MASK] as Node;
    return node as readonly T[];
  }

  /** The element at i; negative i counts from the end (as Array.prototype.at). */
  at(i: number): T | undefined {
    const k = i < 0 ? i + this.length : i;
    if (k < 0 || k >= this.length) return undefined;
    return this.leafFor(k)[k & MASK];
  }

  /** A vector with element i replaced (this one when it already is `value`). */
  set(i: number, value: T): Seq<T> {
    if (i < 0 || i >= this.length) throw new RangeError(`Seq.set: index ${i} out of range 0..${this.length - 1}`);
    if (this.at(i) === value) return this;
    const tailOff = this.tailOffset();
    if (i >= tailOff) {
      const tail = this.tail.slice();
      tail[i - tailOff] = value;
      return new Seq(this.length, this.shift, this.root, tail);
    }
    return new Seq(this.length, this.shift, assoc(this.shift, this.root, i, value), this.tail);
  }

  /** A vector with `value` appended. */
  push(value: T): Seq<T> {
    const n = this.length;
    if (n - this.tailOffset() < WIDTH) return new Seq(n + 1, this.shift, this.root, [...this.tail, value]);
    // The tail is full: it moves into the trie, which grows a level when its root is full.
    let root: Node;
    let shift = this.shift;
    if (n >>> BITS > 1 << this.shift) {
      root = [this.root, newPath(this.shift, this.tail)];
      shift += BITS;
    } else {
      root = pushTail(n, this.shift, this.root, this.tail);
    }
    return new Seq(n + 1, shift, root, [value]);
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = 0; i < this.length; i += WIDTH) {
      const leaf = this.leafFor(i);
      for (let k = 0; k < leaf.length && i + k < this.length; k++) yield leaf[k]!;
    }
  }

  /** Visits each element in order, leaf by leaf (the fast path for the other readers). */
  forEach(fn: (value: T, index: number) => void): void {
    for (let i = 0; i < this.length; i += WIDTH) {
      const leaf = this.leafFor(i);
      const end = Math.min(leaf.length, this.length - i);
      for (let k = 0; k < end; k++) fn(leaf[k]!, i + k);
    }
  }

  toArray(): T[] {
    const out: T[] = [];
    this.forEach((v) => out.push(v));
    return out;
  }

  map<U>(fn: (value: T, index: number) => U): U[] {
    const out: U[] = [];
    this.forEach((v, i) => out.push(fn(v, i)));
    return out;
  }

  flatMap<U>(fn: (value: T, index: number) => U | readonly U[]): U[] {
    return this.toArray().flatMap(fn);
  }

  filter(fn: (value: T, index: number) => boolean): T[] {
    return this.toArray().filter(fn);
  }

  findIndex(fn: (value: T, index: number) => boolean): number {
    for (let i = 0; i < this.length; i++) if (fn(this.at(i)!, i)) return i;
    return -1;
  }

  find(fn: (value: T, index: number) => boolean): T | undefined {
    const i = this.findIndex(fn);
    return i < 0 ? undefined : this.at(i);
  }

  some(fn: (value: T, index: number) => boolean): boolean {
    return this.findIndex(fn) >= 0;
  }

  every(fn: (value: T, index: number) => boolean): boolean {
    return this.findIndex((v, i) => !fn(v, i)) < 0;
  }
}

function assoc(level: number, node: Node, i: number, value: unknown): Node {
  const copy = node.slice();
  if (level === 0) copy[i & MASK] = value;
  else {
    const k = (i >>> level) & MASK;
    copy[k] = assoc(level - BITS, node[k] as Node, i, value);
  }
  return copy;
}

/** `tail` as the trie's next leaf; `count` is the length before the push. */
function pushTail(count: number, level: number, parent: Node, tail: Node): Node {
  const k = ((count - 1) >>> level) & MASK;
  const copy = parent.slice();
  if (level === BITS) copy[k] = tail;
  else {
    const child = parent[k] as Node | undefined;
    copy[k] = child ? pushTail(count, level - BITS, child, tail) : newPath(level - BITS, tail);
  }
  return copy;
}

function newPath(level: number, node: Node): Node {
  return level === 0 ? node : [newPath(level - BITS, node)];
}
