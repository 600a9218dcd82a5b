// The panel's pure model, without a browser: (1) the virtual list's geometry (buildOffsets, then
// computeWindow at five scroll positions) and (2) building a thread snapshot (the store's reducer
// on a `state` message), each at 1,000 and 10,000 rows. The 1,000-row case is the baseline: the
// "per row" ratio is (cost per row at N) / (cost per row at 1,000), ~1 when the work is linear.
// These figures were wall-clock assertions in test/unit/webview (virtual.test.ts "< 50 ms",
// store.test.ts "linear time"); a test checks what they compute, this measures how fast.
// Warm-up first (JIT), then the sizes interleaved round by round, so drift on a shared machine
// falls on both alike; medians of the rounds.
// (3) issue 20's long run: a 300-turn tool-calling run (601 rows, 300 tool-call cards) streamed
// event by event into the store and the list's geometry; the cost per journal event in the last
// 50 turns against the first 50 (goal ≤ 1.2×: flat, not growing with the thread), and the rows a
// pinned list renders then.
import { ListGeometry, buildOffsets, computeWindow } from "../../webview/model/virtual.js";
import { initialState, reduce } from "../../webview/store.js";
import type { PanelState } from "../../webview/store.js";
import { ai, human, stateMsg } from "../unit/webview/fixtures.js";
import { longRun } from "../unit/webview/longRun.js";
import type { HostToWebview } from "../../extension/protocol/webview.js";
import type { Bench, Row } from "./run.js";

const ROUNDS = Number(process.env.BENCH_WEBVIEW_ROUNDS ?? 31);
const WARMUP = 5;
const SIZES = [1_000, 10_000] as const;
const BASELINE = SIZES[0];

/** Heights vary like a chat: short human rows, long AI rows with code. */
const heightOf = (i: number): number => (i % 3 === 0 ? 40 : i % 3 === 1 ? 120 : 300);

function geometry(n: number): number {
  const offsets = buildOffsets(n, heightOf);
  const total = offsets[n]!;
  let rendered = 0;
  for (const scrollTop of [0, total / 3, total / 2, total - 600, total]) {
    const w = computeWindow(offsets, scrollTop, 600, 400);
    rendered += w.end - w.start;
  }
  return rendered;
}

/** A thread as the harness sends it: questions, answers, every other answer with a tool call. */
function snapshotOf(n: number): HostToWebview {
  const messages = Array.from({ length: n }, (_, i) =>
    (i % 2 ? ai(`a${i}`, "answer", i % 4 === 1 ? [{ id: `c${i}`, name: "bash", args: {} }] : undefined) : human(`h${i}`, "question")) as never);
  return stateMsg({ messages });
}

