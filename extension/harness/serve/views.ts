/**
 * The LangGraph Platform API's JSON shapes (what `@langchain/langgraph-sdk` reads) built from our
 * records: Thread, Run, ThreadState. Times are ISO strings, as the platform sends them.
 */
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { ThreadRecord } from "../store/threads.js";
import type { RunRecord } from "../store/runs.js";
import type { WireMessage } from "../../protocol/events.js";
import { stateValuesOf } from "../threads/threadStateView.js";

const iso = (ms: number | null | undefined) => new Date(ms ?? 0).toISOString();

/** DeerFlow's one assistant. */
export const ASSISTANT_ID = "lead_agent";

/** LangGraph's run statuses: ours, with `interrupted` as is and `running`/`pending` as they are. */
export function runView(r: RunRecord): Record<string, unknown> {
  return {
    run_id: r.run_id,
    thread_id: r.thread_id,
    assistant_id: ASSISTANT_ID,
    status: r.status,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    metadata: { model: r.model, ...(r.error ? { error: r.error } : {}), ...(r.usage ? { usage: r.usage } : {}) },
    multitask_strategy: r.multitask_strategy,
    kwargs: { context: r.context },
  };
}

export function threadView(t: ThreadRecord, active: RunRecord | undefined, values?: Record<string, unknown>): Record<string, unknown> {
  return {
    thread_id: t.threadId,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    metadata: t.metadata,
    status: active ? "busy" : "idle",
    ...(values ? { values } : {}),
    interrupts: {},
  };
}

/** One checkpoint as LangGraph's ThreadState (state and history). */
export function stateView(threadId: string, tuple: CheckpointTuple | undefined): Record<string, unknown> {
  const values = stateValuesOf(tuple?.checkpoint.channel_values ?? {});
  const ref = (id: string | undefined) => (id ? { thread_id: threadId, checkpoint_ns: "", checkpoint_id: id } : null);
  return {
    values,
    next: [],
    tasks: [],
    checkpoint: ref(tuple?.checkpoint.id) ?? { thread_id: threadId, checkpoint_ns: "", checkpoint_id: null },
    parent_checkpoint: ref(tuple?.parentConfig?.configurable?.checkpoint_id as string | undefined),
    metadata: tuple?.metadata ?? {},
    created_at: tuple?.checkpoint.ts ?? null,
  };
}

/**
 * A `values` event's payload: the thread's full state after that step, with the same keys and
 * defaults as stateView's `values` (the channels come already in wire form from the journal).
 */
export function valuesView(channels: Record<string, unknown>, messages: readonly WireMessage[]): Record<string, unknown> {
  return { ...stateValuesOf({ ...channels, messages: [] }), messages };
}
