/**
 * A run's journal as Server-Sent Events: replay after `Last-Event-ID` (the journal's seq), then
 * follow live until the run's `end`. In-process appends arrive through the journal; another
 * process's (a second `deerflow serve` on the same Postgres) are read on every wake-up of
 * waitForEnd, which also bounds the wait by the lease. Delivery is by seq: nothing is sent twice,
 * nothing is skipped. `id:` is the seq, so a client that reconnects resumes where it was.
 *
 * A `values` event is sent as LangGraph sends it, the full thread state after the step
 * (./runValues.ts); only a stream that asked for `values` builds it, so a stream of messages or
 * updates never reads a checkpoint.
 */
import type { SSEStreamingApi } from "hono/streaming";
import type { RunManager } from "../runs/manager.js";
import type { RunRecord } from "../store/runs.js";
import type { StoredEvent } from "../store/events.js";
import type { WireMessageChunk } from "../../protocol/events.js";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { RunValues } from "./runValues.js";
import { HarnessError, errorMessage } from "../errors.js";

/** The journal's event names that LangGraph's `stream_mode` selects; metadata, error and end always go. */
const MODE_OF: Record<string, string> = { values: "values", updates: "updates", messages: "messages", custom: "custom" };

export function modesFilter(streamMode: unknown): (event: string) => boolean {
  const list = (Array.isArray(streamMode) ? streamMode : streamMode === undefined || streamMode === null ? [] : [streamMode]).map(String);
  if (list.length === 0) return () => true;
  // LangGraph's "messages-tuple" is the SDK's name for what the journal calls messages.
  const wanted = new Set(list.map((m) => (m === "messages-tuple" ? "messages" : m)));
  return (event) => !(event in MODE_OF) || wanted.has(MODE_OF[event]!);
}

/** The SSE id of chunk i of n in journal row seq: the row's seq on its last chunk. */
const chunkEventId = (seq: number, i: number, n: number) => (i === n - 1 ? String(seq) : `${seq}.${i}`);

/**
 * Where a `Last-Event-ID` resumes: after a journal row (`<seq>`; -1 and absent = from the start,
 * the SDK's reconnect after a reload), or inside one (`<seq>.<i>`). Anything else is not an id
 * this server sent.
 */
export function resumePoint(lastEventId: string | undefined): { afterSeq: number; resumeChunk?: { seq: number; after: number } } | undefined {
  if (lastEventId === undefined || lastEventId === "-1") return { afterSeq: 0 };
  const m = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(lastEventId);
  if (!m) return undefined;
  const seq = Number(m[1]);
  if (m[2] === undefined) return { afterSeq: seq };
  return { afterSeq: Math.max(0, seq - 1), resumeChunk: { seq, after: Number(m[2]) } };
}

/** A journal chunk as LangGraph's messages mode sends it: LangChain's serialized chunk and the step's metadata. */
export function messageTuple(chunk: WireMessageChunk, run: RunRecord): [Record<string, unknown>, Record<string, unknown>] {
  const base = { content: chunk.content, id: chunk.id, name: chunk.name ?? null, additional_kwargs: {}, response_metadata: {} };
  const message =
    chunk.type === "ai"
      ? { ...base, type: "AIMessageChunk", tool_calls: [], invalid_tool_calls: [], tool_call_chunks: (chunk.tool_call_chunks ?? []).map((t) => ({ type: "tool_call_chunk", id: t.id ?? null, name: t.name ?? null, args: t.args ?? "", index: t.index ?? null })), usage_metadata: null }
      : chunk.type === "tool"
        ? { ...base, type: "tool", tool_call_id: chunk.tool_call_id ?? "" }
        : { ...base, type: chunk.type };
  return [message, { langgraph_node: chunk.node ?? null, run_id: run.run_id, thread_id: run.thread_id, assistant_id: "lead_agent" }];
}

export async function streamRun(
  sse: SSEStreamingApi,
  manager: RunManager,
  run: RunRecord,
  opts: {
    afterSeq: number;
    /** A resume from inside a journal row of chunks (`<seq>.<i>`): that row's chunks up to i were sent. */
    resumeChunk?: { seq: number; after: number };
    include: (event: string) => boolean;
    signal: AbortSignal;
    checkpointer: BaseCheckpointSaver;
  },
): Promise<void> {
  const values = opts.include("values") ? new RunValues(opts.checkpointer, manager.journal.events, run.thread_id, run.run_id, opts.afterSeq) : undefined;
  let last = opts.afterSeq;
  const queue: StoredEvent[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const deliver = (e: StoredEvent) => {
    if (e.seq <= last) return;
    last = e.seq;
    if (e.run_id !== run.run_id) return;
    queue.push(e);
    wake?.();
  };
  const drain = () => {
    for (const e of manager.journal.events.list(run.thread_id, { afterSeq: last })) deliver(e);
  };
  const stop = manager.journal.subscribe(run.thread_id, last, deliver);
  const waiting = manager.waitForEnd(run, { onWake: drain, signal: opts.signal }).then(
    () => undefined,
    () => undefined,
  );
  void waiting.then(() => {
    drain();
    ended = true;
    wake?.();
  });
  try {
    for (;;) {
      while (queue.length > 0) {
        const e = queue.shift()!;
        if (opts.include(e.event)) {
          let data: unknown = e.data;
          if (e.event === "values" && values) {
            try {
              data = await values.of(e);
            } catch (err) {
              // The stream cannot say the state any more: it says so and ends, as LangGraph's does.
              const code = err instanceof HarnessError ? err.code : "internal";
              await sse.writeSSE({ event: "error", data: JSON.stringify({ error: code, message: errorMessage(err) }) });
              return;
            }
          }
          if (e.event === "messages" && Array.isArray(data)) {
            // LangGraph's messages mode: one event per chunk, each `[message chunk, metadata]`.
            // The journal keeps a few ms of chunks as one row: its last chunk's id is the row's
            // seq, the others `<seq>.<i>`, so a client resuming from any id gets nothing twice.
            const chunks = data as WireMessageChunk[];
            const from = opts.resumeChunk && opts.resumeChunk.seq === e.seq ? opts.resumeChunk.after + 1 : 0;
            for (let i = from; i < chunks.length; i++) {
              await sse.writeSSE({ id: chunkEventId(e.seq, i, chunks.length), event: "messages", data: JSON.stringify(messageTuple(chunks[i]!, run)) });
            }
          } else {
            await sse.writeSSE({ id: String(e.seq), event: e.event, data: JSON.stringify(data) });
          }
        }
        if (e.event === "end") return;
      }
      if (ended || opts.signal.aborted) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    stop();
  }
}