function snapshot(msg: HostToWebview): number {
  return reduce(initialState, msg).thread?.messages.length ?? 0;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

function time(fn: () => number): number {
  const t0 = performance.now();
  // The result is checked so the work cannot be optimised away.
  if (fn() <= 0) throw new Error("the measured work produced nothing");
  return performance.now() - t0;
}

interface Case {
  what: string;
  /** what the old test asserted, for the reader (not checked) */
  formerBound: string;
  run: (n: number) => () => number;
}

const cases: Case[] = [
  { what: "virtual list geometry", formerBound: "< 50 ms at 10,000", run: (n) => () => geometry(n) },
  {
    what: "snapshot build (reduce state)",
    formerBound: "< 500 ms at 10,000",
    run: (n) => {
      // The message objects are built once, outside the timing: the harness sends them.
      const msg = snapshotOf(n);
      return () => snapshot(msg);
    },
  },
];

const LONG_TURNS = 300;
const EDGE_TURNS = 50;
const LONG_ROUNDS = Number(process.env.BENCH_WEBVIEW_LONG_ROUNDS ?? 21);
/** The panel's list: a 600px viewport, 600px overscan; rows 48px (a folded tool call) or 36px. */
const VIEWPORT = 600;
const OVERSCAN = 600;
const heightOfRow = (m: { toolCalls: readonly unknown[] }): number => (m.toolCalls.length > 0 ? 48 : 36);

const journal = longRun(LONG_TURNS);
/** journal[0] is the run's start; journal[1 + k] is turn k. */
const turnsFrom = (k: number, n: number) => journal.slice(1 + k, 1 + k + n);

/** The store and the list's geometry as they are once `turns` turns streamed in (every row measured). */
function streamedTo(turns: number): { s: PanelState; heights: Array<[string, number]> } {
  let s: PanelState = reduce(initialState, stateMsg());
  for (const evs of journal.slice(0, 1 + turns)) s = reduce(s, { type: "events", threadId: s.thread!.threadId, events: evs });
  return { s, heights: s.thread!.messages.map((m) => [m.key, heightOfRow(m)]) };
}

interface Window {
  /**
   * µs per event, the median over the window's events (a collection or a preemption on the shared
   * machine lands on one event, not on the figure): the store's reducer, the list's geometry
   * (follow the rows, measure the new one, window at the bottom), and both together.
   */
  reduce: number;
  geometry: number;
  both: number;
  /** Rows in the pinned window after the last of these turns: what the list puts in the DOM. */
  rows: number;
}

/**
 * EDGE_TURNS turns streamed event by event into `from` (the store is persistent: the same saved
 * state serves every round), one event per `events` message as the worst case.
 */
function stream(from: ReturnType<typeof streamedTo>, turns: readonly (readonly unknown[])[]): Window {
  let s = from.s;
  const g = new ListGeometry(72);
  const t0 = s.thread!;
  g.sync(t0.messages.length, (i) => t0.messages.at(i)!.key, t0.rowsShape);
  for (const [key, h] of from.heights) g.setHeight(key, h);
  const reduceUs: number[] = [];
  const geometryUs: number[] = [];
  const bothUs: number[] = [];
  let rows = 0;
  for (const evs of turns) {
    for (const e of evs) {
      const a = performance.now();
      s = reduce(s, { type: "events", threadId: t0.threadId, events: [e as never] });
      const b = performance.now();
      const t = s.thread!;
      g.sync(t.messages.length, (i) => t.messages.at(i)!.key, t.rowsShape);
      const last = t.messages.at(-1);
      if (last) g.setHeight(last.key, heightOfRow(last));
      const w = g.window(Math.max(0, g.total - VIEWPORT), VIEWPORT, OVERSCAN);
      rows = w.end - w.start;
      const c = performance.now();
      reduceUs.push((b - a) * 1000);
      geometryUs.push((c - b) * 1000);
      bothUs.push((c - a) * 1000);
    }
  }
  const answered = s.thread!.messages.flatMap((m) => m.toolCalls).filter((c) => c.result).length;
  if (answered !== from.s.thread!.messages.flatMap((m) => m.toolCalls).length + turns.length) throw new Error("a streamed call was left without its result");
  return { reduce: median(reduceUs), geometry: median(geometryUs), both: median(bothUs), rows };
}

function longRunRows(): Row[] {
  const start = streamedTo(0);
  const late = streamedTo(LONG_TURNS - EDGE_TURNS);
  const firstTurns = turnsFrom(0, EDGE_TURNS);
  const lastTurns = turnsFrom(LONG_TURNS - EDGE_TURNS, EDGE_TURNS);
  const pair = (r: number): [Window, Window] => {
    // The order alternates, so drift on the shared machine falls on both windows alike.
    if (r % 2) {
      const b = stream(late, lastTurns);
      return [stream(start, firstTurns), b];
    }
    const a = stream(start, firstTurns);
    return [a, stream(late, lastTurns)];
  };
  for (let i = 0; i < WARMUP; i++) pair(i);
  const rounds = Array.from({ length: LONG_ROUNDS }, (_, r) => pair(r));
  const m = (f: (w: Window) => number, k: 0 | 1) => median(rounds.map((p) => f(p[k])));
  const what = `${LONG_TURNS}-turn tool-call run (${2 * LONG_TURNS + 1} messages: ${LONG_TURNS + 1} rows, ${LONG_TURNS} tool-call cards)`;
  const first = `turns 1-${EDGE_TURNS}`;
  const last = `turns ${LONG_TURNS - EDGE_TURNS + 1}-${LONG_TURNS}`;
  const rowsOf = (part: string, f: (w: Window) => number, goal: string): Row[] => [
    { case: what, part, window: first, "median µs per event": m(f, 0), "last / first": "", goal: "" },
    { case: what, part, window: last, "median µs per event": m(f, 1), "last / first": m(f, 1) / m(f, 0), goal },
  ];
  return [
    ...rowsOf("panel model per event: store reducer + list geometry", (w) => w.both, "≤ 1.2"),
    ...rowsOf("  of which the store reducer", (w) => w.reduce, "≤ 1.2"),
    ...rowsOf("  of which the list geometry (O(log n) Fenwick trees)", (w) => w.geometry, ""),
    { case: what, part: "rows the pinned list renders (DOM rows)", window: `after turn ${EDGE_TURNS}`, rows: m((w) => w.rows, 0) },
    { case: what, part: "rows the pinned list renders (DOM rows)", window: `after turn ${LONG_TURNS}`, rows: m((w) => w.rows, 1), "last / first": m((w) => w.rows, 1) / m((w) => w.rows, 0), goal: "bounded (1)" },
  ];
}

export default {
  name: "webview model",
  description: `the panel's virtual-list geometry and snapshot build at ${SIZES.join(" and ")} rows (medians of ${ROUNDS} interleaved rounds after ${WARMUP} warm-up; baseline ${BASELINE} rows), and a ${LONG_TURNS}-turn tool-call run streamed event by event (medians of ${LONG_ROUNDS} rounds)`,
  run(): Promise<Row[]> {
    const rows: Row[] = [];
    for (const c of cases) {
      const fns = SIZES.map((n) => c.run(n));
      for (let i = 0; i < WARMUP; i++) for (const fn of fns) time(fn);
      const samples: number[][] = SIZES.map(() => []);
      for (let r = 0; r < ROUNDS; r++) fns.forEach((fn, k) => samples[k]!.push(time(fn)));
      const base = median(samples[0]!);
      SIZES.forEach((n, k) => {
        const ms = median(samples[k]!);
        rows.push({
          case: c.what,
          rows: n,
          "median µs": ms * 1000,
          "ratio to baseline": ms / base,
          "per-row ratio": ms / n / (base / BASELINE),
          "former test bound": n === SIZES.at(-1) ? c.formerBound : "",
        });
      });
    }
    rows.push(...longRunRows());
    return Promise.resolve(rows);
  },
} satisfies Bench;
