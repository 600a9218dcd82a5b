// Harness overhead per turn (issue 20): a full DeerFlow turn through the product's real path
// (startRun → worker → lead agent with the whole middleware chain and tools → journal and linear
// checkpointer in SQLite → delivery check) against two bare `createAgent`s (no middleware, no
// tools) answering from the same scripted model server, in the same process:
//   - bare createAgent + MemorySaver: the floor any harness pays;
//   - bare createAgent + LangGraph's stock SqliteSaver: what a user would pick to keep threads.
// At three thread lengths (1, 50 and 200 turns already in the thread): each side's thread is filled
// to the length first, then the measured turns are interleaved (memory, sqlite, harness, memory, …)
// so drift on the machine hits all alike; medians are reported. Warm-up turns come first.
// Goals: ≤ 1.5× the in-memory agent and ≤ 1.0× the stock SQLite agent at every length.
// Graph steps per turn are counted from checkpoint writes: one `put` per node step, plus two per
// invocation (LangGraph checkpoints the input, then the step that applies it).
// BENCH_OVERHEAD_TURNS: measured turns per side and length (default 20);
// BENCH_OVERHEAD_LENGTHS: comma-separated thread lengths (default 1,50,200).
import { defaultPolicy } from "../../extension/harness/approvals/policy.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createAgent, HumanMessage } from "langchain";
import { MemorySaver } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ChatOpenAI } from "@langchain/openai";
import { startModelServer, type RecordedRequest, type ScriptedReply } from "../fixtures/modelServer.js";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { openRunSystem } from "../../extension/harness/runs/services.js";
import { startRun } from "../../extension/harness/runs/gateway.js";
import { executeRun } from "../../extension/harness/runs/worker.js";
import { LocalSandboxProvider } from "../../extension/harness/sandbox/local.js";
import { parseHarnessConfig } from "../../extension/harness/config/harnessConfig.js";
import type { Bench, Row } from "./run.js";

const TURNS = Number(process.env.BENCH_OVERHEAD_TURNS ?? 20);
const LENGTHS = (process.env.BENCH_OVERHEAD_LENGTHS ?? "1,50,200").split(",").map(Number);
const WARMUP = 5;
const ANSWER = "Here is a short answer of about twenty words, streamed word by word like a real provider would send it.";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Counts `put` calls: one per node step, plus two per invocation (the input, the step applying it). */
function countPuts<T extends BaseCheckpointSaver>(saver: T): { saver: T; puts: () => number } {
  let n = 0;
  const put = saver.put.bind(saver);
  saver.put = (config, checkpoint, metadata, versions) => {
    n++;
    return put(config, checkpoint, metadata, versions);
  };
  return { saver, puts: () => n };
}

type Side = { name: string; turn: (thread: string) => Promise<number>; puts: () => number };

