/**
 * LangGraph checkpointer on the harness database, with storage linear in the thread's length.
 *
 * The stock SqliteSaver serializes every channel's full value into every checkpoint; createAgent
 * writes one checkpoint per hook node, so a 200-turn DeerFlow thread reaches ~395 MB. Here a
 * checkpoint row holds only the checkpoint's skeleton and a small reference per channel
 * (migrations/checkpointTables.ts): message lists point into the per-thread message log
 * (messageLog.ts), other values are content-addressed per thread or inlined when tiny.
 * We do not rely on `newVersions`: every put stores the complete state by reference, so
 * getTuple never walks ancestors and any checkpoint can be read (or forked) on its own.
 *
 * Concurrency: every write is one IMMEDIATE transaction; all async work (serialization) happens
 * before it. One process writes a thread at a time (the run lease), but a second process is
 * detected through `checkpoint_threads.epoch` and never corrupts the log (see put()).
 */
import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { HarnessError } from "../errors.js";
import type { Db } from "./sqlite/types.js";
import { LogBatch, MessageLog, type LoadedRow, isLoggable, isMessageList, newThreadCache, sha256, type SeqRange, type Slot, type ThreadCache } from "./messageLog.js";
import {
  DICTIONARY_TYPE,
  dictionaryHashOf,
  dictionaryOf,
  joinRow,
  outgrown,
  packCheckpointRow,
  unpackCheckpointRow,
  type Dictionary,
} from "./skeletonCodec.js";
import { prepareCheckpointStatements, type CheckpointRow, type CheckpointStatements, type WriteRow } from "./checkpointSql.js";

/**
 * A pending Send packet (LangGraph's `__pregel_tasks` channel and TASKS writes) whose args hold the
 * message list: the messages by reference into the log, the rest of the args as a value.
 * The agent graph sends each tool call to the tools node with the whole state, so storing the
 * packet as plain JSON re-wrote the thread's entire history on every tool turn (O(n²) bytes and
 * time over a long run).
 */
type SendRef = { n: string; m: SeqRange[]; t: string } & ({ h: string } | { j: string });

/** How a channel value is referenced from its checkpoint row. */
type ChannelRef = { m: SeqRange[] } | { h: string } | { j: string } | { s: SendRef[] };

/** Threads whose caches are kept; evicting one only costs a re-read. */
const CACHED_THREADS = 16;
/** Below this many bytes a value is inlined: a 64-char hash reference would cost as much. */
const INLINE_MAX = 96;
/** Write-value types of our own, next to the serializer's "json" / "bytes". */
const MSGS = "lg:msgs";
const MSG = "lg:msg";
/** A TASKS write of one Send packet with a message list (see SendRef): JSON `{n, m, t, j}`. */
const SEND = "lg:send";

const utf8 = new TextDecoder();

interface EncodedValue {
  key: string;
  version: unknown;
  value: unknown;
  ref?: ChannelRef;
  slots?: Slot[];
  insert?: { hash: string; type: string; bytes: Uint8Array };
  sends?: EncodedSend[];
}

interface EncodedSend {
  node: string;
  slots: Slot[];
  type: string;
  rest: { j: string } | { h: string };
  insert?: { hash: string; type: string; bytes: Uint8Array };
}

/** `{node, args}` with a message list in `args.messages` (a Send, or one revived from storage). */
function isSendWithMessages(value: unknown): value is { node: string; args: { messages: BaseMessage[] } & Record<string, unknown> } {
  if (!value || typeof value !== "object") return false;
  const v = value as { node?: unknown; args?: unknown };
  if (typeof v.node !== "string" || !v.args || typeof v.args !== "object" || Array.isArray(v.args)) return false;
  return isMessageList((v.args as { messages?: unknown }).messages);
}

interface EncodedWrite {
  channel: string;
  idx: number;
  type: string;
  bytes?: Uint8Array;
  slots?: Slot[];
  /** A SEND write: the packet's node and its args without the messages, as JSON text. */
  send?: { node: string; rest: string };
}

