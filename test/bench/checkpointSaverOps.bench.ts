// The saver alone, without the agent around it: per turn, the calls createAgent makes with four
// one-hook middlewares (7 put, 7 putWrites, 1 getTuple) on a thread that grows by a ~1 KB
// question and a ~1 KB answer per turn. CPU time of the process per turn (robust on a shared
// machine, where wall time inside the agent bench also counts other work interleaved with the
// saver's awaits). Ours against the stock SqliteSaver, both WAL + synchronous NORMAL.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { openDatabase } from "../../extension/harness/store/db.js";
import { LinearSqliteSaver } from "../../extension/harness/store/checkpointer.js";
import type { Bench, Row } from "./run.js";

const TURNS = Number(process.env.BENCH_CHECKPOINT_TURNS ?? 200);
const MARKS = [10, 50, 200].filter((m) => m <= TURNS);
const KB = "lorem ipsum dolor sit amet ".repeat(38).slice(0, 1000);
const PUTS_PER_TURN = 7;

async function runSaver(name: string, saver: BaseCheckpointSaver, file: string, pragma: (sql: string) => unknown): Promise<Row[]> {
  const messages: BaseMessage[] = [];
  const rows: Row[] = [];
  let config: RunnableConfig = { configurable: { thread_id: "ops" } };
  let n = 0;
  let cpuMs = 0;
  let lastMark = 0;
  for (let turn = 1; turn <= TURNS; turn++) {
    messages.push(new HumanMessage({ id: `h${turn}`, content: `question ${turn}: ${KB}` }), new AIMessage({ id: `a${turn}`, content: `answer ${turn}: ${KB}` }));
    const state = [...messages];
    const c0 = process.cpuUsage();
    await saver.getTuple(config);
    for (let k = 0; k < PUTS_PER_TURN; k++) {
      n++;
      config = await saver.put(
        config,
        {
          v: 4,
          id: `1f0c0000-0000-6000-8000-${String(n).padStart(12, "0")}`,
          ts: new Date().toISOString(),
          channel_values: { messages: state, jumpTo: undefined, [`branch:to:node${k}`]: null, todos: ["plan", "write"] },
          channel_versions: { messages: 2 * turn, jumpTo: n, [`branch:to:node${k}`]: n, todos: 1 },
          versions_seen: { model_request: { messages: 2 * turn }, tools: { "branch:to:tools": n } },
        },
        { source: "loop", step: n, parents: {} },
        { [`branch:to:node${k}`]: n },
      );
      await saver.putWrites(config, [[`branch:to:node${k + 1}`, null]], `task-${n}`, `~pull, node${k}`);
    }
    const cpu = process.cpuUsage(c0);
    cpuMs += (cpu.user + cpu.system) / 1000;
    if (!MARKS.includes(turn)) continue;
    pragma("wal_checkpoint(TRUNCATE)");
    rows.push({ saver: name, turns: turn, "db MB": statSync(file).size / 1e6, window: `${lastMark + 1}-${turn}`, "cpu ms/turn": cpuMs / (turn - lastMark) });
    cpuMs = 0;
    lastMark = turn;
  }
  return rows;
}

const bench: Bench = {
  name: "checkpoint-saver-ops",
  description: `saver calls of a 4-middleware createAgent turn (7 put, 7 putWrites, 1 getTuple), ${TURNS} turns of ~2 KB`,
  async run() {
    const dir = mkdtempSync(join(tmpdir(), "deerflow-bench-ops-"));
    try {
      const oursDb = openDatabase(join(dir, "ours.db"));
      const ours = await runSaver("ours (LinearSqliteSaver)", new LinearSqliteSaver(oursDb), join(dir, "ours.db"), (s) => oursDb.pragma(s));
      oursDb.close();
      const stockDb = new Database(join(dir, "stock.db"));
      stockDb.pragma("journal_mode = WAL");
      stockDb.pragma("synchronous = NORMAL");
      const stock = await runSaver("stock SqliteSaver", new SqliteSaver(stockDb), join(dir, "stock.db"), (s) => stockDb.pragma(s));
      stockDb.close();
      const ratios = ours.map((o, i) => ({
        saver: "ratio stock/ours",
        turns: o.turns!,
        "db MB": Number(stock[i]!["db MB"]) / Number(o["db MB"]),
        window: o.window!,
        "cpu ms/turn": Number(stock[i]!["cpu ms/turn"]) / Number(o["cpu ms/turn"]),
      }));
      return [...ours, ...stock, ...ratios];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
