// The panel's pure model, without a browser: (1) the virtual list's geometry (buildOffsets, then
// computeWindow at five scroll positions) and (2) building a thread snapshot (the store's reducer
// on a `state` message), each at 1,000 and 10,000 rows. The 1,000-row case is the baseline: the
// "per row" ratio is (cost per row at N) / (cost per row at 1,000), ~1 when the work is linear.
// These figures were wall-clock assertions in test/unit/webview (virtual.test.ts "< 50 ms",
// store.test.ts "linear time"); a test checks what they compute, this measures how fast.
// Warm-up first (JIT), then the sizes interleaved round by round, so drift on a shared machine
// falls on both alike; medians of the rounds.
import { buildOffsets, computeWindow } from "../../webview/model/virtual.js";
import { initialState, reduce } from "../../webview/store.js";
import { ai, human, stateMsg } from "../unit/webview/fixtures.js";
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

export default {
  name: "webview model",
  description: `the panel's virtual-list geometry and snapshot build at ${SIZES.join(" and ")} rows; medians of ${ROUNDS} interleaved rounds after ${WARMUP} warm-up; baseline ${BASELINE} rows`,
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
    return Promise.resolve(rows);
  },
} satisfies Bench;
