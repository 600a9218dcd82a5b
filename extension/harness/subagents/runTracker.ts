/**
 * The lead run's view of its subagents, fed by the run's `custom` events (runs/runTurn.ts):
 *
 * - a task still open when the run stops (cancel, run timeout, error) is closed in the journal with
 *   `task_cancelled` / `task_failed`: the subagent was stopped with the run, but its own closing
 *   event may never reach the journal, because the lead's stream stops being read once the run is
 *   aborted. A run whose process died (kill -9) is closed the same way by endRun when recovery
 *   ends it (`closeOpenTasks`). A panel never shows a subagent "running" in a run that ended;
 * - each task's `usage` is added to the run's usage and listed per task under `usage.subagents`
 *   (DeerFlow's usage by caller, `subagent:{name}`): the latest its events reported, a terminal
 *   event's or, for a task the run stopped (cancel, run timeout), its last `task_running`'s, which
 *   carries the subagent's usage so far. Those tokens were spent: the budget and the cost count
 *   them, and the closing `task_cancelled` / `task_failed` carries them too;
 * - which model each task ran on (`model_name`), so its tokens are priced at that model's rate.
 */
import type { SubagentUsage } from "./statusContract.js";

const TERMINAL = new Set(["task_completed", "task_failed", "task_cancelled", "task_timed_out"]);

export interface RunUsageWithSubagents extends SubagentUsage {
  subagents?: Record<string, SubagentUsage>;
}

function usageOf(v: unknown): SubagentUsage | undefined {
  const u = v as Partial<SubagentUsage> | null | undefined;
  if (!u || typeof u !== "object" || typeof u.total_tokens !== "number") return undefined;
  return { input_tokens: u.input_tokens ?? 0, output_tokens: u.output_tokens ?? 0, total_tokens: u.total_tokens };
}

export class SubagentRunTracker {
  readonly #open = new Set<string>();
  readonly #usage = new Map<string, SubagentUsage>();
  readonly #model = new Map<string, string>();

  observe(data: { type: string; [key: string]: unknown }): void {
    const id = typeof data.task_id === "string" ? data.task_id : undefined;
    if (!id) return;
    if (typeof data.model_name === "string" && data.model_name) this.#model.set(id, data.model_name);
    if (data.type === "task_started") this.#open.add(id);
    else if (data.type === "task_running" || TERMINAL.has(data.type)) {
      if (TERMINAL.has(data.type)) this.#open.delete(id);
      // Cumulative in every event of a task: the latest is the task's usage so far.
      const u = usageOf(data.usage);
      if (u) this.#usage.set(id, u);
    }
  }

  /** Closing events for the tasks still open, in the order they started, with what each had spent. */
  close(status: string, error: string | undefined): Array<{ type: string; task_id: string; error: string; usage: SubagentUsage | null; model_name?: string }> {
    const cancelled = status === "interrupted" || status === "timeout";
    const out = [...this.#open].map((task_id) => {
      const spent = { usage: this.#usage.get(task_id) ?? null, ...(this.#model.has(task_id) ? { model_name: this.#model.get(task_id)! } : {}) };
      return cancelled
        ? { type: "task_cancelled", task_id, error: "Cancelled by user", ...spent }
        : { type: "task_failed", task_id, error: error ?? "The run ended before the task finished.", ...spent };
    });
    this.#open.clear();
    return out;
  }

  /** The model a task ran on (its configured name), when its events said. */
  modelOf(taskId: string): string | undefined {
    return this.#model.get(taskId);
  }

  /** The lead's usage plus every subagent's, with the split per task. */
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
export function closeOpenTasks(events: ReadonlyArray<{ event: string; data: unknown }>, status: string, error: string | undefined): ReturnType<SubagentRunTracker["close"]> {
  const tracker = new SubagentRunTracker();
  for (const e of events) {
    const data = e.data as { type?: unknown } | null;
    if (e.event === "custom" && data && typeof data.type === "string") tracker.observe(data as { type: string });
  }
  return tracker.close(status, error);
}
