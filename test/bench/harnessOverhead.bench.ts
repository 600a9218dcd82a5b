// Harness overhead per turn: a full DeerFlow turn through the harness (startRun → worker → lead
// agent with the whole middleware chain and tools → journal and linear checkpointer in SQLite →
// delivery check) against a bare `createAgent` (no middleware, no tools, in-memory checkpointer)
// answering from the same scripted model server, in the same process. Same replies, same turns.
// BENCH_OVERHEAD_TURNS changes the number of turns (default 40).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgent, HumanMessage } from "langchain";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { startModelServer } from "../fixtures/modelServer.js";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { openRunSystem } from "../../extension/harness/runs/services.js";
import { startRun } from "../../extension/harness/runs/gateway.js";
import { executeRun } from "../../extension/harness/runs/worker.js";
import { LocalSandboxProvider } from "../../extension/harness/sandbox/local.js";
import { parseHarnessConfig } from "../../extension/harness/config/harnessConfig.js";
import type { Bench, Row } from "./run.js";

const TURNS = Number(process.env.BENCH_OVERHEAD_TURNS ?? 40);
const ANSWER = "Here is a short answer of about twenty words, streamed word by word like a real provider would send it.";

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, p50: s[Math.floor(s.length / 2)]!, p90: s[Math.floor(s.length * 0.9)]! };
};

const bench: Bench = {
  name: "harness overhead",
  description: `ms per turn over ${TURNS} turns: the full harness vs a bare createAgent, same model server`,
  async run() {
    const server = await startModelServer({ script: () => ({ content: ANSWER }) });
    try {
      // Bare createAgent: the floor any harness pays.
      const bare = createAgent({
        model: new ChatOpenAI({ model: "m", apiKey: "x", configuration: { baseURL: server.url }, maxRetries: 0, streamUsage: true }),
        tools: [],
        checkpointer: new MemorySaver(),
      });
      const bareMs: number[] = [];
      for (let i = 0; i < TURNS; i++) {
        const t0 = performance.now();
        const stream = await bare.graph.stream({ messages: [new HumanMessage(`question ${i}`)] }, { configurable: { thread_id: "bare" }, streamMode: ["values", "updates", "messages"] });
        for await (const _ of stream) void _;
        bareMs.push(performance.now() - t0);
      }

      const workspace = mkdtempSync(join(tmpdir(), "deerflow-bench-ws-"));
      const store = openWorkspaceStore({ dataDir: mkdtempSync(join(tmpdir(), "deerflow-bench-data-")), workspaceFolder: workspace });
      const manager = openRunSystem(store);
      store.threads.create({ threadId: "bench", workspaceFolder: store.workspaceFolder });
      const services = { workspaceFolder: store.workspaceFolder, threads: store.threads, manager, config: parseHarnessConfig({}, "bench"), allowHostCommands: false };
      const worker = { manager, checkpointer: store.checkpointer, blobs: store.blobs, sandboxProvider: new LocalSandboxProvider({ workspaceFolder: workspace }), sandboxKind: "local" as const };
      const harnessMs: number[] = [];
      for (let i = 0; i < TURNS; i++) {
        const t0 = performance.now();
        const { admission, context } = startRun(services, { threadId: "bench", prompt: `question ${i}`, baseURL: server.url, model: "m" });
        const r = await executeRun(worker, admission, context);
        harnessMs.push(performance.now() - t0);
        if (r.status !== "success") throw new Error(`turn ${i} ended ${r.status}: ${r.error ?? ""}`);
      }
      store.close();

      const b = stats(bareMs);
      const h = stats(harnessMs);
      const firstHalf = stats(harnessMs.slice(0, TURNS / 2)).mean;
      const secondHalf = stats(harnessMs.slice(TURNS / 2)).mean;
      const rows: Row[] = [
        { variant: "bare createAgent (baseline)", turns: TURNS, "mean ms": b.mean, "p50 ms": b.p50, "p90 ms": b.p90, ratio: 1 },
        { variant: "harness turn (chain + SQLite + journal)", turns: TURNS, "mean ms": h.mean, "p50 ms": h.p50, "p90 ms": h.p90, ratio: h.mean / b.mean },
        { variant: "harness: 2nd half / 1st half of turns", turns: TURNS, "mean ms": secondHalf, ratio: secondHalf / firstHalf },
      ];
      return rows;
    } finally {
      await server.close();
    }
  },
};
export default bench;
