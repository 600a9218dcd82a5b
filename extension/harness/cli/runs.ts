/** `deerflow events`, `deerflow runs`, `deerflow cancel`: the journal and the run records. */
import { parse, requireString, workspaceArg, writeJsonLine, UsageError } from "./args.js";
import { openWorkspaceStore, defaultDataDir } from "../store/db.js";
import { openRunSystem } from "../runs/services.js";
import { validateThreadId } from "../threads/threadDirs.js";
import { eventLine } from "./run.js";
import type { RunRecord } from "../store/runs.js";

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

function threadArg(v: unknown, command: string): string {
  const id = requireString(v, "--thread ID", command);
  try {
    return validateThreadId(id);
  } catch (err) {
    throw new UsageError(`deerflow ${command}: ${(err as Error).message}`);
  }
}

function open(v: { workspace?: string; "data-dir"?: string }, command: string) {
  const workspace = workspaceArg(v.workspace, command);
  const store = openWorkspaceStore({ dataDir: v["data-dir"] ?? defaultDataDir(), workspaceFolder: workspace });
  const manager = openRunSystem(store);
  // Every harness start settles runs whose owner died: nothing is left `running` forever.
  manager.recover();
  return { store, manager };
}

export function runLine(r: RunRecord): Record<string, unknown> {
  return {
    run_id: r.run_id,
    thread_id: r.thread_id,
    status: r.status,
    model: r.model,
    multitask_strategy: r.multitask_strategy,
    idempotency_key: r.idempotency_key,
    created_at: iso(r.created_at),
    started_at: iso(r.started_at),
    ended_at: iso(r.ended_at),
    error: r.error,
    ...(r.usage ? { usage: r.usage } : {}),
  };
}

export function eventsCommand(argv: string[]): number {
  const v = parse(argv, { workspace: { type: "string" }, thread: { type: "string" }, after: { type: "string" }, "data-dir": { type: "string" } }, "events");
  const threadId = threadArg(v.thread, "events");
  const after = v.after === undefined ? 0 : Number(v.after);
  if (!Number.isInteger(after) || after < 0) throw new UsageError("deerflow events: --after takes a sequence number (an integer >= 0)");
  const { store, manager } = open(v, "events");
  try {
    for (const e of manager.journal.events.list(threadId, { afterSeq: after })) writeJsonLine(eventLine(e));
    return 0;
  } finally {
    store.close();
  }
}

export function runsCommand(argv: string[]): number {
  const v = parse(argv, { workspace: { type: "string" }, thread: { type: "string" }, "data-dir": { type: "string" } }, "runs");
  const threadId = threadArg(v.thread, "runs");
  const { store, manager } = open(v, "runs");
  try {
    for (const r of manager.runs.listByThread(threadId)) writeJsonLine(runLine(r));
    return 0;
  } finally {
    store.close();
  }
}

/** Exit 0 when the run is (now or already) cancelled, 1 when it had already finished or is unknown. */
export async function cancelCommand(argv: string[]): Promise<number> {
  const v = parse(argv, { workspace: { type: "string" }, run: { type: "string" }, wait: { type: "boolean" }, "data-dir": { type: "string" } }, "cancel");
  const runId = requireString(v.run, "--run ID", "cancel");
  const { store, manager } = open(v, "cancel");
  try {
    const { outcome, run } = manager.cancel(runId);
    // By default wait until the run has really stopped (its `end` is journaled), so that a script
    // that cancels and then starts a new run on the thread does not race the old one.
    const settled = run && outcome === "cancelled" && v.wait !== false ? await manager.waitForEnd(run) : run;
    writeJsonLine({ run_id: runId, outcome, ...(settled ? { status: settled.status, thread_id: settled.thread_id } : {}) });
    return outcome === "cancelled" ? 0 : 1;
  } finally {
    store.close();
  }
}