const bench: Bench = {
  name: "harness overhead",
  description: `ms per answer turn at thread lengths ${LENGTHS.join(", ")}: ${TURNS} interleaved turns per side after ${WARMUP} warm-up turns; the full harness vs bare createAgent on MemorySaver and on the stock SqliteSaver`,
  async run() {
    const toolResults = (req: RecordedRequest) => (req.body?.messages ?? []).filter((m) => m.role === "tool").length;
    // An answer, except for a prompt that asks for a tool turn (the steps rows below).
    const server = await startModelServer({
      script: (req): ScriptedReply => {
        const last = JSON.stringify(req.body?.messages?.at(-1)?.content ?? "");
        if (last.includes("use a tool") && toolResults(req) === 0) return { toolCalls: [{ name: "ls", args: { description: "list", path: "/mnt/user-data/workspace" } }] };
        return { content: ANSWER };
      },
    });
    const model = () => new ChatOpenAI({ model: "m", apiKey: "x", configuration: { baseURL: server.url }, maxRetries: 0, streamUsage: true });
    const bareSide = (name: string, saver: BaseCheckpointSaver): Side => {
      const counted = countPuts(saver);
      const agent = createAgent({ model: model(), tools: [], checkpointer: counted.saver });
      let n = 0;
      return {
        name,
        puts: counted.puts,
        turn: async (thread) => {
          const t0 = performance.now();
          const stream = await agent.graph.stream({ messages: [new HumanMessage(`question ${n++}`)] }, { configurable: { thread_id: thread }, streamMode: ["values", "updates", "messages"] });
          for await (const _ of stream) void _;
          return performance.now() - t0;
        },
      };
    };

    const memory = bareSide("bare createAgent + MemorySaver", new MemorySaver());
    const sqliteDb = new Database(join(mkdtempSync(join(tmpdir(), "deerflow-bench-stock-")), "stock.db"));
    const stock = bareSide("bare createAgent + stock SqliteSaver", new SqliteSaver(sqliteDb));

    const workspace = mkdtempSync(join(tmpdir(), "deerflow-bench-ws-"));
    const store = openWorkspaceStore({ dataDir: mkdtempSync(join(tmpdir(), "deerflow-bench-data-")), workspaceFolder: workspace });
    const manager = openRunSystem(store);
    const counted = countPuts(store.checkpointer);
    const services = { workspaceFolder: store.workspaceFolder, threads: store.threads, manager, config: parseHarnessConfig({}, "bench"), allowHostCommands: false, approvalPolicy: defaultPolicy("local") };
    const worker = { manager, checkpointer: counted.saver, blobs: store.blobs, sandboxProvider: new LocalSandboxProvider({ workspaceFolder: workspace }), sandboxKind: "local" as const };
    let harnessTurn = 0;
    const harnessRun = async (thread: string, prompt: string): Promise<number> => {
      if (!store.threads.get(thread)) store.threads.create({ threadId: thread, workspaceFolder: store.workspaceFolder });
      const t0 = performance.now();
      const { admission, context } = startRun(services, { threadId: thread, prompt, baseURL: server.url, model: "m" });
      const r = await executeRun(worker, admission, context);
      const ms = performance.now() - t0;
      if (r.status !== "success") throw new Error(`harness turn ${harnessTurn} ended ${r.status}: ${r.error ?? ""}`);
      harnessTurn++;
      return ms;
    };
    const harness: Side = { name: "harness turn via startRun (chain + SQLite + journal)", puts: counted.puts, turn: (thread) => harnessRun(thread, `question ${harnessTurn}`) };
    const sides = [memory, stock, harness];

    try {
      for (let i = 0; i < WARMUP; i++) for (const s of sides) await s.turn("warmup");
      const rows: Row[] = [];
      for (const length of LENGTHS) {
        const thread = `len-${length}`;
        for (let i = 1; i < length; i++) for (const s of sides) await s.turn(thread);
        const ms = new Map<Side, number[]>(sides.map((s) => [s, []]));
        for (let i = 0; i < TURNS; i++) for (const s of sides) ms.get(s)!.push(await s.turn(thread));
        const mem = median(ms.get(memory)!);
        const sql = median(ms.get(stock)!);
        const h = median(ms.get(harness)!);
        rows.push(
          { length, variant: memory.name, "median ms": mem, ratio: 1 },
          { length, variant: stock.name, "median ms": sql, ratio: sql / mem },
          { length, variant: harness.name, "median ms": h, ratio: h / mem, "vs stock SQLite": h / sql, goal: "≤ 1.5× memory, ≤ 1.0× stock" },
        );
      }

      // Graph steps per turn: node steps, i.e. puts of one invocation minus the two for its input.
      const steps = async (side: Side, run: () => Promise<unknown>) => {
        const before = side.puts();
        await run();
        return side.puts() - before - 2;
      };
      rows.push(
        { length: "steps", variant: `${memory.name}: answer turn`, "graph steps": await steps(memory, () => memory.turn("steps")) },
        { length: "steps", variant: `${harness.name}: a one-answer run`, "graph steps": await steps(harness, () => harnessRun("steps", "hello")) },
        { length: "steps", variant: `${harness.name}: a run of one tool turn and the answer`, "graph steps": await steps(harness, () => harnessRun("steps", "use a tool, then answer")) },
      );
      return rows;
    } finally {
      store.close();
      sqliteDb.close();
      await server.close();
    }
  },
};
export default bench;
