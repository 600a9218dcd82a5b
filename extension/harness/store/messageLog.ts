/**
 * The per-thread message log behind checkpointer.ts: why our checkpoints grow linearly.
 *
 * A message-list value (the `messages` channel, or a write of messages) is stored as ranges
 * `[start, end)` of `seq` in `checkpoint_messages`, each distinct serialized message once. An
 * appended conversation is one range; a message replaced or removed by id splits it into a few.
 *
 * The per-put cost must not grow with the history, so old messages are never re-serialized:
 * a WeakMap remembers, per thread, which message *object* was stored at which seq. LangGraph
 * keeps the same message objects across checkpoints (the reducer copies the array, not the
 * messages), and objects we deserialize in getTuple are registered too, so after a restart the
 * first put is also cheap. A hit is trusted only if the object's id and own field values are
 * unchanged (`fields`, compared by identity: catches `msg.content = ...` but not deep mutation of
 * a content array — state is never mutated after it is checkpointed, STYLE.md rule 5).
 * A miss is serialized, hashed, and looked up by (id, hash) before a new seq is appended.
 * The same memory serves reads: a seq whose object is known is not deserialized again.
 */
import { createHash } from "node:crypto";
import { BaseMessage, BaseMessageChunk, RemoveMessage } from "@langchain/core/messages";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { HarnessError } from "../errors.js";
import type { Db } from "./sqlite/types.js";

/** [start, end) over `seq` */
export type SeqRange = [number, number];

interface Entry {
  seq: number;
  id: string;
  fields: unknown[];
}

/** A message this put must store (or find) in the log; `seq` is set inside the transaction. */
export interface PendingMessage {
  id: string;
  hash: string;
  type: string;
  bytes: Uint8Array;
  obj: BaseMessage;
  seq?: number;
}

export type Slot = number | PendingMessage;

/** Per-thread memory. `epoch` ties it to one incarnation of the thread's rows (see checkpointer.ts). */
export interface ThreadCache {
  epoch: string | undefined;
  messages: WeakMap<object, Entry>;
  /**
   * seq -> the message object revived from there, so getTuple does not deserialize the whole
   * history on every run. Returned objects are shared between reads, as they are between steps
   * inside a LangGraph run; the `fields` check drops one that was modified.
   */
  objects: Map<number, BaseMessage>;
  /** channel key -> last stored (version, value identity, reference) */
  values: Map<string, { version: unknown; value: unknown; ref: unknown }>;
  /** The dictionary new checkpoint rows of the thread are deflated with (store/skeletonCodec.ts). */
  zdict?: { hash: string; bytes: Uint8Array };
  /** Dictionaries read so far, by hash. */
  zdicts: Map<string, Uint8Array>;
}

export function newThreadCache(epoch?: string): ThreadCache {
  return { epoch, messages: new WeakMap(), objects: new Map(), values: new Map(), zdicts: new Map() };
}

/** One put's (or putWrites') pending log inserts, shared by all its values so a message is stored once. */
export class LogBatch {
  readonly pending = new Map<object, PendingMessage>();
}

/**
 * Whether a message belongs in the log: a final (non-chunk) message with an id, i.e. the form it
 * keeps in the `messages` channel. An id-less input message (the reducer assigns the id later, by
 * mutation), a streamed chunk (the reducer replaces it by a plain message) or a RemoveMessage
 * would be logged in a form no checkpoint ever holds, and its seq would split every later
 * checkpoint's range in two.
 */
export function isLoggable(value: unknown): value is BaseMessage {
  return (
    BaseMessage.isInstance(value) &&
    !BaseMessageChunk.isInstance(value) &&
    !RemoveMessage.isInstance(value) && // an instruction to the reducer, never in the channel
    typeof value.id === "string" &&
    value.id !== ""
  );
}

export function isMessageList(value: unknown): value is BaseMessage[] {
  return Array.isArray(value) && value.length > 0 && value.every(isLoggable);
}

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function sameFields(msg: object, fields: unknown[]): boolean {
  const now = Object.values(msg);
  if (now.length !== fields.length) return false;
  for (let i = 0; i < now.length; i++) if (now[i] !== fields[i]) return false;
  return true;
}

export interface LogRow {
  seq: number;
  type: string;
  value: Buffer;
}

/** A row read from the log, or the live object already known for its seq. */
export type LoadedRow = LogRow | { seq: number; obj: BaseMessage };

export class MessageLog {
  private readonly maxSeq;
  private readonly findByContent;
  private readonly insert;
  private readonly selectRange;

  constructor(
    db: Db,
    private readonly serde: SerializerProtocol,
  ) {
    this.maxSeq = db.prepare<[string], { m: number }>(
      "SELECT coalesce(max(seq), 0) AS m FROM checkpoint_messages WHERE thread_id = ?",
    );
    this.findByContent = db.prepare<[string, string, string], { seq: number }>(
      "SELECT seq FROM checkpoint_messages WHERE thread_id = ? AND message_id = ? AND hash = ? ORDER BY seq LIMIT 1",
    );
    // Conflict policy: ABORT. seq is allocated inside the same IMMEDIATE transaction from max(seq),
    // so a collision means two writers raced outside the lock: fail loudly, never overwrite.
    this.insert = db.prepare(
      "INSERT INTO checkpoint_messages (thread_id, seq, message_id, hash, type, value) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.selectRange = db.prepare<[string, number, number], LogRow>(
      "SELECT seq, type, value FROM checkpoint_messages WHERE thread_id = ? AND seq >= ? AND seq < ? ORDER BY seq",
    );
  }

