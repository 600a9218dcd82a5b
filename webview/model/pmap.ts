/**
 * A persistent map from strings (a hash array mapped trie, Bagwell's HAMT): the thread view's
 * lookups — message key → row, tool call id → the message that made it, early results, subagent
 * views. Setting one key copies one path of at most seven 32-way nodes, never the whole map, so
 * a new message or tool call costs the same in a 600-message thread as in a short one (issue 20);
 * copying a Map per event made that cost grow with the thread. Older versions stay valid, so the
 * reducers stay pure. Read-only to its readers (it is a ReadonlyMap); iteration is in hash order,
 * not insertion order — nothing in the panel iterates these maps for display.
 */
const BITS = 5;
const MASK = (1 << BITS) - 1;
/** Below this shift every bit of the 32-bit hash has been used: equal hashes share a bucket. */
const MAX_SHIFT = 30;

interface Leaf<V> {
  readonly kind: 0;
  readonly hash: number;
  readonly key: string;
  readonly value: V;
}
interface Branch<V> {
  readonly kind: 1;
  readonly bitmap: number;
  readonly children: ReadonlyArray<Child<V>>;
}
interface Bucket<V> {
  readonly kind: 2;
  readonly hash: number;
  readonly leaves: ReadonlyArray<Leaf<V>>;
}
type Child<V> = Leaf<V> | Branch<V> | Bucket<V>;

/** Characters hashed, from the end: message and call ids differ there (UUID tails, counters). */
const HASHED_CHARS = 24;

/**
 * FNV-1a over the key's last HASHED_CHARS UTF-16 code units and its length: a lookup costs the
 * same for a long id as for a short one. Keys that agree there share a hash and a bucket, which
 * stays correct (buckets compare whole keys), only slower.
 */
