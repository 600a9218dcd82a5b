/**
 * Where one user's long-term memory is kept: the one seam between memory and its storage, so
 * service.ts, the harness server and the CLI do not care which.
 *
 * - No database URL (the panel's harness, the CLI, `deerflow serve` on SQLite): the data
 *   directory, as ever: the queue in `<dataDir>/memory/memory.db`, the document in memory.json.
 * - A Postgres URL (`deerflow serve --database postgres://…`, `deerflow memory … --database`):
 *   both in that database (store/postgres/memoryMigrations.ts), over ONE connection of the
 *   synchronous driver the workspace stores use (store/postgres/syncPg.ts), so what an extraction
 *   changes (the document, the thread's watermark) commits together, and every worker on the
 *   database shares one memory, one queue and one processor lease.
 *
 * Scopes (scope.ts) key a workspace's facts by its folder's real path; on a server that is the
 * path on the server's machine (serve's `--workspace DIR`), which is what its runs report.
 *
 * Nothing is opened until used: `deerflow memory show` on a data directory creates no database.
 */
import { MemoryQueue, openMemoryDatabase } from "./queue.js";
import { FileMemoryDocument, type MemoryDocumentStore } from "./store.js";
import { PostgresMemoryDocument } from "./pgDocument.js";
import { emptyMemory } from "./schema.js";
import type { Db } from "../store/sqlite/types.js";
import { isPostgresUrl } from "../store/postgres/url.js";

export interface MemoryStorageOptions {
  dataDir: string;
  /** A postgres:// URL: memory lives in that database. Anything else (undefined, "sqlite"): the data directory. */
  database?: string;
}

export class MemoryStorage {
  private queueValue: MemoryQueue | undefined;
  private documentValue: MemoryDocumentStore | undefined;
  private pg: Db | undefined;
  private readonly url: string | undefined;

  constructor(private readonly o: MemoryStorageOptions) {
    this.url = o.database !== undefined && isPostgresUrl(o.database) ? o.database : undefined;
  }

  get backend(): "sqlite" | "postgres" {
    return this.url ? "postgres" : "sqlite";
  }

  private get postgres(): Db {
    this.pg ??= openMemoryDatabase(this.url!);
    return this.pg;
  }

  get queue(): MemoryQueue {
    this.queueValue ??= this.url ? MemoryQueue.attach(this.postgres) : MemoryQueue.open(this.o.dataDir);
    return this.queueValue;
  }

  get document(): MemoryDocumentStore {
    this.documentValue ??= this.url ? new PostgresMemoryDocument(this.postgres) : new FileMemoryDocument(this.o.dataDir);
    return this.documentValue;
  }

  /**
   * Forget everything (memory clear, the panel's Forget all): the queue's entries are dropped
   * (their turns count as seen, queue.ts) and an empty document replaces the stored one, broken
   * or not, as a new generation. On Postgres in one transaction. Returns the entries dropped.
   */
  clear(): number {
    const run = (): number => {
      const dropped = this.queue.clear();
      this.document.replace(emptyMemory());
      return dropped;
    };
    return this.url ? this.postgres.transaction("immediate", run) : run();
  }

  close(): void {
    this.queueValue?.close();
    this.queueValue = undefined;
    this.documentValue = undefined;
    this.pg?.close();
    this.pg = undefined;
  }
}