  /** Maps each message to a known seq or a pending insert. Serializes only cache misses. */
  async slots(cache: ThreadCache, messages: readonly BaseMessage[], batch: LogBatch): Promise<Slot[]> {
    const out: Slot[] = new Array<Slot>(messages.length);
    const misses: Promise<void>[] = [];
    for (let i = 0; i < messages.length; i++) {
      const msg = messages[i]!;
      const hit = cache.messages.get(msg);
      if (hit !== undefined && hit.id === (msg.id ?? "") && sameFields(msg, hit.fields)) {
        out[i] = hit.seq;
        continue;
      }
      const known = batch.pending.get(msg);
      if (known) {
        out[i] = known;
        continue;
      }
      const pending: PendingMessage = { id: msg.id ?? "", hash: "", type: "", bytes: new Uint8Array(), obj: msg };
      batch.pending.set(msg, pending);
      out[i] = pending;
      misses.push(
        this.serde.dumpsTyped(msg).then(([type, bytes]) => {
          pending.type = type;
          pending.bytes = bytes;
          pending.hash = sha256(bytes);
        }),
      );
    }
    await Promise.all(misses);
    return out;
  }

  /** Inside the write transaction: give every pending message a seq (existing row or appended). */
  resolve(threadId: string, batch: LogBatch): void {
    if (batch.pending.size === 0) return;
    let next = this.maxSeq.get(threadId)!.m + 1;
    for (const p of batch.pending.values()) {
      const existing = this.findByContent.get(threadId, p.id, p.hash);
      if (existing) {
        p.seq = existing.seq;
        continue;
      }
      p.seq = next++;
      this.insert.run(threadId, p.seq, p.id, p.hash, p.type, p.bytes);
    }
  }

  /** After commit: remember the newly stored objects. */
  remember(cache: ThreadCache, batch: LogBatch): void {
    for (const p of batch.pending.values()) {
      if (p.seq === undefined) continue;
      // Not into `objects`: reads return deserialized objects only, so a read in this process
      // equals a read in a new one (live objects may hold fields the serializer drops).
      cache.messages.set(p.obj, { seq: p.seq, id: p.id, fields: Object.values(p.obj) });
    }
  }

  /** The unmodified object known for a seq, if any. */
  private known(cache: ThreadCache, seq: number): BaseMessage | undefined {
    const obj = cache.objects.get(seq);
    if (!obj) return undefined;
    const e = cache.messages.get(obj);
    if (e && e.seq === seq && e.id === (obj.id ?? "") && sameFields(obj, e.fields)) return obj;
    cache.objects.delete(seq);
    return undefined;
  }

  /** Run-length encodes resolved slots: contiguous seqs collapse into one range. */
  static ranges(slots: readonly Slot[]): SeqRange[] {
    const out: SeqRange[] = [];
    for (const s of slots) {
      const seq = typeof s === "number" ? s : s.seq;
      if (seq === undefined) throw new Error("message slot resolved outside its transaction");
      const last = out[out.length - 1];
      if (last && last[1] === seq) last[1] = seq + 1;
      else out.push([seq, seq + 1]);
    }
    return out;
  }

  /**
   * The rows of some ranges, or the known object of a seq instead of its row; synchronous so a
   * caller can read inside one read transaction. Only runs of unknown seqs hit the database.
   */
  readRows(threadId: string, ranges: readonly SeqRange[], cache: ThreadCache): LoadedRow[] {
    const rows: LoadedRow[] = [];
    const fetch = (start: number, end: number) => {
      const got = this.selectRange.all(threadId, start, end);
      if (got.length !== end - start) {
        throw new HarnessError("storage", `Checkpoint data of thread ${threadId} is incomplete (messages ${start}..${end - 1} missing).`);
      }
      rows.push(...got);
    };
    for (const [start, end] of ranges) {
      let missingFrom: number | undefined;
      for (let seq = start; seq < end; seq++) {
        const obj = this.known(cache, seq);
        if (!obj) {
          missingFrom ??= seq;
          continue;
        }
        if (missingFrom !== undefined) fetch(missingFrom, seq);
        missingFrom = undefined;
        rows.push({ seq, obj });
      }
      if (missingFrom !== undefined) fetch(missingFrom, end);
    }
    return rows;
  }

  /** Deserializes rows into fresh message objects and registers them in the cache. */
  async revive(cache: ThreadCache, rows: readonly LoadedRow[]): Promise<BaseMessage[]> {
    return Promise.all(
      rows.map(async (r) => {
        if ("obj" in r) return r.obj;
        const msg = (await this.serde.loadsTyped(r.type, r.value)) as BaseMessage;
        if (typeof msg === "object" && msg !== null) {
          cache.messages.set(msg, { seq: r.seq, id: msg.id ?? "", fields: Object.values(msg) });
          cache.objects.set(r.seq, msg);
        }
        return msg;
      }),
    );
  }
}
