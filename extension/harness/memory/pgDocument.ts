/**
 * The memory document on Postgres (issue 26): one row of `memory_document`
 * (store/postgres/memoryMigrations.ts) that every `deerflow serve` on the database shares, with
 * memory.json's rules (store.ts: validated on every read, scrubbed and validated on every write,
 * a broken one never overwritten by an update).
 *
 * Lost updates: every write runs in an IMMEDIATE transaction, which on Postgres holds the
 * database-wide advisory write lock (store/postgres/syncPg.ts), and `update` reads inside it. So
 * two writers in two processes (an extraction on one worker, a promote on another) are
 * serialized: the second reads what the first wrote. The lock rather than SELECT … FOR UPDATE:
 * it is the lock every store's writes already take, so the queue rows an extraction commits with
 * the document (its watermark, the lease check, service.ts) are under the same one, and a
 * document row that does not exist yet (the first write) is covered too, where a row lock has
 * nothing to lock.
 */
import { randomUUID } from "node:crypto";
import { HarnessError, errorMessage } from "../errors.js";
import type { Db } from "../store/sqlite/types.js";
import { emptyMemory, type MemoryDoc } from "./schema.js";
import { cleanForWrite, parseStored, type MemoryDocumentStore } from "./store.js";

interface Row {
  doc: string;
  version: number;
  generation: string;
}

export class PostgresMemoryDocument implements MemoryDocumentStore {
  constructor(private readonly db: Db) {}

  get location(): string {
    return `the memory_document table of ${this.db.file}`;
  }

  private row(): Row | undefined {
    return this.db.prepare<[], Row>("SELECT doc, version, generation FROM memory_document WHERE id = 1").get();
  }

  read(): MemoryDoc {
    const row = this.row();
    if (!row) return emptyMemory();
    let raw: unknown;
    try {
      raw = JSON.parse(row.doc);
    } catch (err) {
      throw new HarnessError("memory_invalid", `The memory in ${this.location} is not valid JSON (${errorMessage(err)}). Fix it or run "deerflow memory clear --database URL"; it is left as it is.`);
    }
    return parseStored(raw, this.location);
  }

  version(): number {
    return this.row()?.version ?? 0;
  }

  generation(): string {
    return this.row()?.generation ?? "0";
  }

  replace(doc: MemoryDoc): MemoryDoc {
    return this.db.transaction("immediate", () => this.write(doc, true));
  }

  update(change: (doc: MemoryDoc) => MemoryDoc | undefined, o: { userChange?: boolean; then?: (stored: MemoryDoc) => void } = {}): MemoryDoc {
    return this.db.transaction("immediate", () => {
      const current = this.read();
      const next = change(current);
      if (next === undefined) return current;
      const stored = this.write(next, o.userChange === true);
      o.then?.(stored);
      return stored;
    });
  }

  /**
   * Inside the caller's transaction. `version` is the write's time, and always grows (two writes
   * in one millisecond, or a clock that stepped back, still give a newer version), since the
   * editor treats an unchanged version as an unchanged document.
   */
  private write(doc: MemoryDoc, userChange: boolean): MemoryDoc {
    const clean = cleanForWrite(doc);
    const now = Date.now();
    const upsert = `INSERT INTO memory_document (id, doc, version, generation, updated_at) VALUES (1, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, version = GREATEST(excluded.version, memory_document.version + 1), updated_at = excluded.updated_at`;
    this.db.prepare(userChange ? `${upsert}, generation = excluded.generation` : upsert).run(JSON.stringify(clean), now, userChange ? randomUUID() : "0", now);
    return clean;
  }
}
