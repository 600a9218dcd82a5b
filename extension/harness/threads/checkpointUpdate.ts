/**
 * A state update written straight through the checkpointer: a new checkpoint, child of the
 * latest, that is the same state with some channels replaced and their versions bumped, as
 * LangGraph's updateState writes one (source "update"). Not through the agent graph: updateState
 * runs a node's writers, and the lead agent's include its routing edges, which would schedule a
 * node for the next run. Messages are stored by reference, so the new checkpoint costs a few
 * bytes (the linear checkpointer stays linear).
 *
 * Callers refuse while a run is active on the thread: the run's next checkpoint is built from its
 * own in-memory state and would silently undo the update. Used by the viewed-images clear
 * (server/threads.ts) and manual compaction (runs/compaction.ts).
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { copyCheckpoint, maxChannelVersion, uuid6 } from "@langchain/langgraph-checkpoint";

export type CheckpointTuple = NonNullable<Awaited<ReturnType<BaseCheckpointSaver["getTuple"]>>>;

export async function writeChannels(saver: BaseCheckpointSaver, tuple: CheckpointTuple, values: Record<string, unknown>): Promise<void> {
  const next = copyCheckpoint(tuple.checkpoint);
  next.id = uuid6(-1);
  next.ts = new Date().toISOString();
  next.channel_values = { ...tuple.checkpoint.channel_values, ...values };
  const versions = Object.values(next.channel_versions);
  const version = saver.getNextVersion(versions.length > 0 ? (maxChannelVersion(...versions) as number) : undefined);
  const bumped = Object.fromEntries(Object.keys(values).map((k) => [k, version]));
  next.channel_versions = { ...next.channel_versions, ...bumped };
  const step = typeof tuple.metadata?.step === "number" ? tuple.metadata.step + 1 : 0;
  await saver.put(tuple.config, next, { source: "update", step, parents: tuple.metadata?.parents ?? {} }, bumped);
}
