/**
 * The node:sqlite driver: Node's built-in SQLite (`DatabaseSync`, unflagged since Node 22.13),
 * used where better-sqlite3's native binary does not load — code-server 4.139 and today's VS Code
 * servers on Node 22/24, and desktop VS Code, whose extension host is Electron's Node. No native
 * module ships for it. Differences from better-sqlite3 it hides (../../../../shared/recipes
 * node-sqlite.md): rows are null-prototype objects (made plain here), BLOBs are Uint8Arrays (made
 * Buffers here), errors carry a numeric `errcode` (named here), and there is no `.pragma()` or
 * `.transaction()` helper.
 */
import { sqliteCodeName } from "./errorCodes.js";
import { SqliteError, type Db, type RunResult, type Statement, type TransactionMode } from "./types.js";
import { TransactionRunner } from "./transaction.js";

/*
 * The subset of `node:sqlite` used here, declared locally: @types/node is pinned to Node 20 (the
 * oldest runtime we support), whose typings have no node:sqlite.
 */
interface StatementSync {
  run(...params: unknown[]): RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): Iterator<unknown>;
}
interface DatabaseSync {
  exec(sql: string): void;
  prepare(sql: string): StatementSync;
  close(): void;
  readonly isOpen: boolean;
}
export interface NodeSqliteModule {
  DatabaseSync: new (path: string) => DatabaseSync;
}

function wrapError(err: unknown): unknown {
  if (err instanceof Error && (err as { code?: unknown }).code === "ERR_SQLITE_ERROR") {
    const errcode = (err as { errcode?: unknown }).errcode;
    return new SqliteError(err.message, typeof errcode === "number" ? sqliteCodeName(errcode) : "SQLITE_ERROR", { cause: err });
  }
  return err;
}

function call<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw wrapError(err);
  }
}

/** A plain object (the stores spread, compare and JSON rows), with BLOB columns as Buffers. */
function plainRow<R>(row: unknown): R {
  const out: Record<string, unknown> = {};
  const src = row as Record<string, unknown>;
  for (const key in src) {
    const v = src[key];
    out[key] = v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v;
  }
  return out as R;
}

class NodeStatement<P extends unknown[], R> implements Statement<P, R> {
  constructor(private readonly stmt: StatementSync) {}
  run(...params: P): RunResult {
    return call(() => this.stmt.run(...params));
  }
  get(...params: P): R | undefined {
    const row = call(() => this.stmt.get(...params));
    return row === undefined ? undefined : plainRow<R>(row);
  }
  all(...params: P): R[] {
    return call(() => this.stmt.all(...params)).map((r) => plainRow<R>(r));
  }
  *iterate(...params: P): IterableIterator<R> {
    const it = call(() => this.stmt.iterate(...params));
    for (;;) {
      const next = call(() => it.next());
      if (next.done) return;
      yield plainRow<R>(next.value);
    }
  }
}

export class NodeSqliteDb implements Db {
  readonly driver = "node:sqlite" as const;
  readonly dialect = "sqlite" as const;
  private readonly tx: TransactionRunner;

  constructor(
    private readonly db: DatabaseSync,
    readonly file: string,
  ) {
    this.tx = new TransactionRunner({ exec: (sql) => this.exec(sql), nativeInTransaction: () => this.isTransaction() });
  }

  static open(mod: NodeSqliteModule, file: string): NodeSqliteDb {
    return new NodeSqliteDb(call(() => new mod.DatabaseSync(file)), file);
  }

  /** `isTransaction` exists from Node 22.16 / 24.0; older 22.x report undefined (unknown). */
  private isTransaction(): boolean | undefined {
    const v = (this.db as { isTransaction?: unknown }).isTransaction;
    return typeof v === "boolean" ? v : undefined;
  }

  exec(sql: string): void {
    call(() => this.db.exec(sql));
  }
  prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> {
    return new NodeStatement<P, R>(call(() => this.db.prepare(sql)));
  }
  transaction<T>(mode: TransactionMode, fn: () => T): T {
    return this.tx.run(mode, fn);
  }
  pragma(name: string): unknown {
    const row = call(() => this.db.prepare(`PRAGMA ${name}`).get());
    if (row === undefined) return undefined;
    for (const key in row) return (row as Record<string, unknown>)[key];
    return undefined;
  }
  get inTransaction(): boolean {
    return this.isTransaction() ?? this.tx.active;
  }
  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}
