// Checkpoint storage of a DeerFlow-shaped agent: createAgent with four middlewares, one hook each
// (so ~7 checkpoints per turn, as DeerFlow's chain produces), 200 turns of a ~1 KB question and a
// ~1 KB answer from the scripted model server. Our LinearSqliteSaver against the stock SqliteSaver,
// in the same process: database size (after a TRUNCATE checkpoint of the WAL) and per-turn time,
// both wall time and the wall time inside the saver's calls (an upper bound: other work runs while
// a call awaits), as means over each window of turns; plus the agent without a checkpointer.
// checkpointSaverOps.bench.ts measures the saver's own CPU time.
// BENCH_CHECKPOINT_TURNS=50 shortens the run.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { HumanMessage, createAgent, createMiddleware } from "langchain";
import { ChatOpenAI } from "@langchain/openai";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { BaseMessage } from "@langchain/core/messages";
import { startModelServer } from "../fixtures/modelServer.js";
import { openDatabase } from "../../extension/harness/store/db.js";
import type { Db } from "../../extension/harness/store/sqlite/types.js";

/** What the bench needs of a connection: ours (either driver) or the stock saver's better-sqlite3. */
type BenchDb = Pick<Db, "exec" | "close"> & { prepare(sql: string): { get(): unknown } };
import { LinearSqliteSaver } from "../../extension/harness/store/checkpointer.js";
import type { Bench, Row } from "./run.js";

const TURNS = Number(process.env.BENCH_CHECKPOINT_TURNS ?? 200);
const MARKS = [10, 50, 200].filter((m) => m <= TURNS);
const KB = "lorem ipsum dolor sit amet ".repeat(38).slice(0, 1000);

/** Four no-op middlewares, each with one hook: each hook is a graph node, so a checkpoint. */
const noOpMiddlewares = [
  createMiddleware({ name: "NoOpBeforeAgent", beforeAgent: () => undefined }),
  createMiddleware({ name: "NoOpBeforeModel", beforeModel: () => undefined }),
  createMiddleware({ name: "NoOpAfterModel", afterModel: () => undefined }),
  createMiddleware({ name: "NoOpAfterAgent", afterAgent: () => undefined }),
];

/** Accumulates the wall time spent inside the saver's methods (calls may overlap slightly). */
function timed<T extends BaseCheckpointSaver>(saver: T): { saver: T; spentMs: () => number } {
  let spent = 0;
  for (const method of ["getTuple", "put", "putWrites"] as const) {
    const original = saver[method].bind(saver) as (...args: unknown[]) => Promise<unknown>;
    (saver as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      const t0 = performance.now();
      try {
        return await original(...args);
      } finally {
        spent += performance.now() - t0;
      }
    };
  }
  return { saver, spentMs: () => spent };
}

interface Subject {
  name: string;
  open(file: string): { saver: BaseCheckpointSaver; db: BenchDb };
}

const subjects: Subject[] = [
  {
    name: "ours (LinearSqliteSaver)",
    open: (file) => {
      const db = openDatabase(file);
      return { saver: new LinearSqliteSaver(db), db };
    },
  },
  {
    name: "stock SqliteSaver",
    open: (file) => {
      const db = new Database(file);
      // As SqliteSaver.setup() leaves it (WAL), plus the synchronous level openDatabase() uses, so
      // the comparison measures the storage layout rather than the fsync policy (default FULL).
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      return { saver: new SqliteSaver(db), db };
    },
  },
];

async function runSubject(subject: Subject, turns = TURNS, marks = MARKS): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-bench-"));
  const file = join(dir, "bench.db");
  const server = await startModelServer({ script: (_req, i) => ({ content: `answer ${i}: ${KB}` }) });
  const { saver: raw, db } = subject.open(file);
  const { saver, spentMs } = timed(raw);
  try {
    const agent = createAgent({
      model: new ChatOpenAI({ model: "fake", apiKey: "test", configuration: { baseURL: server.url }, maxRetries: 0 }),
      tools: [],
      middleware: noOpMiddlewares,
      checkpointer: saver,
    });
    const config = { configurable: { thread_id: "bench" } };
    const rows: Row[] = [];
    let windowStart = performance.now();
    let saverAtWindowStart = 0;
    let lastMark = 0;
    for (let t = 1; t <= turns; t++) {
      await agent.graph.invoke({ messages: [new HumanMessage(`question ${t}: ${KB}`)] }, config);
      if (!marks.includes(t)) continue;
      const turns = t - lastMark;
      const wallMs = (performance.now() - windowStart) / turns;
      const inSaverMs = (spentMs() - saverAtWindowStart) / turns;
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      const checkpoints = (db.prepare("SELECT count(*) AS n FROM checkpoints").get() as { n: number }).n;
      const state = await agent.graph.getState(config);
      rows.push({
        saver: subject.name,
        turns: t,
        "db MB": statSync(file).size / 1e6,
        checkpoints,
        messages: (state.values.messages as unknown[]).length,
        window: `${lastMark + 1}-${t}`,
        "ms/turn": wallMs,
        "in saver calls ms/turn": inSaverMs,
      });
      lastMark = t;
      windowStart = performance.now();
      saverAtWindowStart = spentMs();
    }
    return rows;
  } finally {
    db.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same agent without a checkpointer, the caller passing the history: the cost that is not persistence. */
async function runBaseline(): Promise<Row[]> {
  const server = await startModelServer({ script: (_req, i) => ({ content: `answer ${i}: ${KB}` }) });
  try {
    const agent = createAgent({
      model: new ChatOpenAI({ model: "fake", apiKey: "test", configuration: { baseURL: server.url }, maxRetries: 0 }),
      tools: [],
      middleware: noOpMiddlewares,
    });
    const rows: Row[] = [];
    let history: BaseMessage[] = [];
    let windowStart = performance.now();
    let lastMark = 0;
    for (let t = 1; t <= TURNS; t++) {
      history = (await agent.graph.invoke({ messages: [...history, new HumanMessage(`question ${t}: ${KB}`)] })).messages;
      if (!MARKS.includes(t)) continue;
      rows.push({ saver: "no checkpointer (baseline)", turns: t, messages: history.length, window: `${lastMark + 1}-${t}`, "ms/turn": (performance.now() - windowStart) / (t - lastMark) });
      lastMark = t;
      windowStart = performance.now();
    }
    return rows;
  } finally {
    await server.close();
  }
}

const bench: Bench = {
  name: "checkpoint-storage",
  description: `createAgent + 4 one-hook middlewares, ${TURNS} turns of ~1 KB question + ~1 KB answer`,
  async run() {
    // warm-up (module loading, JIT) on throwaway files, so the first window measures steady work
    for (const s of subjects) await runSubject(s, 5, []);
    const [ours, stock, baseline] = [await runSubject(subjects[0]!), await runSubject(subjects[1]!), await runBaseline()];
    const ratios: Row[] = ours.map((o, i) => {
      const s = stock[i]!;
      const r = (k: string) => Number(s[k]) / Number(o[k]);
      return { saver: "ratio stock/ours", turns: o.turns!, "db MB": r("db MB"), checkpoints: r("checkpoints"), window: o.window!, "ms/turn": r("ms/turn"), "in saver calls ms/turn": r("in saver calls ms/turn") };
    });
    return [...ours, ...stock, ...baseline, ...ratios];
  },
};

export default bench;
