/**
 * Glob patterns the model writes (glob's `pattern`, grep's `glob`), matched without a regular
 * expression: a pattern such as `*a*a*a*a*a*a*a*a*b`, translated to `^[^/]*a[^/]*a…b$`, makes a
 * backtracking engine try every split of a long name, and a synchronous match froze the harness's
 * event loop — every thread of every workspace in VS Code — for minutes.
 *
 * Here each segment is matched by the greedy "restart after the last star" loop (Russ Cox, "Glob
 * Matching Can Be Simple And Fast Too"): at most len(name) × len(segment) steps, never exponential,
 * because a mismatch only ever moves the LAST star on (an earlier star taking more could not help).
 * `**` segments are the same loop one level up (a `**` is the star, a segment is one element), so a
 * path costs at most segments × parts segment tests. The caps below bound the pattern itself, so
 * one entry of a walk is bounded too, and the walk (trust/treeWalk.ts) yields to the event loop and
 * checks the run's signal between entries.
 *
 * Semantics (DeerFlow's `PurePosixPath.match` / fnmatch, as before): `*` any run of characters
 * within a segment, `?` one character, `[...]` / `[!...]` a set (ranges `a-z`, no escapes), all
 * else literal and case-sensitive; `**` as a whole segment matches any number of segments, none
 * included; a relative pattern is anchored at the right (it matches a suffix of the path), an
 * absolute one at the root. Characters are code points, as in Python.
 */

export const MAX_GLOB_PATTERN_CHARS = 1_000;
/** `*` wildcards inside segments (a run of stars counts once); `**` segments are counted apart. */
export const MAX_GLOB_STARS = 16;
export const MAX_GLOB_GLOBSTARS = 8;

/** A pattern over the caps: the message says which cap and what to do, for the model to act on. */
export class GlobPatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GlobPatternError";
  }
}

type Token =
  | { readonly kind: "star" }
  | { readonly kind: "any" }
  | { readonly kind: "literal"; readonly ch: string }
  | { readonly kind: "set"; readonly negate: boolean; readonly singles: ReadonlySet<string>; readonly ranges: ReadonlyArray<readonly [number, number]> };

/** One segment, with fast paths for the shapes nearly every pattern has. */
interface SegmentMatcher {
  (name: string): boolean;
  readonly stars: number;
}

type Segment = SegmentMatcher | "**";

export interface CompiledGlob {
  readonly source: string;
  /** False when the pattern has no segment at all (`""`, `/`, `.`): it matches nothing. */
  readonly matchesAnything: boolean;
  matches(relPath: string): boolean;
}

/** Code points: the string itself when it has no surrogate pair (indexing it is then per character). */
const chars = (s: string): ArrayLike<string> => (/[\uD800-\uDFFF]/.test(s) ? Array.from(s) : s);

function tokenize(segment: string): Token[] {
  const p = Array.from(segment);
  const out: Token[] = [];
  for (let i = 0; i < p.length; i += 1) {
    const ch = p[i] as string;
    if (ch === "*") {
      if (out.at(-1)?.kind !== "star") out.push({ kind: "star" });
    } else if (ch === "?") out.push({ kind: "any" });
    else if (ch === "[") {
      // fnmatch: `[!` negates, and a `]` right after `[` or `[!` is a member, not the end.
      let j = i + 1;
      if (p[j] === "!") j += 1;
      if (p[j] === "]") j += 1;
      const close = p.indexOf("]", j);
      if (close < 0) {
        out.push({ kind: "literal", ch });
        continue;
      }
      let body = p.slice(i + 1, close);
      const negate = body[0] === "!";
      if (negate) body = body.slice(1);
      const singles = new Set<string>();
      const ranges: Array<[number, number]> = [];
      for (let k = 0; k < body.length; k += 1) {
        if (body[k + 1] === "-" && k + 2 < body.length) {
          ranges.push([(body[k] as string).codePointAt(0) as number, (body[k + 2] as string).codePointAt(0) as number]);
          k += 2;
        } else singles.add(body[k] as string);
      }
      out.push({ kind: "set", negate, singles, ranges });
      i = close;
    } else out.push({ kind: "literal", ch });
  }
  return out;
}

function matchesOne(t: Token, c: string): boolean {
  switch (t.kind) {
    case "any":
      return true;
    case "literal":
      return t.ch === c;
    case "set": {
      const code = c.codePointAt(0) as number;
      const member = t.singles.has(c) || t.ranges.some(([lo, hi]) => lo <= code && code <= hi);
      return member !== t.negate;
    }
    case "star":
      return false;
  }
}

/**
 * The greedy wildcard loop, for characters in a segment and for segments in a path (`**` is the
 * star one level up): on a mismatch, the last star takes one more element; no other backtracking,
 * so a match costs at most pattern × subject element tests.
 */
function starMatch<P, S>(p: ArrayLike<P>, s: ArrayLike<S>, isStar: (t: P) => boolean, one: (t: P, x: S) => boolean): boolean {
  let pi = 0;
  let si = 0;
  let starP = -1;
  let starS = 0;
  while (si < s.length) {
    if (pi < p.length && isStar(p[pi] as P)) {
      starP = pi;
      starS = si;
      pi += 1;
    } else if (pi < p.length && one(p[pi] as P, s[si] as S)) {
      pi += 1;
      si += 1;
    } else if (starP >= 0) {
      pi = starP + 1;
      starS += 1;
      si = starS;
    } else return false;
  }
  while (pi < p.length && isStar(p[pi] as P)) pi += 1;
  return pi === p.length;
}

