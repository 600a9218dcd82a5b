/**
 * The lead run's view of its subagents, fed by the run's `custom` events (runs/runTurn.ts):
 *
 * - a task still open when the run stops (cancel, run timeout, error) is closed in the journal with
 *   `task_cancelled` / `task_failed`: the subagent was stopped with the run, but its own closing
 *   event may never reach the journal, because the lead's stream stops being read once the run is
 *   aborted. A run whose process died (kill -9) is closed the same way by endRun when recovery
 *   ends it (`closeOpenTasks`). A panel never shows a subagent "running" in a run that ended;
 * - each finished task's `usage` (its `task_*` terminal event) is added to the run's usage and
 *   listed per task under `usage.subagents` (DeerFlow's usage by caller, `subagent:{name}`).
 */
import type { SubagentUsage } from "./statusContract.js";

const TERMINAL = new Set(["task_completed", "task_failed", "task_cancelled", "task_timed_out"]);

export interface RunUsageWithSubagents extends SubagentUsage {
  subagents?: Record<string, SubagentUsage>;
}

export class SubagentRunTracker {
  readonly #open = new Set<string>();
  readonly #usage = new Map<string, SubagentUsage>();

  observe(data: { type: string; [key: string]: unknown }): void {
    const id = typeof data.task_id === "string" ? data.task_id : undefined;
    if (!id) return;
    if (data.type === "task_started") this.#open.add(id);
    else if (TERMINAL.has(data.type)) {
      this.#open.delete(id);
      const u = data.usage as Partial<SubagentUsage> | null | undefined;
      if (u && typeof u.total_tokens === "number") {
        this.#usage.set(id, { input_tokens: u.input_tokens ?? 0, output_tokens: u.output_tokens ?? 0, total_tokens: u.total_tokens });
      }
    }
  }

  /** Closing events for the tasks still open, in the order they started. */
  close(status: string, error: string | undefined): Array<{ type: string; task_id: string; error: string }> {
    const cancelled = status === "interrupted" || status === "timeout";
    const out = [...this.#open].map((task_id) =>
      cancelled ? { type: "task_cancelled", task_id, error: "Cancelled by user" } : { type: "task_failed", task_id, error: error ?? "The run ended before the task finished." },
    );
    this.#open.clear();
    return out;
  }

  /** The lead's usage plus every finished subagent's, with the split per task. */
  withUsage(lead: SubagentUsage | undefined): RunUsageWithSubagents | undefined {
    if (this.#usage.size === 0) return lead;
    const sum = { input_tokens: lead?.input_tokens ?? 0, output_tokens: lead?.output_tokens ?? 0, total_tokens: lead?.total_tokens ?? 0 };
    for (const u of this.#usage.values()) {
      sum.input_tokens += u.input_tokens;
      sum.output_tokens += u.output_tokens;
      sum.total_tokens += u.total_tokens;
    }
    return { ...sum, subagents: Object.fromEntries(this.#usage) };
  }
}

/**
 * The closing events for the tasks a run's journal leaves open, for endRun (runs/ending.ts): a run
 * whose process died mid-subagent (kill -9, then recovery) never closed them itself.
 */
export function closeOpenTasks(events: ReadonlyArray<{ event: string; data: unknown }>, status: string, error: string | undefined): Array<{ type: string; task_id: string; error: string }> {
  const tracker = new SubagentRunTracker();
  for (const e of events) {
    const data = e.data as { type?: unknown } | null;
    if (e.event === "custom" && data && typeof data.type === "string") tracker.observe(data as { type: string });
  }
  return tracker.close(status, error);
}