/** Everything one tuple needs from the database, read in one (consistent) read transaction. */
interface TupleRows {
  row: CheckpointRow;
  /** The skeleton's serde type and bytes (inflated when the row is deflated). */
  skeleton: { type: string; bytes: Uint8Array };
  refs: Record<string, ChannelRef>;
  values: Map<string, { type: string; value: Buffer }>;
  messages: Map<string, LoadedRow[]>;
  /** Per channel stored as Send packets: each packet's message rows and its stored rest. */
  sends: Map<string, Array<{ node: string; rows: LoadedRow[]; type: string; rest: Buffer | string }>>;
  writes: WriteRow[];
  writeMessages: Map<WriteRow, LoadedRow[]>;
  parentSends: WriteRow[];
  parentSendMessages: Map<WriteRow, LoadedRow[]>;
  cache: ThreadCache;
}

function requireThreadId(config: RunnableConfig, what: string): string {
  if (!config.configurable) throw new HarnessError("storage", `${what}: the config has no "configurable".`);
  const threadId: unknown = config.configurable.thread_id;
  if (typeof threadId !== "string" || threadId === "") {
    throw new HarnessError("storage", `${what}: config.configurable.thread_id is missing; pass { configurable: { thread_id } }.`);
  }
  return threadId;
}

export class LinearSqliteSaver extends BaseCheckpointSaver {
  private readonly sql: CheckpointStatements;
  private readonly log: MessageLog;
  private readonly caches = new Map<string, ThreadCache>();

  constructor(
    readonly db: Db,
    serde?: SerializerProtocol,
  ) {
    super(serde);
    this.sql = prepareCheckpointStatements(db);
    this.log = new MessageLog(db, this.serde);
  }

  private cacheOf(threadId: string): ThreadCache {
    return this.touchCache(threadId, this.caches.get(threadId) ?? newThreadCache());
  }

  /** Keeps the caches of the most recently used threads (LRU): a cache holds a thread's messages. */
  private touchCache(threadId: string, cache: ThreadCache): ThreadCache {
    this.caches.delete(threadId);
    this.caches.set(threadId, cache);
    if (this.caches.size > CACHED_THREADS) this.caches.delete(this.caches.keys().next().value!);
    return cache;
  }

  /**
   * Inside a write transaction: is `cache` still about the thread's current rows? A thread gets
   * a fresh random epoch when first written; deleteThread removes it. A mismatch means another
   * process deleted the thread since we cached it: our cached seqs may now name other rows.
   */
  private epochMatches(threadId: string, cache: ThreadCache): boolean {
    let epoch = this.sql.selectEpoch.get(threadId)?.epoch;
    if (epoch === undefined) {
      epoch = randomUUID();
      this.sql.insertEpoch.run(threadId, epoch);
    }
    if (cache.epoch === undefined) cache.epoch = epoch; // an epoch-less cache holds no entries
    return cache.epoch === epoch;
  }

