/**
 * The full thread state of each `values` event of one run, as LangGraph Platform streams it
 * (the same shape as `GET /threads/{id}/state`'s `values`): the journal's event holds the
 * channels and the change of the message list (runs/valuesDelta.ts); this folds the run's
 * `values` events, in seq order, over the messages of the checkpoint the run started from.
 *
 * Built only for a stream that asked for `values`. Per stream it reads that base checkpoint once
 * and, when the stream resumes after an event of the run, the run's earlier events once; every
 * `values` event then costs its own serialisation only, as on LangGraph Platform.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { WireMessage } from "../../protocol/events.js";
import type { EventStore, StoredEvent } from "../store/events.js";
import { applyMessagesDelta, isMessagesDelta } from "../runs/valuesDelta.js";
import { HarnessError } from "../errors.js";
import { stateValuesOf } from "../threads/threadStateView.js";
import { valuesView } from "./views.js";

export class RunValues {
  /** The message list after the last folded event; undefined until the run's first is folded. */
  #messages: WireMessage[] | undefined;
  /** The journal sends `summary_text` only in the event where it changed. */
  #summary: unknown = null;
  #folded = 0;
  #caughtUp: boolean;

  constructor(
    private readonly checkpointer: BaseCheckpointSaver,
    private readonly events: EventStore,
    private readonly threadId: string,
    private readonly runId: string,
    /** The stream starts after this seq: the run's `values` events up to it are folded first. */
    private readonly afterSeq: number,
  ) {
    this.#caughtUp = afterSeq === 0;
  }

  /** The full state of this `values` event of the run (events come in seq order). */
  async of(e: StoredEvent): Promise<Record<string, unknown>> {
    if (!this.#caughtUp) {
      this.#caughtUp = true;
      for (const earlier of this.events.list(this.threadId, { runId: this.runId })) {
        if (earlier.seq > this.afterSeq || earlier.seq >= e.seq) break;
        if (earlier.event === "values") await this.fold(earlier);
      }
    }
    return this.fold(e);
  }

  private async fold(e: StoredEvent): Promise<Record<string, unknown>> {
    if (e.seq <= this.#folded) throw new Error(`values event ${e.seq} folded out of order`);
    this.#folded = e.seq;
    const { messages_delta: delta, message_count: _count, ...channels } = e.data as Record<string, unknown>;
    if ("summary_text" in channels) this.#summary = channels.summary_text;
    if (!isMessagesDelta(delta)) {
      // Journaled before values events carried their messages: the channels are all it has.
      return valuesView({ ...channels, summary_text: this.#summary }, this.#messages ?? []);
    }
    let previous = this.#messages;
    if (previous === undefined) previous = delta.base ? await this.baseMessages(delta.base) : [];
    this.#messages = applyMessagesDelta(previous, delta);
    return valuesView({ ...channels, summary_text: this.#summary }, this.#messages);
  }

  private async baseMessages(checkpointId: string): Promise<WireMessage[]> {
    const tuple = await this.checkpointer.getTuple({ configurable: { thread_id: this.threadId, checkpoint_ns: "", checkpoint_id: checkpointId } });
    if (!tuple) {
      throw new HarnessError("storage", `The checkpoint run ${this.runId} started from (${checkpointId}) is gone; its states cannot be rebuilt.`);
    }
    return stateValuesOf(tuple.checkpoint.channel_values).messages as WireMessage[];
  }
}
