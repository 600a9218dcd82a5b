/**
 * The one place a run's end is decided and recorded (DeerFlow worker `finally` + manager
 * `_finish`): the conditional status move, the `run.delivery` receipt (exactly once per run, on
 * every path: success, error, cancel, timeout, recovery), the `end` event, `ended_at`, and the
 * lease (cleared by the status move) — all in ONE transaction, whose events reach subscribers
 * only after it commits (Journal.transaction).
 *
 * Every ending goes through `endRun`: the worker's own result, a refusal, a crash outside the
 * turn, a cancel of a run no worker holds, crash recovery and shutdown. A new entry point ends
 * runs by calling it, never by writing status and events itself.
 */
import type { FinalRunStatus, RunStatus } from "../../protocol/events.js";
import { FINAL_STATUSES } from "../store/runs.js";
import type { RunStore } from "../store/runs.js";
import type { Journal } from "./journal.js";
import { endEvent } from "./runTurn.js";
import { emptyFacts } from "./delivery.js";
import type { DeliveryReceipt } from "./delivery.js";
import { changedFiles, type FileChangeStore } from "../store/fileChanges.js";
import { closeOpenTasks } from "../subagents/runTracker.js";
import { threadUsage } from "./usage.js";

export interface EndRequest {
  runId: string;
  /** Statuses the run may leave; an already-final status is kept (a cancel that got there first wins). */
  from: readonly RunStatus[];
  status: FinalRunStatus;
  error?: string | null;
  usage?: Record<string, unknown> | null;
  /** Extra `end` fields (stop_reason, error_code), kept only when the run ends with `status`. */
  extra?: Record<string, unknown>;
  /** The run's receipt; without one (no worker saw the run end), the empty facts. */
  receipt?: DeliveryReceipt;
}

export interface Ended {
  status: FinalRunStatus;
  error?: string;
  /** This call recorded the end (false: it was recorded before, or the run is still active). */
  recorded: boolean;
}

const isFinal = (s: string): s is FinalRunStatus => (FINAL_STATUSES as readonly string[]).includes(s);

export function endRun(s: { runs: RunStore; journal: Journal; changes?: FileChangeStore | undefined }, req: EndRequest): Ended | undefined {
  return s.journal.transaction(
    (fn) => s.runs.transaction(fn),
    (): Ended | undefined => {
      const moved = s.runs.finish(req.runId, req.from, req.status, { error: req.error ?? null, usage: req.usage ?? null });
      const cur = s.runs.get(req.runId);
      if (!cur || !isFinal(cur.status)) return undefined; // still active under another status: not ours to end
      const error = cur.error ?? req.error ?? undefined;
      const ended: Ended = { status: cur.status, ...(error ? { error } : {}), recorded: false };
      if (cur.ended_at !== null) return ended;
      const events = s.journal.events.list(cur.thread_id, { runId: cur.run_id });
      // Subagents its process left running (it died mid-task: recovery, shutdown) end with the run.
      for (const data of closeOpenTasks(events, cur.status, error)) s.journal.append({ run_id: cur.run_id, thread_id: cur.thread_id, event: "custom", data });
      if (!events.some(isReceipt)) {
        s.journal.append({ run_id: cur.run_id, thread_id: cur.thread_id, event: "custom", data: req.receipt ?? { type: "run.delivery", ...emptyFacts() } });
      }
      const extra: Record<string, unknown> = moved || cur.status === req.status ? { ...req.extra } : {};
      // Whatever the status, and whoever ends the run (recovery too): the files its tools changed,
      // as recorded (the worker re-reads them first; changes/tracker.ts), for "Changed files (n)".
      if (s.changes) extra.changed_files = changedFiles(s.changes, cur.run_id);
      // The thread's usage with this run's (issue 15): a panel shows the total without summing itself.
      const thread = threadUsage(s.runs.listByThread(cur.thread_id));
      if (thread) extra.thread_usage = thread;
      s.journal.append(endEvent(cur.thread_id, cur.run_id, { status: cur.status, error: cur.error ?? req.error ?? null, usage: cur.usage ?? req.usage ?? null }, extra));
      s.runs.markEnded(cur.run_id);
      return { ...ended, recorded: true };
    },
  );
}

function isReceipt(e: { event: string; data: unknown }): boolean {
  return e.event === "custom" && (e.data as { type?: unknown } | null)?.type === "run.delivery";
}
