/**
 * A thread's ThreadState as DeerFlow names it, read straight from the latest checkpoint (no model
 * or agent needed). Used by `deerflow state` and, later, the panel's initial load.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { BaseMessage } from "@langchain/core/messages";
import { THREAD_STATE_KEYS } from "../state/threadState.js";
import { toWireMessage, wireValue } from "../runs/wire.js";

export async function readThreadState(checkpointer: BaseCheckpointSaver, threadId: string): Promise<Record<string, unknown>> {
  const tuple = await checkpointer.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
  return stateValuesOf(tuple?.checkpoint.channel_values ?? {});
}

/** One checkpoint's channel values as the ThreadState view (also `deerflow serve`'s state and history). */
export function stateValuesOf(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of THREAD_STATE_KEYS) {
    const v = values[key];
    if (key === "messages") out.messages = ((v as BaseMessage[] | undefined) ?? []).map(toWireMessage);
    else if (key === "artifacts") out.artifacts = v ?? [];
    else if (key === "viewed_images") out.viewed_images = v ?? {};
    else out[key] = v === undefined ? null : wireValue(v);
  }
  return out;
}
