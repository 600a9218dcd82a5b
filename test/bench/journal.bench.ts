// The run journal: (1) event latency from the model server writing a token to a live journal
// subscriber receiving it, through the whole harness (CLI-equivalent in-process: startRun → worker
// → lead agent → journal), against a bare ChatOpenAI stream reading the same server in the same
// process (the baseline); (2) journal write throughput against plain INSERTs into the same schema
// shape without the seq subquery (the baseline).
// A tiny SSE server stamps each token with performance.now() when it writes it: same process, same
// clock, so the difference is the delivery latency.
import { defaultPolicy } from "../../extension/harness/approvals/policy.js";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatOpenAI } from "@langchain/openai";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { openRunSystem } from "../../extension/harness/runs/services.js";
import { startRun } from "../../extension/harness/runs/gateway.js";
import { executeRun } from "../../extension/harness/runs/worker.js";
import { LocalSandboxProvider } from "../../extension/harness/sandbox/local.js";
import { parseHarnessConfig } from "../../extension/harness/config/harnessConfig.js";
import type { Bench, Row } from "./run.js";

const TOKENS = Number(process.env.BENCH_JOURNAL_TOKENS ?? 400);
const WRITES = Number(process.env.BENCH_JOURNAL_WRITES ?? 20_000);

/** An OpenAI-compatible SSE endpoint whose every token is `<now>` at the moment it is written. */
async function stampingServer(tokens: number) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const base = { id: "c", object: "chat.completion.chunk", created: 0, model: "m" };
      let i = 0;
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n`);
      const send = () => {
        if (i < tokens) {
          i++;
          const delta = { content: `${performance.now().toFixed(3)} ` };
          res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
          // One token per macrotask, as a real provider's chunks arrive.
          setImmediate(send);
          return;
        }
        res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
        res.end("data: [DONE]\n\n");
      };
      send();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function latencies(chunks: string[], arrivals: number[]): number[] {
  const out: number[] = [];
  chunks.forEach((c, i) => {
    for (const t of c.trim().split(/\s+/).filter(Boolean)) out.push(arrivals[i]! - Number(t));
  });
  return out;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function baselineLatency(url: string): Promise<number[]> {
  const model = new ChatOpenAI({ model: "m", apiKey: "x", configuration: { baseURL: url }, maxRetries: 0, streamUsage: false });
  const chunks: string[] = [];
  const arrivals: number[] = [];
  for await (const c of await model.stream("go")) {
    if (typeof c.content === "string" && c.content) {
      arrivals.push(performance.now());
      chunks.push(c.content);
    }
  }
  return latencies(chunks, arrivals);
}

async function harnessLatency(url: string): Promise<{ lat: number[]; events: number }> {
  const workspace = mkdtempSync(join(tmpdir(), "deerflow-bench-ws-"));
  const store = openWorkspaceStore({ dataDir: mkdtempSync(join(tmpdir(), "deerflow-bench-data-")), workspaceFolder: workspace });
  const manager = openRunSystem(store);
  store.threads.create({ threadId: "bench", workspaceFolder: store.workspaceFolder });
  const chunks: string[] = [];
  const arrivals: number[] = [];
  let events = 0;
  const stop = manager.journal.subscribe("bench", 0, (e) => {
    events++;
    const d = e.data as Array<{ type?: string; content?: string }>;
    if (e.event === "messages" && d[0]?.type === "ai" && d[0].content) {
      arrivals.push(performance.now());
      chunks.push(d[0].content);
    }
  });
  const { admission, context } = startRun(
    { workspaceFolder: store.workspaceFolder, threads: store.threads, manager, config: parseHarnessConfig({}, "bench"), allowHostCommands: false, approvalPolicy: defaultPolicy("local") },
    { threadId: "bench", prompt: "go", baseURL: url, model: "m" },
  );
  const result = await executeRun(
    { manager, checkpointer: store.checkpointer, blobs: store.blobs, sandboxProvider: new LocalSandboxProvider({ workspaceFolder: workspace }), sandboxKind: "local" },
    admission,
    context,
  );
  stop();
  store.close();
  if (result.status !== "success") throw new Error(`the benchmark run ended ${result.status}: ${result.error ?? ""}`);
  return { lat: latencies(chunks, arrivals), events };
}

function throughput(): Row[] {
  const workspace = mkdtempSync(join(tmpdir(), "deerflow-bench-ws-"));
  const store = openWorkspaceStore({ dataDir: mkdtempSync(join(tmpdir(), "deerflow-bench-data-")), workspaceFolder: workspace });
  const manager = openRunSystem(store);
  const payload = [{ type: "ai" as const, id: "run-abc", content: "token ", node: "model_request" }];
  // Baseline: the same rows through a plain prepared INSERT with the seq computed in JS.
  store.db.exec("CREATE TABLE plain_events (thread_id TEXT, seq INTEGER, run_id TEXT, event TEXT, data TEXT, created_at INTEGER, PRIMARY KEY (thread_id, seq)) WITHOUT ROWID");
  const ins = store.db.prepare("INSERT INTO plain_events VALUES (?, ?, ?, ?, ?, ?)");
  let plainSeq = 0;
  const journalRound = (thread: string) => {
    const t0 = performance.now();
    for (let i = 0; i < WRITES; i++) manager.journal.append({ run_id: "r", thread_id: thread, event: "messages", data: payload });
    return performance.now() - t0;
  };
  const plainRound = () => {
    const t0 = performance.now();
    for (let i = 0; i < WRITES; i++) ins.run("t", ++plainSeq, "r", "messages", JSON.stringify(payload), Date.now());
    return performance.now() - t0;
  };
  // Interleaved rounds, best of three each: the first round of either pays for warm-up.
  const journal: number[] = [];
  const plain: number[] = [];
  for (let round = 0; round < 3; round++) {
    plain.push(plainRound());
    journal.push(journalRound(`t${round}`));
  }
  store.close();
  const journalMs = Math.min(...journal);
  const plainMs = Math.min(...plain);
  return [
    { measure: "journal append (stored, then fanned out)", events: WRITES, "events/s": Math.round(WRITES / (journalMs / 1000)), "µs/event": (journalMs * 1000) / WRITES, ratio: journalMs / plainMs },
    { measure: "baseline: plain INSERT, seq from JS", events: WRITES, "events/s": Math.round(WRITES / (plainMs / 1000)), "µs/event": (plainMs * 1000) / WRITES, ratio: 1 },
  ];
}

const bench: Bench = {
  name: "journal",
  description: `token → live subscriber latency (${TOKENS} tokens) and journal write throughput (${WRITES} events)`,
  async run() {
    const server = await stampingServer(TOKENS);
    try {
      await baselineLatency(server.url); // warm-up: module loading, JIT
      const base = await baselineLatency(server.url);
      const harness = await harnessLatency(server.url);
      const rows: Row[] = [
        { measure: "baseline: bare ChatOpenAI stream", tokens: base.length, "p50 ms": pct(base, 50), "p99 ms": pct(base, 99), "p50 ratio": 1, "p99 ratio": 1 },
        {
          measure: "harness: model → agent → journal (SQLite) → subscriber",
          tokens: harness.lat.length,
          "p50 ms": pct(harness.lat, 50),
          "p99 ms": pct(harness.lat, 99),
          "p50 ratio": pct(harness.lat, 50) / pct(base, 50),
          "p99 ratio": pct(harness.lat, 99) / pct(base, 99),
        },
      ];
      return [...rows, ...throughput()];
    } finally {
      await server.close();
    }
  },
};
export default bench;
