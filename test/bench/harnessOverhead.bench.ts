// Harness overhead per turn: a full DeerFlow turn through the product's real path (startRun →
// worker → lead agent with the whole middleware chain and tools → journal and linear
// checkpointer in SQLite → delivery check) against a bare `createAgent` (no middleware, no tools,
// in-memory checkpointer) answering from the same scripted model server, in the same process.
// Both sides get WARMUP turns first, then turns are interleaved (bare, harness, bare, …) so drift
// on the machine hits both alike; medians are reported. Goal (issue 12): ≤ 1.1×.
// BENCH_OVERHEAD_TURNS changes the number of measured turns per side (default 40).
import { defaultPolicy } from "../../extension/harness/approvals/policy.js";
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
const WARMUP = 5;
const ANSWER = "Here is a short answer of about twenty words, streamed word by word like a real provider would send it.";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;

const bench: Bench = {
  name: "harness overhead",
  description: `ms per turn, ${TURNS} interleaved turns per side after ${WARMUP} warm-up turns: the full harness vs a bare createAgent, same model server`,
  async run() {
    const server = await startModelServer({ script: () => ({ content: ANSWER }) });
    try {
      // Bare createAgent: the floor any harness pays.
      const bare = createAgent({
        model: new ChatOpenAI({ model: "m", apiKey: "x", configuration: { baseURL: server.url }, maxRetries: 0, streamUsage: true }),
        tools: [],
        checkpointer: new MemorySaver(),
      });
      let bareTurn = 0;
      const bareOnce = async (): Promise<number> => {
        const t0 = performance.now();
        const stream = await bare.graph.stream(
          { messages: [new HumanMessage(`question ${bareTurn++}`)] },
          { configurable: { thread_id: "bare" }, streamMode: ["values", "updates", "messages"] },
        );
        for await (const _ of stream) void _;
        return performance.now() - t0;
      };

      const workspace = mkdtempSync(join(tmpdir(), "deerflow-bench-ws-"));
      const store = openWorkspaceStore({ dataDir: mkdtempSync(join(tmpdir(), "deerflow-bench-data-")), workspaceFolder: workspace });
      const manager = openRunSystem(store);
      store.threads.create({ threadId: "bench", workspaceFolder: store.workspaceFolder });
      const services = { workspaceFolder: store.workspaceFolder, threads: store.threads, manager, config: parseHarnessConfig({}, "bench"), allowHostCommands: false, approvalPolicy: defaultPolicy("local") };
      const worker = { manager, checkpointer: store.checkpointer, blobs: store.blobs, sandboxProvider: new LocalSandboxProvider({ workspaceFolder: workspace }), sandboxKind: "local" as const };
      let harnessTurn = 0;
      const harnessOnce = async (): Promise<number> => {
        const t0 = performance.now();
        const { admission, context } = startRun(services, { threadId: "bench", prompt: `question ${harnessTurn}`, baseURL: server.url, model: "m" });
        const r = await executeRun(worker, admission, context);
        const ms = performance.now() - t0;
        if (r.status !== "success") throw new Error(`harness turn ${harnessTurn} ended ${r.status}: ${r.error ?? ""}`);
        harnessTurn++;
        return ms;
      };

      try {
        for (let i = 0; i < WARMUP; i++) {
          await bareOnce();
          await harnessOnce();
        }
        const bareMs: number[] = [];
        const harnessMs: number[] = [];
        for (let i = 0; i < TURNS; i++) {
          bareMs.push(await bareOnce());
          harnessMs.push(await harnessOnce());
        }
        const b = median(bareMs);
        const h = median(harnessMs);
        const firstHalf = median(harnessMs.slice(0, TURNS / 2));
        const secondHalf = median(harnessMs.slice(TURNS / 2));
        const rows: Row[] = [
          { variant: "bare createAgent + MemorySaver (baseline)", turns: TURNS, "median ms": b, "p90 ms": p90(bareMs), ratio: 1 },
          { variant: "harness turn via startRun (chain + SQLite + journal)", turns: TURNS, "median ms": h, "p90 ms": p90(harnessMs), ratio: h / b, goal: "≤ 1.1×" },
          { variant: "harness: 2nd half / 1st half of turns", turns: TURNS, "median ms": secondHalf, ratio: secondHalf / firstHalf },
        ];
        return rows;
      } finally {
        store.close();
      }
    } finally {
      await server.close();
    }
  },
};
export default bench;
