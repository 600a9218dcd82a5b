/**
 * How a journaled `values` event carries the thread's messages without carrying the history.
 *
 * LangGraph's `values` mode is the whole state after every step, and `deerflow serve` must send
 * it so (the SDK's `useStream` takes the last `values` of a run as the final state). The journal
 * cannot store it whole: a thread of thousands of messages would be written again at every step.
 * It cannot point at the step's checkpoint either: a finished run's intermediate checkpoints are
 * compacted away (LinearSqliteSaver.compactRun), and a resumed or lagging stream reads its
 * events after that. So each `values` event carries the change of the message list since the
 * previous `values` event of the same run: how many leading messages stayed (`keep`) and the
 * messages after them (`add`); the run's first one also names the checkpoint the run started
 * from (`base`, kept by compaction: it is the previous run's last). Folding the run's `values`
 * events over the base's messages gives every step's list exactly (serve/runValues.ts).
 *
 * "Stayed" is object identity: LangGraph hands every step the same message objects unless a node
 * replaced one (the reducer replaces by id with the node's new object), as ./updateDeltas.ts
 * relies on too. No serialisation of unchanged messages on the hot path.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { WireMessage } from "../../protocol/events.js";
import { toWireMessage } from "./wire.js";

export interface MessagesDelta {
  /** The run's first `values` only: the checkpoint whose messages the first `keep` are (null: none, a new thread). */
  base?: string | null;
  keep: number;
  add: WireMessage[];
}

export class MessagesDeltas {
  /** The messages of the last journaled `values`; undefined before the run's first. */
  #last: readonly unknown[] | undefined;

  /**
   * @param base the checkpoint the run starts from, or undefined when the saver cannot say (a
   *   saver without compaction): the first delta then carries the whole list.
   * @param input the run's input messages: in the first `values` they are where the base ends.
   */
  constructor(
    private readonly base: string | null | undefined,
    private readonly input: ReadonlySet<unknown>,
  ) {}

  /** The change since the last journaled `values`, or undefined when the list is the same. */
  delta(messages: readonly unknown[]): MessagesDelta | undefined {
    const last = this.#last;
    let keep = 0;
    if (last) {
      const n = Math.min(last.length, messages.length);
      while (keep < n && messages[keep] === last[keep]) keep++;
      if (keep === messages.length && keep === last.length) return undefined;
    } else if (this.base !== undefined) {
      // The input step appended (or replaced by id) the input messages: what precedes the first
      // of them is the base checkpoint's list. Without input the list is the base's as loaded.
      // Input that is not in the list (never seen: a reducer that copied it) leaves no way to
      // tell where the base ends: the whole list, once, rather than a wrong one.
      const firstInput = messages.findIndex((m) => this.input.has(m));
      keep = firstInput !== -1 ? firstInput : this.input.size === 0 ? messages.length : 0;
    }
    const add = messages.slice(keep).map((m) => toWireMessage(m as BaseMessage));
    return last ? { keep, add } : { base: this.base ?? null, keep, add };
  }

  /** The delta was journaled: the next one is relative to these messages. */
  journaled(messages: readonly unknown[]): void {
    this.#last = messages;
  }
}

/** One step's list from the previous one (or the base's) and the step's delta. */
export function applyMessagesDelta(previous: readonly WireMessage[], d: MessagesDelta): WireMessage[] {
  if (d.keep > previous.length) {
    throw new Error(`values delta keeps ${d.keep} messages of ${previous.length}`);
  }
  return [...previous.slice(0, d.keep), ...d.add];
}

export function isMessagesDelta(v: unknown): v is MessagesDelta {
  const d = v as Partial<MessagesDelta> | null;
  return !!d && typeof d === "object" && Number.isInteger(d.keep) && (d.keep as number) >= 0 && Array.isArray(d.add);
}
