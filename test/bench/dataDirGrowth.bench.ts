// The whole data directory through the product's real path (issue 12): startRun → worker → the
// lead agent with the full middleware chain and tools → journal, runs and linear checkpointer in
// SQLite → delivery check, for 10 / 50 / 200 turns of a ~2 KB answer from the scripted model
// server. Beside it, from the same run and the same replies, interleaved turn by turn: a bare
// `createAgent` on LangGraph's stock SqliteSaver (what storing a conversation costs without this
// harness's storage work), and the conversation's own bytes (what no storage can go below).
// Goal: ≤ 5 MB at 200 turns, and each 50-turn increment ≤ 1.1× the previous one.
// BENCH_STORAGE_TURNS changes the number of turns (default 200).
import { defaultPolicy } from "../../extension/harness/approvals/policy.js";
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createAgent, HumanMessage } from "langchain";
import { ChatOpenAI } from "@langchain/openai";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { startModelServer } from "../fixtures/modelServer.js";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { openRunSystem } from "../../extension/harness/runs/services.js";
import { startRun } from "../../extension/harness/runs/gateway.js";
import { executeRun } from "../../extension/harness/runs/worker.js";
import { LocalSandboxProvider } from "../../extension/harness/sandbox/local.js";
import { parseHarnessConfig } from "../../extension/harness/config/harnessConfig.js";
import type { Bench, Row } from "./run.js";

const TURNS = Number(process.env.BENCH_STORAGE_TURNS ?? 200);
const MARKS = [10, 50, 100, 150, 200].filter((m) => m <= TURNS);
const ANSWER = Array.from({ length: 330 }, (_, i) => `word${i}`).join(" ").slice(0, 2000);
const PROMPT = (i: number) => `Turn ${i}: please continue the analysis where we left off.`;

/** Bytes of every file under a folder (the database, its WAL and anything beside it). */
function folderBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, name.name);
    total += name.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return total;
}

const MB = (b: number) => b / 1e6;

const bench: Bench = {
  name: "data directory growth",
  description: `whole data directory over ${TURNS} turns of a ~2 KB answer through startRun and the real chain, beside a bare createAgent on the stock SqliteSaver`,
  async run() {
    const server = await startModelServer({ script: () => ({ content: ANSWER }) });
    try {
      const dataDir = mkdtempSync(join(tmpdir(), "deerflow-bench-growth-"));
      const workspace = mkdtempSync(join(tmpdir(), "deerflow-bench-growth-ws-"));
      const store = openWorkspaceStore({ dataDir, workspaceFolder: workspace });
      const manager = openRunSystem(store);
      store.threads.create({ threadId: "growth", workspaceFolder: store.workspaceFolder });
      const services = { workspaceFolder: store.workspaceFolder, threads: store.threads, manager, config: parseHarnessConfig({}, "bench"), allowHostCommands: false, approvalPolicy: defaultPolicy("local") };
      const worker = { manager, checkpointer: store.checkpointer, blobs: store.blobs, sandboxProvider: new LocalSandboxProvider({ workspaceFolder: workspace }), sandboxKind: "local" as const };

      const stockFile = join(mkdtempSync(join(tmpdir(), "deerflow-bench-stock-")), "stock.db");
      const stockDb = new Database(stockFile);
      stockDb.pragma("journal_mode = WAL");
      const stock = createAgent({
        model: new ChatOpenAI({ model: "m", apiKey: "x", configuration: { baseURL: server.url }, maxRetries: 0, streamUsage: true }),
        tools: [],
        checkpointer: new SqliteSaver(stockDb),
      });

      let content = 0;
      const rows: Row[] = [];
      let prev: { turns: number; ours: number } | undefined;
      let prevIncrement: number | undefined;
      for (let i = 1; i <= TURNS; i++) {
        const { admission, context } = startRun(services, { threadId: "growth", prompt: PROMPT(i), baseURL: server.url, model: "m" });
        const r = await executeRun(worker, admission, context);
        if (r.status !== "success") throw new Error(`turn ${i} ended ${r.status}: ${r.error ?? ""}`);
        const stream = await stock.graph.stream({ messages: [new HumanMessage(PROMPT(i))] }, { configurable: { thread_id: "stock" }, streamMode: ["values", "updates", "messages"] });
        for await (const _ of stream) void _;
        content += Buffer.byteLength(PROMPT(i)) + Buffer.byteLength(ANSWER);
        if (!MARKS.includes(i)) continue;
        // Fold the WAL into the files so both sides are measured as they would rest on disk.
        store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        stockDb.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        const ours = folderBytes(dataDir);
        const increment = prev ? (ours - prev.ours) / (i - prev.turns) : undefined;
        rows.push({
          turns: i,
          "ours: data dir MB": MB(ours),
          "stock SqliteSaver MB": MB(statSync(stockFile).size),
          "conversation MB": MB(content),
          "ours / conversation": ours / content,
          "KB per turn since last mark": increment === undefined ? "" : increment / 1e3,
          "increment vs previous": increment === undefined || prevIncrement === undefined ? "" : increment / prevIncrement,
        });
        if (increment !== undefined) prevIncrement = increment;
        prev = { turns: i, ours };
      }
      store.close();
      stockDb.close();
      return rows;
    } finally {
      await server.close();
    }
  },
};
export default bench;