const isStarToken = (t: Token): boolean => t.kind === "star";
const matchTokens = (p: readonly Token[], s: ArrayLike<string>): boolean => starMatch(p, s, isStarToken, matchesOne);

const literalText = (tokens: readonly Token[]): string => tokens.map((t) => (t as { ch: string }).ch).join("");

function compileSegment(segment: string): SegmentMatcher {
  const tokens = tokenize(segment);
  const stars = tokens.filter((t) => t.kind === "star").length;
  // The literal text before the first and after the last wildcard: a cheap first test.
  let h = 0;
  while (tokens[h]?.kind === "literal") h += 1;
  let t = tokens.length;
  while (t > h && tokens[t - 1]?.kind === "literal") t -= 1;
  const head = literalText(tokens.slice(0, h));
  const tail = literalText(tokens.slice(t));
  let fn: (name: string) => boolean;
  if (h === tokens.length) fn = (name) => name === head;
  else if (t - h === 1 && tokens[h]?.kind === "star") {
    // `*.py`, `test_*`, `*`: nothing but the ends to check.
    const min = head.length + tail.length;
    fn = (name) => name.length >= min && name.startsWith(head) && name.endsWith(tail);
  } else fn = (name) => name.startsWith(head) && name.endsWith(tail) && matchTokens(tokens, chars(name));
  return Object.assign(fn, { stars });
}

const isGlobstar = (seg: Segment): boolean => seg === "**";
const matchSegments = (segments: readonly Segment[], parts: readonly string[]): boolean =>
  starMatch(segments, parts, isGlobstar, (seg, part) => (seg as (name: string) => boolean)(part));

/** Throws GlobPatternError when the pattern is over a cap. */
export function compileGlob(pattern: string): CompiledGlob {
  if (pattern.length > MAX_GLOB_PATTERN_CHARS) {
    throw new GlobPatternError(`the pattern has ${pattern.length} characters; at most ${MAX_GLOB_PATTERN_CHARS} are allowed. Use a shorter pattern.`);
  }
  const segments: Segment[] = [];
  for (const s of pattern.split("/")) {
    if (s === "" || s === ".") continue;
    if (s === "**") {
      if (segments.at(-1) !== "**") segments.push("**"); // `**/**` is one `**`
    } else segments.push(compileSegment(s));
  }
  const globstars = segments.filter((s) => s === "**").length;
  const stars = segments.reduce((n, s) => n + (s === "**" ? 0 : s.stars), 0);
  if (globstars > MAX_GLOB_GLOBSTARS || stars > MAX_GLOB_STARS) {
    throw new GlobPatternError(
      `the pattern has ${stars} '*' and ${globstars} '**' wildcards; at most ${MAX_GLOB_STARS} '*' and ${MAX_GLOB_GLOBSTARS} '**' are allowed. ` +
        "Use fewer wildcards, for example `**/*.py` or `src/**/test_*.py`.",
    );
  }
  const matchesAnything = segments.length > 0;
  // Anchored at the right: "some suffix of the path matches" is the pattern behind one more `**`.
  const fromRoot = pattern.startsWith("/") && segments[0] !== "**";
  const anchored: readonly Segment[] = !matchesAnything || fromRoot || segments[0] === "**" ? segments : ["**", ...segments];
  // Nearly every pattern (`*.py`, `**/*.ts`, `src/*.js`) has no `**` past the front: its segments
  // match the path's last parts (or all of them, from the root), one each, with no search at all.
  const fixed = fromRoot ? segments : anchored.slice(1);
  const simple = !fixed.includes("**") ? (fixed as SegmentMatcher[]) : undefined;
  const clean = (relPath: string) => relPath !== "" && !relPath.startsWith("/") && !relPath.endsWith("/") && !relPath.includes("//");
  const partsOf = (relPath: string) => relPath.split("/").filter((s) => s !== "");
  return {
    source: pattern,
    matchesAnything,
    matches(relPath: string): boolean {
      if (!matchesAnything) return false;
      if (simple === undefined) return matchSegments(anchored, partsOf(relPath));
      if (simple.length === 0) return true; // `**`
      if (!clean(relPath)) return matchSegments(anchored, partsOf(relPath));
      // The last parts, right to left, without splitting the path (walks ask once per entry).
      let end = relPath.length;
      for (let i = simple.length - 1; i >= 0; i -= 1) {
        if (end < 0) return false;
        const slash = relPath.lastIndexOf("/", end - 1);
        if (!(simple[i] as SegmentMatcher)(relPath.slice(slash + 1, end))) return false;
        end = slash;
      }
      return !fromRoot || end < 0;
    },
  };
}

/** One path segment (a file name) against a one-segment pattern, for the fixed ignore list. */
export function compileNamePattern(pattern: string): (name: string) => boolean {
  return compileSegment(pattern);
}