  /** Runs `encode` then `write` in an IMMEDIATE transaction, once more with a cold cache if stale. */
  private async writeWithCache<E>(
    threadId: string,
    encode: (cache: ThreadCache, batch: LogBatch) => Promise<E>,
    write: (encoded: E) => void,
    after: (cache: ThreadCache, encoded: E) => void,
  ): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const cache = this.cacheOf(threadId);
      const batch = new LogBatch();
      const encoded = await encode(cache, batch);
      const ok = this.db.transaction("immediate", () => {
        if (!this.epochMatches(threadId, cache)) return false;
        this.log.resolve(threadId, batch);
        write(encoded);
        return true;
      });
      if (ok) {
        this.log.remember(cache, batch);
        after(cache, encoded);
        return;
      }
      this.caches.delete(threadId);
    }
    throw new HarnessError("storage", `Thread ${threadId} keeps changing under this process; retry the run.`);
  }

  private async encodeChannel(cache: ThreadCache, ns: string, channel: string, value: unknown, version: unknown, batch: LogBatch): Promise<EncodedValue> {
    const key = `${ns}\u0000${channel}`;
    const prev = cache.values.get(key);
    // Same version and same object: LangGraph did not touch the channel since our last put.
    if (prev && prev.version === version && prev.value === value) return { key, version, value, ref: prev.ref as ChannelRef };
    if (isMessageList(value)) return { key, version, value, slots: await this.log.slots(cache, value, batch) };
    if (channel === TASKS && Array.isArray(value) && value.length > 0 && value.every(isSendWithMessages)) {
      const sends: EncodedSend[] = [];
      for (const packet of value) {
        const { messages, ...rest } = packet.args;
        const slots = await this.log.slots(cache, messages, batch);
        const [type, bytes] = await this.serde.dumpsTyped(rest);
        const stored = this.valueRef(type, bytes);
        sends.push({ node: packet.node, slots, type, rest: stored.ref, ...(stored.insert ? { insert: stored.insert } : {}) });
      }
      return { key, version, value, sends };
    }
    const [type, bytes] = await this.serde.dumpsTyped(value);
    const stored = this.valueRef(type, bytes);
    return { key, version, value, ref: stored.ref, ...(stored.insert ? { insert: stored.insert } : {}) };
  }

  /** A serialized value inlined when tiny JSON, otherwise content-addressed in the thread's values. */
  private valueRef(type: string, bytes: Uint8Array): { ref: { j: string } | { h: string }; insert?: { hash: string; type: string; bytes: Uint8Array } } {
    if (type === "json" && bytes.byteLength <= INLINE_MAX) return { ref: { j: utf8.decode(bytes) } };
    const hash = sha256(Buffer.concat([Buffer.from(`${type}\u0000`), bytes]));
    return { ref: { h: hash }, insert: { hash, type, bytes } };
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, _newVersions: ChannelVersions): Promise<RunnableConfig> {
    const threadId = requireThreadId(config, "put");
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const parentId = (config.configurable?.checkpoint_id as string | undefined) || null;
    const skeleton = copyCheckpoint(checkpoint);
    const channelValues = skeleton.channel_values;
    skeleton.channel_values = {};
    const [[type, skeletonBytes], [metaType, metaBytes]] = await Promise.all([
      this.serde.dumpsTyped(skeleton),
      this.serde.dumpsTyped(metadata),
    ]);
    // metadata stays JSON text so list() can filter on it in SQL
    if (metaType !== "json") throw new HarnessError("storage", `Checkpoint metadata must serialize to JSON, got "${metaType}".`);
    const metadataText = utf8.decode(metaBytes);

    // The thread cache of the current attempt, and a dictionary this put created (remembered only
    // once its transaction committed: a rolled-back dictionary row must never be referenced).
    let attemptCache: ThreadCache | undefined;
    let createdDict: Dictionary | undefined;
    await this.writeWithCache(
      threadId,
      async (cache, batch) => {
        attemptCache = cache;
        const out: [string, EncodedValue][] = [];
        for (const [channel, value] of Object.entries(channelValues)) {
          out.push([channel, await this.encodeChannel(cache, ns, channel, value, checkpoint.channel_versions[channel], batch)]);
        }
        return out;
      },
      (encoded) => {
        const refs: Record<string, ChannelRef> = {};
        for (const [channel, e] of encoded) {
          if (e.slots) e.ref = { m: MessageLog.ranges(e.slots) };
          if (e.sends) {
            e.ref = { s: e.sends.map((p): SendRef => ({ n: p.node, m: MessageLog.ranges(p.slots), t: p.type, ...p.rest })) };
            for (const p of e.sends) if (p.insert) this.sql.insertValue.run(threadId, p.insert.hash, p.insert.type, p.insert.bytes);
          }
          if (e.insert) this.sql.insertValue.run(threadId, e.insert.hash, e.insert.type, e.insert.bytes);
          refs[channel] = e.ref!;
        }
        const joined = joinRow(skeletonBytes, JSON.stringify(refs));
        let dict = attemptCache!.zdict ?? this.latestDictionary(threadId, attemptCache!);
        createdDict = undefined;
        if (outgrown(dict, joined)) {
          dict = createdDict = dictionaryOf(joined);
          this.sql.insertValue.run(threadId, dict.hash, DICTIONARY_TYPE, dict.bytes);
        }
        const packed = packCheckpointRow(type, joined, dict);
        this.sql.upsertCheckpoint.run(threadId, ns, checkpoint.id, parentId, packed.type, packed.checkpoint, packed.channel_refs, metadataText);
      },
      (cache, encoded) => {
        for (const [, e] of encoded) cache.values.set(e.key, { version: e.version, value: e.value, ref: e.ref });
        if (createdDict) {
          cache.zdict = createdDict;
          cache.zdicts.set(createdDict.hash, createdDict.bytes);
        }
      },
    );
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const threadId = requireThreadId(config, "putWrites");
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (!checkpointId) throw new HarnessError("storage", "putWrites: config.configurable.checkpoint_id is missing.");
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    // Conflict policy (as LangGraph's own savers): special writes (error, interrupt, resume,
    // scheduled) replace an earlier one of the same task; regular writes are idempotent, the
    // first one wins, because a retried task re-sends the same writes.
    const allSpecial = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const stmt = allSpecial ? this.sql.replaceWrite : this.sql.insertWrite;

    await this.writeWithCache(
      threadId,
      (cache, batch) =>
        Promise.all(
          writes.map(async ([channel, value], i): Promise<EncodedWrite> => {
            const idx = WRITES_IDX_MAP[channel] ?? i;
            if (isMessageList(value)) return { channel, idx, type: MSGS, slots: await this.log.slots(cache, value, batch) };
            if (isLoggable(value)) return { channel, idx, type: MSG, slots: await this.log.slots(cache, [value], batch) };
            if (channel === TASKS && isSendWithMessages(value)) {
              const { messages, ...rest } = value.args;
              const [type, bytes] = await this.serde.dumpsTyped(rest);
              if (type === "json") return { channel, idx, type: SEND, slots: await this.log.slots(cache, messages, batch), send: { node: value.node, rest: utf8.decode(bytes) } };
            }
            const [type, bytes] = await this.serde.dumpsTyped(value);
            return { channel, idx, type, bytes };
          }),
        ),
      (encoded) => {
        for (const w of encoded) {
          const value = w.send
            ? // Bytes, not text: the column is a BLOB (bytea on Postgres, whose text input would
              // read the JSON's backslashes as escapes); reads take either as UTF-8.
              Buffer.from(JSON.stringify({ n: w.send.node, m: MessageLog.ranges(w.slots!), j: w.send.rest }), "utf8")
            : w.slots
              ? JSON.stringify(MessageLog.ranges(w.slots))
              : w.bytes;
          stmt.run(threadId, ns, checkpointId, taskId, w.idx, w.channel, taskPath, w.type, value);
        }
      },
      () => undefined,
    );
  }

  /** The thread's latest checkpoint in the root namespace (a run's starting point). */
  latestRootCheckpointId(threadId: string): string | undefined {
    return this.sql.selectLatestRootId.get(threadId)?.checkpoint_id;
  }

  /**
   * After a run: keep only its last root checkpoint. LangGraph checkpoints after every superstep,
   * and every middleware hook is a superstep (≈16 per turn with the full chain), so a thread's
   * rows grew with the chain's length times its turns. While the run goes they all matter (a
   * crash resumes from the last one); once it ended, the last one holds the whole state, and the
   * intermediate ones only served step-by-step time travel, which nothing here offers. The last
   * checkpoint is re-parented onto the run's starting point, so the history stays a chain, one
   * link per run. Returns how many checkpoints were removed. Messages stay in the log (the last
   * checkpoint refers to them); a run that wrote no checkpoint changes nothing.
   */
  compactRun(threadId: string, startedAfter: string | undefined): number {
    return this.db.transaction("immediate", () => {
      const last = this.sql.selectLatestRootId.get(threadId)?.checkpoint_id;
      if (last === undefined || last === startedAfter) return 0;
      const from = startedAfter ?? "";
      this.sql.deleteRootWritesBetween.run(threadId, from, last);
      const removed = this.sql.deleteRootCheckpointsBetween.run(threadId, from, last).changes;
      this.sql.reparent.run(startedAfter ?? null, threadId, last);
      return removed;
    });
  }

  deleteThread(threadId: string): Promise<void> {
    this.db.transaction("immediate", () => {
      for (const del of this.sql.deleteThread) del.run(threadId);
    });
    this.caches.delete(threadId);
    return Promise.resolve();
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (!threadId) return undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = getCheckpointId(config);
    const rows = this.db.transaction("deferred", () => {
      const row = checkpointId ? this.sql.selectCheckpoint.get(threadId, ns, checkpointId) : this.sql.selectLatest.get(threadId, ns);
      return row ? this.readTuple(row) : undefined;
    });
    return rows ? this.buildTuple(rows) : undefined;
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options;
    const where: string[] = [];
    const args: unknown[] = [];
    const c = config.configurable ?? {};
    const and = (clause: string, ...values: unknown[]) => {
      where.push(clause);
      args.push(...values);
    };
    if (c.thread_id) and("thread_id = ?", c.thread_id);
    if (c.checkpoint_ns !== undefined && c.checkpoint_ns !== null) and("checkpoint_ns = ?", c.checkpoint_ns);
    if (c.checkpoint_id) and("checkpoint_id = ?", c.checkpoint_id);
    if (before?.configurable?.checkpoint_id) and("checkpoint_id < ?", before.configurable.checkpoint_id);
    for (const [key, value] of Object.entries(filter ?? {})) {
      if (value === undefined) continue;
      // JSON-text equality, the same semantics as the stock SqliteSaver (exact for scalars)
      if (this.db.dialect === "postgres") and("metadata::jsonb -> ?::text = ?::jsonb", key, JSON.stringify(value));
      else and("metadata -> ? = ?", `$."${key.replaceAll('"', '\\"')}"`, JSON.stringify(value));
    }
    let sql = `SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints`;
    if (where.length) sql += ` WHERE ${where.join(" AND ")}`;
    sql += " ORDER BY checkpoint_id DESC";
    if (limit !== undefined && limit > 0) {
      sql += " LIMIT ?";
      args.push(Math.floor(limit));
    }
    // Keys first (small), then each tuple in its own read transaction: the consumer may write
    // between yields, and a driver may not run statements while an iterator is open.
    const keys = this.db.prepare<unknown[], { thread_id: string; checkpoint_ns: string; checkpoint_id: string }>(sql).all(...args);
    for (const k of keys) {
      const rows = this.db.transaction("deferred", () => {
        const row = this.sql.selectCheckpoint.get(k.thread_id, k.checkpoint_ns, k.checkpoint_id);
        return row ? this.readTuple(row) : undefined; // deleted meanwhile: skip
      });
      if (rows) yield await this.buildTuple(rows);
    }
  }

  /** A stored dictionary of the thread (content-addressed, immutable: safe to keep in the cache). */
  private dictionary(threadId: string, hash: string, cache: ThreadCache): Uint8Array | undefined {
    const known = cache.zdicts.get(hash);
    if (known) return known;
    const v = this.sql.selectValue.get(threadId, hash);
    if (!v || v.type !== DICTIONARY_TYPE) return undefined;
    cache.zdicts.set(hash, v.value);
    return v.value;
  }

  /**
   * Inside a write transaction: the dictionary of the thread's latest row, so a new process (the
   * next CLI run) keeps deflating against it instead of starting a dictionary of its own.
   */
  private latestDictionary(threadId: string, cache: ThreadCache): Dictionary | undefined {
    const type = this.sql.selectLatestType.get(threadId)?.type;
    const hash = type === undefined ? undefined : dictionaryHashOf(type);
    const bytes = hash === undefined ? undefined : this.dictionary(threadId, hash, cache);
    return hash !== undefined && bytes ? { hash, bytes } : undefined;
  }

  /** Synchronous part of a read: every row the tuple needs. */
  private readTuple(row: CheckpointRow): TupleRows {
    const threadId = row.thread_id;
    const epoch = this.sql.selectEpoch.get(threadId)?.epoch;
    const known = this.caches.get(threadId);
    const cache = this.touchCache(threadId, known && known.epoch === epoch ? known : newThreadCache(epoch));

    const stored = unpackCheckpointRow(row, (hash) => this.dictionary(threadId, hash, cache));
    const refs = JSON.parse(stored.refsJson) as Record<string, ChannelRef>;
    const values = new Map<string, { type: string; value: Buffer }>();
    const messages = new Map<string, LoadedRow[]>();
    const sends: TupleRows["sends"] = new Map();
    const valueRow = (hash: string) => {
      const v = this.sql.selectValue.get(threadId, hash);
      if (!v) throw new HarnessError("storage", `Checkpoint ${row.checkpoint_id} of thread ${threadId} references a missing value.`);
      return v;
    };
    for (const [channel, ref] of Object.entries(refs)) {
      if ("s" in ref) {
        sends.set(
          channel,
          ref.s.map((p) => ({ node: p.n, rows: this.log.readRows(threadId, p.m, cache), type: p.t, rest: "j" in p ? p.j : valueRow(p.h).value })),
        );
      } else if ("m" in ref) messages.set(channel, this.log.readRows(threadId, ref.m, cache));
      else if ("h" in ref) values.set(channel, valueRow(ref.h));
    }
    const readWriteMessages = (ws: WriteRow[]) => {
      const out = new Map<WriteRow, LoadedRow[]>();
      for (const w of ws) {
        if (w.type === MSGS || w.type === MSG) {
          out.set(w, this.log.readRows(threadId, JSON.parse(String(w.value)) as SeqRange[], cache));
        } else if (w.type === SEND) {
          out.set(w, this.log.readRows(threadId, (JSON.parse(String(w.value)) as { m: SeqRange[] }).m, cache));
        }
      }
      return out;
    };
    const writes = this.sql.selectWrites.all(threadId, row.checkpoint_ns, row.checkpoint_id);
    // Only checkpoints older than format v4 need their parent's sends; reading them always is one
    // indexed query and keeps this function synchronous.
    const parentSends = row.parent_checkpoint_id
      ? this.sql.selectSends.all(threadId, row.checkpoint_ns, row.parent_checkpoint_id, TASKS)
      : [];
    return {
      row,
      skeleton: { type: stored.type, bytes: stored.skeleton },
      refs,
      values,
      messages,
      sends,
      writes,
      writeMessages: readWriteMessages(writes),
      parentSends,
      parentSendMessages: readWriteMessages(parentSends),
      cache,
    };
  }

  private async decodeWrite(r: TupleRows, w: WriteRow, messages: Map<WriteRow, LoadedRow[]>): Promise<unknown> {
    if (w.type === MSGS) return this.log.revive(r.cache, messages.get(w)!);
    if (w.type === MSG) return (await this.log.revive(r.cache, messages.get(w)!))[0];
    if (w.type === SEND) {
      const stored = JSON.parse(String(w.value)) as { n: string; j: string };
      const rest = (await this.serde.loadsTyped("json", stored.j)) as Record<string, unknown>;
      return { node: stored.n, args: { ...rest, messages: await this.log.revive(r.cache, messages.get(w)!) } };
    }
    if (w.type === "bytes" && w.value !== null) return new Uint8Array(Buffer.from(w.value));
    return this.serde.loadsTyped(w.type, w.value ?? "");
  }

  /** Asynchronous part of a read: deserialization. */
  private async buildTuple(r: TupleRows): Promise<CheckpointTuple> {
    const { row } = r;
    const checkpoint = (await this.serde.loadsTyped(r.skeleton.type, r.skeleton.bytes)) as Checkpoint;
    const channelValues: Record<string, unknown> = {};
    for (const [channel, ref] of Object.entries(r.refs)) {
      if ("s" in ref) {
        channelValues[channel] = await Promise.all(
          r.sends.get(channel)!.map(async (p) => {
            const rest = (await this.serde.loadsTyped(p.type, p.rest)) as Record<string, unknown>;
            return { node: p.node, args: { ...rest, messages: await this.log.revive(r.cache, p.rows) } };
          }),
        );
      } else if ("j" in ref) channelValues[channel] = await this.serde.loadsTyped("json", ref.j);
      else if ("h" in ref) {
        const v = r.values.get(channel)!;
        // the driver returns a Buffer; the value that was put was a plain Uint8Array
        channelValues[channel] = v.type === "bytes" ? new Uint8Array(v.value) : await this.serde.loadsTyped(v.type, v.value);
      } else channelValues[channel] = await this.log.revive(r.cache, r.messages.get(channel)!);
    }
    checkpoint.channel_values = channelValues;

    const sorted = [...r.writes].sort((a, b) =>
      compareWritesSortKeys(writesSortKey(a.task_path, a.task_id, a.idx), writesSortKey(b.task_path, b.task_id, b.idx)),
    );
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      sorted.map(async (w): Promise<CheckpointPendingWrite> => [w.task_id, w.channel, await this.decodeWrite(r, w, r.writeMessages)]),
    );
    if (checkpoint.v < 4 && row.parent_checkpoint_id) {
      // Format < 4 kept pending sends on the checkpoint; newer LangGraph expects them as a channel.
      checkpoint.channel_values[TASKS] = await Promise.all(r.parentSends.map((w) => this.decodeWrite(r, w, r.parentSendMessages)));
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id } },
      checkpoint,
      metadata: (await this.serde.loadsTyped("json", row.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (row.parent_checkpoint_id) {
      tuple.parentConfig = {
        configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.parent_checkpoint_id },
      };
    }
    return tuple;
  }
}
