/**
 * Subagent cards (issue 14): the `task` tool's journal namespace folded into the thread view.
 *
 * A `task` call's id is its subagent's `task_id`. The harness journals DeerFlow's lifecycle events
 * (`task_started`, `task_running`, `task_completed|failed|cancelled|timed_out`) and, wrapped in
 * `task_event`, what the subagent itself streamed (its token chunks and its node deltas, in the
 * lead's wire form). Each task keeps a small ThreadView of its own, fed by the same reducers as
 * the lead's (messages.ts), so the subagent's tool calls stream, pair with their results and
 * replay after a reload exactly as the lead's do.
 *
 * The TaskView lives in `ThreadView.tasks` and is copied onto its `task` call (ToolCallView.task)
 * once per batch of journal events (attachTasks, called by threadView.applyEvents): the row that
 * owns the call is replaced, so the virtual list re-renders that one row, and a batch of a
 * subagent's chunks replaces that row once, not once per chunk. A task whose events are not in view (a finished run after a reload: the snapshot has the
 * call and its result only) is drawn from the call's arguments and the result's `subagent_*`
 * fields instead (components/taskCard.ts).
 */
import type { TaskUsage, WireMessage, WireMessageChunk } from "../../extension/protocol/events.js";
import { applyChunk, endStreaming, isRecord, upsertMessage } from "./messages.js";
import { emptyThread } from "./emptyThread.js";
import type { TaskView, ThreadView } from "./types.js";

export const TASK_STATUSES = ["running", "completed", "failed", "cancelled", "timed_out"] as const;

const TERMINAL: Record<string, TaskView["status"]> = {
  task_completed: "completed",
  task_failed: "failed",
  task_cancelled: "cancelled",
  task_timed_out: "timed_out",
};

function newTask(id: string): TaskView {
  return { id, description: null, subagentType: null, model: null, status: "running", result: null, error: null, usage: null, steps: emptyThread(id) };
}

function usageOf(v: unknown): TaskUsage | null {
  if (!isRecord(v) || typeof v.total_tokens !== "number") return null;
  const n = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  return { input_tokens: n(v.input_tokens), output_tokens: n(v.output_tokens), total_tokens: n(v.total_tokens) };
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** One task event applied to its TaskView; the same object when nothing changed. */
function reduceTask(task: TaskView, data: Record<string, unknown>): TaskView {
  const type = data.type;
  if (type === "task_started") {
    return { ...task, description: str(data.description) ?? task.description, subagentType: str(data.subagent_type) ?? task.subagentType, model: str(data.model_name) ?? task.model };
  }
  if (type === "task_running") {
    const usage = usageOf(data.usage);
    return usage && usage.total_tokens !== task.usage?.total_tokens ? { ...task, usage } : task;
  }
  const terminal = typeof type === "string" ? TERMINAL[type] : undefined;
  if (terminal) {
    // A task closes once: a late duplicate (the runner's close after the executor's own) is ignored.
    if (task.status !== "running") return task;
    return {
      ...task,
      status: terminal,
      result: terminal === "completed" ? str(data.result) ?? "" : null,
      error: terminal === "completed" ? null : str(data.error),
      usage: usageOf(data.usage) ?? task.usage,
      model: str(data.model_name) ?? task.model,
      // Nothing of a finished subagent streams any more.
      steps: endStreaming(task.steps),
    };
  }
  if (type === "task_event") {
    let steps = task.steps;
    if (data.event === "messages" && Array.isArray(data.data)) {
      for (const c of data.data as unknown[]) if (isRecord(c) && typeof c.type === "string") steps = applyChunk(steps, c as unknown as WireMessageChunk);
    } else if (data.event === "updates" && isRecord(data.data)) {
      for (const node of Object.values(data.data)) {
        if (!isRecord(node) || !Array.isArray(node.messages)) continue;
        for (const m of node.messages as unknown[]) {
          if (isRecord(m) && typeof m.type === "string" && (typeof m.content === "string" || Array.isArray(m.content))) steps = upsertMessage(steps, m as unknown as WireMessage);
        }
      }
    }
    return steps === task.steps ? task : { ...task, steps };
  }
  return task;
}

/** Whether a `custom` event belongs to a subagent (it carries a `task_id`). */
export function isTaskEvent(data: Record<string, unknown>): boolean {
  return typeof data.task_id === "string" && data.task_id !== "" && typeof data.type === "string" && data.type.startsWith("task_");
}

/** Folds one subagent event into its TaskView (`ThreadView.tasks`); attachTasks then shows it. */
export function applyTaskEvent(t: ThreadView, data: Record<string, unknown>): ThreadView {
  const id = data.task_id as string;
  const prev = t.tasks.get(id);
  const next = reduceTask(prev ?? newTask(id), data);
  if (next === prev) return t;
  return { ...t, tasks: t.tasks.set(id, next) };
}

/**
 * Puts each task's current view on its call in the owning message (one row replaced per owner),
 * for the calls in view whose copy is not current.
 */
export function attachTasks(t: ThreadView, ids: Iterable<string>): ThreadView {
  let messages = t.messages;
  for (const id of ids) {
    const task = t.tasks.get(id);
    const owner = t.callOwner.get(id);
    const at = owner === undefined ? undefined : t.index.get(owner);
    if (!task || at === undefined) continue;
    const msg = messages.at(at);
    if (!msg || !msg.toolCalls.some((c) => c.id === id && c.task !== task)) continue;
    messages = messages.set(at, { ...msg, toolCalls: msg.toolCalls.map((c) => (c.id === id ? { ...c, task } : c)) });
  }
  return messages === t.messages ? t : { ...t, messages };
}
