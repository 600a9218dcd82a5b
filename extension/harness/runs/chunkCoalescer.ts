/**
 * Token chunks without a row each (issue 12). A model streams one SSE chunk per token, and each
 * became its own journal row: ~190 rows and ~56 KB per 2 KB answer, most of it the repeated
 * message id and node name.
 *
 * The design: coalesce at the source, before a chunk gets its seq. Consecutive chunks of one AI
 * message merge into one chunk (text concatenated, tool-call fragments of the same index joined)
 * and leave as one `messages` event when the batch is FLUSH_MS old, when it holds MAX_CHARS, or
 * when any other event is about to be journaled (order is kept: the runner flushes first).
 * Why this one and not compacting a finished run's rows:
 * - the journal stays what was delivered: live followers and `events --after` replays see the
 *   same events with the same seqs, gap-free, and a reload mid-run rebuilds the partial answer
 *   exactly (merging is associative for the panel's and the CLI's consumers: text concatenates,
 *   fragments merge by index);
 * - the added latency is bounded by FLUSH_MS (a token waits at most that long for company), inside
 *   the goal of ≤ 5 ms added token → subscriber at p99 (`npm run bench`: journal);
 * - a fast stream (a local model, a burst after a slow first token) collapses into a few rows,
 *   and a slow one costs one row per token, as before, but then rows are not what is scarce.
 */
import type { WireMessageChunk } from "../../protocol/events.js";

export const FLUSH_MS = 3;
export const MAX_CHARS = 8192;

type CallChunk = NonNullable<WireMessageChunk["tool_call_chunks"]>[number];

/** Merges `next` into `into` when the result applies exactly as the two would in order. */
function mergeable(into: WireMessageChunk, next: WireMessageChunk): boolean {
  return into.type === "ai" && next.type === "ai" && into.id === next.id && into.id !== "" && into.node === next.node && into.name === next.name;
}

function mergeCalls(a: readonly CallChunk[] | undefined, b: readonly CallChunk[] | undefined): CallChunk[] | undefined {
  if (!b || b.length === 0) return a ? [...a] : undefined;
  const out = a ? [...a] : [];
  for (const c of b) {
    const last = out.at(-1);
    // Only a fragment of the same indexed call as the previous one folds into it; anything else
    // (an unindexed fragment, another call) stays its own entry, in order.
    if (last && typeof c.index === "number" && last.index === c.index && !(c.id && last.id && c.id !== last.id)) {
      const merged: CallChunk = { index: c.index };
      const id = last.id || c.id;
      const name = last.name || c.name;
      if (id) merged.id = id;
      if (name) merged.name = name;
      const args = (last.args ?? "") + (c.args ?? "");
      if (args) merged.args = args;
      out[out.length - 1] = merged;
    } else {
      out.push({ ...c });
    }
  }
  return out;
}

export class ChunkCoalescer {
  #batch: WireMessageChunk[] = [];
  #chars = 0;
  #timer: NodeJS.Timeout | undefined;
  /** A delivery that failed in the timer (the journal could not store it): raised on the next call, in the run's loop. */
  #failure: { error: unknown } | undefined;

  constructor(
    private readonly deliver: (chunks: WireMessageChunk[]) => void,
    private readonly flushMs = FLUSH_MS,
    private readonly maxChars = MAX_CHARS,
  ) {}

  push(chunk: WireMessageChunk): void {
    this.#raise();
    const last = this.#batch.at(-1);
    if (last && mergeable(last, chunk)) {
      const calls = mergeCalls(last.tool_call_chunks, chunk.tool_call_chunks);
      const merged: WireMessageChunk = { ...last, content: last.content + chunk.content };
      if (calls) merged.tool_call_chunks = calls;
      this.#batch[this.#batch.length - 1] = merged;
    } else {
      this.#batch.push(chunk);
    }
    this.#chars += chunk.content.length + (chunk.tool_call_chunks?.reduce((n, c) => n + (c.args?.length ?? 0), 0) ?? 0);
    if (this.#chars >= this.maxChars) this.flush();
    else this.#timer ??= setTimeout(() => this.#flushFromTimer(), this.flushMs);
  }

  #flushFromTimer(): void {
    try {
      this.flush();
    } catch (error) {
      this.#failure = { error };
    }
  }

  #raise(): void {
    const f = this.#failure;
    if (!f) return;
    this.#failure = undefined;
    throw f.error;
  }

  /** Delivers what is held now (before any other event, and at the end of the stream). */
  flush(): void {
    this.#raise();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#batch.length === 0) return;
    const batch = this.#batch;
    this.#batch = [];
    this.#chars = 0;
    this.deliver(batch);
  }
}