function hashOf(key: string): number {
  let h = 0x811c9dc5 ^ key.length;
  for (let i = Math.max(0, key.length - HASHED_CHARS); i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}

const EMPTY_BRANCH: Branch<never> = { kind: 1, bitmap: 0, children: [] };

export class PMap<V> implements ReadonlyMap<string, V> {
  private static readonly EMPTY = new PMap<never>(EMPTY_BRANCH, 0);

  private constructor(private readonly root: Branch<V>, readonly size: number) {}

  static empty<V>(): PMap<V> {
    return PMap.EMPTY;
  }

  /** A map of `entries` (a later duplicate key wins), built bottom-up in one pass per level. */
  static from<V>(entries: Iterable<readonly [string, V]>): PMap<V> {
    const unique = entries instanceof Map ? (entries as Map<string, V>) : new Map(entries);
    if (unique.size === 0) return PMap.empty();
    const leaves: Array<Leaf<V>> = [];
    for (const [key, value] of unique) leaves.push({ kind: 0, hash: hashOf(key), key, value });
    const root = build(leaves, 0);
    return new PMap(root.kind === 1 ? root : { kind: 1, bitmap: 1 << (leaves[0]!.hash & MASK), children: [root] }, leaves.length);
  }

  get(key: string): V | undefined {
    return this.leaf(key)?.value;
  }

  has(key: string): boolean {
    return this.leaf(key) !== undefined;
  }

  private leaf(key: string): Leaf<V> | undefined {
    const hash = hashOf(key);
    let node: Child<V> = this.root;
    for (let shift = 0; ; shift += BITS) {
      if (node.kind === 0) return node.key === key ? node : undefined;
      if (node.kind === 2) return node.hash === hash ? node.leaves.find((l) => l.key === key) : undefined;
      const bit = 1 << ((hash >>> shift) & MASK);
      if ((node.bitmap & bit) === 0) return undefined;
      node = node.children[popcount(node.bitmap & (bit - 1))]!;
    }
  }

  /** A map with key set to value (this one when it already holds exactly that). */
  set(key: string, value: V): PMap<V> {
    const leaf: Leaf<V> = { kind: 0, hash: hashOf(key), key, value };
    const out = insert(this.root, 0, leaf);
    if (out.node === this.root) return this;
    return new PMap(out.node as Branch<V>, this.size + (out.added ? 1 : 0));
  }

  /** A map without key (this one when it has no such key). */
  delete(key: string): PMap<V> {
    const out = remove(this.root, 0, hashOf(key), key);
    if (out === this.root) return this;
    return new PMap((out ?? EMPTY_BRANCH) as Branch<V>, this.size - 1);
  }

  *entries(): MapIterator<[string, V]> {
    yield* walk(this.root);
  }

  *keys(): MapIterator<string> {
    for (const [k] of walk(this.root)) yield k;
  }

  *values(): MapIterator<V> {
    for (const [, v] of walk(this.root)) yield v;
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(fn: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [k, v] of walk(this.root)) fn(v, k, this);
  }
}

function* walk<V>(node: Child<V>): Generator<[string, V]> {
  if (node.kind === 0) yield [node.key, node.value];
  else if (node.kind === 2) for (const l of node.leaves) yield [l.key, l.value];
  else for (const c of node.children) yield* walk(c);
}

/** The node for `leaves` (distinct keys) at level `shift`: partitioned by their next 5 hash bits. */
function build<V>(leaves: Array<Leaf<V>>, shift: number): Child<V> {
  if (leaves.length === 1) return leaves[0]!;
  if (shift > MAX_SHIFT) return { kind: 2, hash: leaves[0]!.hash, leaves };
  const parts: Array<Array<Leaf<V>> | undefined> = [];
  let bitmap = 0;
  for (const l of leaves) {
    const k = (l.hash >>> shift) & MASK;
    bitmap |= 1 << k;
    (parts[k] ??= []).push(l);
  }
  const children: Array<Child<V>> = [];
  for (let k = 0; k <= MASK; k++) {
    const part = parts[k];
    if (part) children.push(build(part, shift + BITS));
  }
  return { kind: 1, bitmap, children };
}

function insert<V>(node: Child<V>, shift: number, leaf: Leaf<V>): { node: Child<V>; added: boolean } {
  if (node.kind === 0) {
    if (node.key === leaf.key) return { node: node.value === leaf.value ? node : leaf, added: false };
    return { node: merge(node, leaf, shift), added: true };
  }
  if (node.kind === 2) {
    const i = node.leaves.findIndex((l) => l.key === leaf.key);
    if (i >= 0 && node.leaves[i]!.value === leaf.value) return { node, added: false };
    const leaves = node.leaves.slice();
    if (i >= 0) leaves[i] = leaf;
    else leaves.push(leaf);
    return { node: { kind: 2, hash: node.hash, leaves }, added: i < 0 };
  }
  const bit = 1 << ((leaf.hash >>> shift) & MASK);
  const pos = popcount(node.bitmap & (bit - 1));
  if ((node.bitmap & bit) === 0) {
    const children = node.children.slice();
    children.splice(pos, 0, leaf);
    return { node: { kind: 1, bitmap: node.bitmap | bit, children }, added: true };
  }
  const child = node.children[pos]!;
  const out = insert(child, shift + BITS, leaf);
  if (out.node === child) return { node, added: false };
  const children = node.children.slice();
  children[pos] = out.node;
  return { node: { kind: 1, bitmap: node.bitmap, children }, added: out.added };
}

/** Two leaves that met at a node of level `shift`: a branch there (or a bucket) holding both. */
function merge<V>(a: Leaf<V>, b: Leaf<V>, shift: number): Child<V> {
  if (shift > MAX_SHIFT || a.hash === b.hash) return { kind: 2, hash: a.hash, leaves: [a, b] };
  const ia = (a.hash >>> shift) & MASK;
  const ib = (b.hash >>> shift) & MASK;
  if (ia === ib) return { kind: 1, bitmap: 1 << ia, children: [merge(a, b, shift + BITS)] };
  return { kind: 1, bitmap: (1 << ia) | (1 << ib), children: ia < ib ? [a, b] : [b, a] };
}

/** The node without key; the same node when absent; undefined when nothing is left of it. */
function remove<V>(node: Child<V>, shift: number, hash: number, key: string): Child<V> | undefined {
  if (node.kind === 0) return node.key === key ? undefined : node;
  if (node.kind === 2) {
    const leaves = node.leaves.filter((l) => l.key !== key);
    if (leaves.length === node.leaves.length) return node;
    return leaves.length === 1 ? leaves[0] : { kind: 2, hash: node.hash, leaves };
  }
  const bit = 1 << ((hash >>> shift) & MASK);
  if ((node.bitmap & bit) === 0) return node;
  const pos = popcount(node.bitmap & (bit - 1));
  const child = node.children[pos]!;
  const out = remove(child, shift + BITS, hash, key);
  if (out === child) return node;
  const children = node.children.slice();
  if (out === undefined) children.splice(pos, 1);
  else children[pos] = out;
  const bitmap = out === undefined ? node.bitmap & ~bit : node.bitmap;
  if (bitmap === 0 && shift > 0) return undefined;
  return { kind: 1, bitmap, children };
}
