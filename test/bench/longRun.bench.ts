// One long run (issue 20 item 3): a single run of LONG_TURNS tool turns through the product's real
// path (startRun → worker → the whole chain → journal and linear checkpointer in SQLite), against the
// scripted model server. Each turn calls a different tool on a different path (read_file, ls, grep,
// glob in turn; one tool 50 times in a row would be loop detection's to stop).
// Per turn: the time from one model request to the next (the harness's own work for the turn plus
// the scripted reply; the same reply every turn), and what the turn added to the database's
// checkpoint tables and to the journal, read at each request. Goals: the last 50 turns within
// 1.2× the first 50 in time; bytes per turn flat.
// BENCH_LONG_TURNS changes the number of tool turns (default 300).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultPolicy } from "../../extension/harness/approvals/policy.js";
import { startModelServer, type RecordedRequest, type ScriptedReply } from "../fixtures/modelServer.js";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { openRunSystem } from "../../extension/harness/runs/services.js";
import { startRun } from "../../extension/harness/runs/gateway.js";
import { executeRun } from "../../extension/harness/runs/worker.js";
import { LocalSandboxProvider } from "../../extension/harness/sandbox/local.js";
import { parseHarnessConfig } from "../../extension/harness/config/harnessConfig.js";
import type { Bench, Row } from "./run.js";

const TURNS = Number(process.env.BENCH_LONG_TURNS ?? 300);
const WS = "/mnt/user-data/workspace";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const bench: Bench = {
  name: "long run",
  description: `one run of ${TURNS} tool turns through startRun and the real chain: per-turn time and bytes, first 50 turns vs last 50`,
  async run() {
    const workspace = mkdtempSync(join(tmpdir(), "deerflow-bench-long-ws-"));
    mkdirSync(join(workspace, "src"));
    for (let i = 0; i < 50; i++) writeFileSync(join(workspace, "src", `f${i}.ts`), `export const v${i} = ${i};\n// marker ${i}\n`.repeat(20));
    const store = openWorkspaceStore({ dataDir: mkdtempSync(join(tmpdir(), "deerflow-bench-long-data-")), workspaceFolder: workspace });
    const manager = openRunSystem(store);
    const bytes = store.db.prepare(
      `SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(channel_refs) + LENGTH(metadata)), 0) FROM checkpoints)
            + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM checkpoint_messages)
            + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM checkpoint_values)
            + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM checkpoint_writes) AS checkpoints,
              (SELECT COALESCE(SUM(LENGTH(data)), 0) FROM events) AS journal`,
    );
    const at: Array<{ t: number; checkpoints: number; journal: number }> = [];
    const call = (n: number) => {
      const i = n % 50;
      switch (n % 4) {
        case 0:
          return { name: "read_file", args: { description: `read ${n}`, path: `${WS}/src/f${i}.ts` } };
        case 1:
          return { name: "ls", args: { description: `ls ${n}`, path: `${WS}/src` } };
        case 2:
          return { name: "grep", args: { description: `grep ${n}`, pattern: `marker ${i}$`, path: `${WS}/src` } };
        default:
          return { name: "glob", args: { description: `glob ${n}`, pattern: `**/f${i}.ts`, path: WS } };
      }
    };
    const server = await startModelServer({
      script: (req: RecordedRequest): ScriptedReply => {
        const row = bytes.get() as { checkpoints: number; journal: number };
        at.push({ t: performance.now(), ...row });
        const n = (req.body?.messages ?? []).filter((m) => m.role === "tool").length;
        return n < TURNS ? { content: `Step ${n}: looking at the next file.`, toolCalls: [call(n)] } : { content: "Done." };
      },
    });
    try {
      // A run can use its whole budget here: the default (200) would cap it.
      const config = parseHarnessConfig({ max_turns: TURNS + 10 }, "bench");
      const services = { workspaceFolder: store.workspaceFolder, threads: store.threads, manager, config, allowHostCommands: false, approvalPolicy: defaultPolicy("local") };
      const worker = { manager, checkpointer: store.checkpointer, blobs: store.blobs, sandboxProvider: new LocalSandboxProvider({ workspaceFolder: workspace }), sandboxKind: "local" as const };
      store.threads.create({ threadId: "long", workspaceFolder: store.workspaceFolder });
      const { admission, context } = startRun(services, { threadId: "long", prompt: "Work through the files.", baseURL: server.url, model: "m" });
      const r = await executeRun(worker, admission, context);
      if (r.status !== "success") throw new Error(`the long run ended ${r.status}: ${r.error ?? ""}`);
      // Turn k: from request k to request k+1.
      const turns = at.slice(1).map((x, k) => ({ ms: x.t - at[k]!.t, checkpoints: x.checkpoints - at[k]!.checkpoints, journal: x.journal - at[k]!.journal }));
      const first = turns.slice(0, 50);
      const last = turns.slice(-50);
      const m = (xs: typeof turns, k: "ms" | "checkpoints" | "journal") => median(xs.map((x) => x[k]));
      const rows: Row[] = [
        { turns: `first 50`, "median ms": m(first, "ms"), "checkpoint bytes/turn": m(first, "checkpoints"), "journal bytes/turn": m(first, "journal") },
        { turns: `last 50 (of ${turns.length})`, "median ms": m(last, "ms"), "checkpoint bytes/turn": m(last, "checkpoints"), "journal bytes/turn": m(last, "journal") },
        {
          turns: "last / first",
          "median ms": m(last, "ms") / m(first, "ms"),
          "checkpoint bytes/turn": m(last, "checkpoints") / m(first, "checkpoints"),
          "journal bytes/turn": m(last, "journal") / m(first, "journal"),
          goal: "time ≤ 1.2×, bytes flat",
        },
      ];
      return rows;
    } finally {
      store.close();
      await server.close();
    }
  },
};
export default bench;
