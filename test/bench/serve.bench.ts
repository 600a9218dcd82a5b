// `deerflow serve` on Postgres against the in-process harness on SQLite (issue 26): runs per second
// and token→client latency, with 1 and 2 serve workers on one Postgres, as ratios to the
// in-process baseline, in one run. Every run is one scripted answer through the whole product
// path (launchRun → worker → lead agent → journal → delivery). Clients: the journal itself
// in-process; the real @langchain/langgraph-sdk over HTTP/SSE for serve. With 2 workers, threads
// are spread over both and each run is streamed from the OTHER worker (the cross-process path:
// journal + LISTEN/NOTIFY); with 1, the run is created and streamed in one request (runs/stream).
// Token→client latency: the scripted reply's first word is the time the model server built it;
// the client subtracts it from the time the first `messages` event carrying it arrives.
// BENCH_SERVE_RUNS (default 24) runs per side, BENCH_SERVE_CONCURRENCY (default 4) threads at once.
// Postgres: DEERFLOW_TEST_POSTGRES_URL, else scripts/ci/postgres-setup.sh start (idempotent).
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { startModelServer } from "../fixtures/modelServer.js";
import { postgresSchemaUrl, testPostgresUrl } from "../fixtures/testDatabase.js";
import { startServe, type ServeProcess } from "../integration/helpers/serveProcess.js";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { openRunSystem } from "../../extension/harness/runs/services.js";
import { launchRun } from "../../extension/harness/runs/launcher.js";
import { LocalSandboxProvider } from "../../extension/harness/sandbox/local.js";
import { parseHarnessConfig } from "../../extension/harness/config/harnessConfig.js";
import type { Bench, Row } from "./run.js";

const RUNS = Number(process.env.BENCH_SERVE_RUNS ?? 24);
const CONCURRENCY = Number(process.env.BENCH_SERVE_CONCURRENCY ?? 4);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const tmp = (p: string) => mkdtempSync(join(tmpdir(), `deerflow-bench-serve-${p}-`));

/** Runs `RUNS` runs over `CONCURRENCY` threads at once; returns runs/s and the latencies seen. */
async function drive(oneRun: (lane: number, i: number) => Promise<number>): Promise<{ rps: number; latency: number }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, lane) => {
      for (let i = next++; i < RUNS; i = next++) latencies.push(await oneRun(lane, i));
    }),
  );
  return { rps: RUNS / ((performance.now() - t0) / 1000), latency: median(latencies) };
}

const sentAt = (text: string): number | undefined => {
  const m = /\bt(\d+\.\d+)\b/.exec(text);
  return m ? Number(m[1]) : undefined;
};

const bench: Bench = {
  name: "serve on postgres",
  description: `${RUNS} one-answer runs per side, ${CONCURRENCY} threads at once: runs/s and median token→client ms; serve (SDK client, Postgres) with 1 and 2 workers vs the in-process harness on SQLite`,
  async run() {
    const model = await startModelServer({ script: () => ({ content: `t${(performance.timeOrigin + performance.now()).toFixed(3)} and then a few more words of answer` }) });
    const rows: Row[] = [];

    // The in-process harness on SQLite: launchRun, and the journal as the client.
    const workspace = tmp("ws");
    const store = openWorkspaceStore({ dataDir: tmp("data"), workspaceFolder: workspace });
    const manager = openRunSystem(store);
    const config = parseHarnessConfig({}, "bench");
    const sandbox = { provider: new LocalSandboxProvider({ workspaceFolder: workspace }), kind: "local" as const, allowHostCommands: false };
    const local = await drive(async (lane, i) => {
      const threadId = `00000000-0000-4000-8000-${String(lane).padStart(12, "0")}`;
      let latency = NaN;
      const launched = launchRun(
        { workspaceFolder: store.workspaceFolder, threads: store.threads, checkpointer: store.checkpointer, blobs: store.blobs, manager, config, sandbox: () => sandbox },
        { threadId, createThread: true, prompt: `question ${i}`, model: "scripted", baseURL: model.url },
        {
          onAdmitted: (run) => {
            const stop = manager.journal.subscribe(threadId, manager.journal.events.lastSeq(threadId), (e) => {
              if (e.run_id !== run.run_id || e.event !== "messages" || !Number.isNaN(latency)) return;
              const at = sentAt(JSON.stringify(e.data));
              if (at !== undefined) {
                latency = performance.timeOrigin + performance.now() - at;
                stop();
              }
            });
          },
        },
      );
      await launched.done;
      return latency;
    });
    store.close();
    rows.push({ side: "in-process harness, SQLite", workers: 1, "runs/s": local.rps, "token→client ms": local.latency, "runs/s ratio": 1, "latency ratio": 1 });

    // serve on Postgres, 1 and 2 workers, each on a schema of its own.
    const base = testPostgresUrl() ?? execFileSync("bash", ["scripts/ci/postgres-setup.sh", "start"], { encoding: "utf8" }).trim().split("\n").at(-1)!;
    for (const workers of [1, 2]) {
      const database = postgresSchemaUrl(base, `bench-serve-${workers}-${Date.now()}`);
      const shared = tmp("ws");
      const servers: ServeProcess[] = await Promise.all(
        Array.from({ length: workers }, () =>
          startServe(["--workspace", `w=${shared}`, "--data-dir", tmp("data"), "--database", database, "--model", "scripted", "--base-url", model.url, "--sandbox", "local"]),
        ),
      );
      try {
        const clients: Client[] = servers.map((s) => s.client());
        const threads = await Promise.all(Array.from({ length: CONCURRENCY }, (_, lane) => clients[lane % workers]!.threads.create()));
        const r = await drive(async (lane, i) => {
          // Admitted (and executed) by one worker, streamed from the other when there are two.
          const runner = clients[lane % workers]!;
          const viewer = clients[(lane + 1) % workers]!;
          const threadId = threads[lane]!.thread_id;
          const input = { messages: [{ role: "user", content: `question ${i}` }] };
          // One worker: create and stream in one request, as a UI does. Two: the other worker
          // joins the run once it is created (its replay covers what came before the join).
          const parts =
            workers === 1
              ? runner.runs.stream(threadId, "lead_agent", { input })
              : viewer.runs.joinStream(threadId, (await runner.runs.create(threadId, "lead_agent", { input })).run_id);
          let latency = NaN;
          for await (const part of parts) {
            if (part.event === "messages" && Number.isNaN(latency)) {
              const at = sentAt(JSON.stringify(part.data));
              if (at !== undefined) latency = performance.timeOrigin + performance.now() - at;
            }
          }
          return latency;
        });
        rows.push({
          side: `deerflow serve, Postgres`,
          workers,
          "runs/s": r.rps,
          "token→client ms": r.latency,
          "runs/s ratio": r.rps / local.rps,
          "latency ratio": r.latency / local.latency,
        });
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
    await model.close();
    return rows;
  },
};
export default bench;
