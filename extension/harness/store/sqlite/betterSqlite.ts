/**
 * The better-sqlite3 driver: the design's database package, used wherever its native binary
 * loads for the running Node (it is compiled for one ABI: Node 20's 115 on this project's
 * machines). Rows are plain objects and BLOBs Buffers already; errors are re-raised as our
 * SqliteError with the same code.
 */
import type BetterSqlite3 from "better-sqlite3";
import { SqliteError, type Db, type RunResult, type Statement, type TransactionMode } from "./types.js";
import { TransactionRunner } from "./transaction.js";

type BetterCtor = typeof BetterSqlite3;

function wrapError(err: unknown): unknown {
  if (err instanceof Error && err.name === "SqliteError" && !(err instanceof SqliteError)) {
    const code = (err as { code?: unknown }).code;
    return new SqliteError(err.message, typeof code === "string" ? code : "SQLITE_ERROR", { cause: err });
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

class BetterStatement<P extends unknown[], R> implements Statement<P, R> {
  constructor(private readonly stmt: BetterSqlite3.Statement<unknown[], R>) {}
  run(...params: P): RunResult {
    return call(() => this.stmt.run(...params));
  }
  get(...params: P): R | undefined {
    return call(() => this.stmt.get(...params));
  }
  all(...params: P): R[] {
    return call(() => this.stmt.all(...params));
  }
  iterate(...params: P): IterableIterator<R> {
    return call(() => this.stmt.iterate(...params));
  }
}

export class BetterSqliteDb implements Db {
  readonly driver = "better-sqlite3" as const;
  readonly dialect = "sqlite" as const;
  private readonly tx: TransactionRunner;

  constructor(
    private readonly db: BetterSqlite3.Database,
    readonly file: string,
  ) {
    this.tx = new TransactionRunner({ exec: (sql) => this.exec(sql), nativeInTransaction: () => this.db.inTransaction });
  }

  static open(ctor: BetterCtor, file: string): BetterSqliteDb {
    return new BetterSqliteDb(call(() => new ctor(file)), file);
  }

  exec(sql: string): void {
    call(() => this.db.exec(sql));
  }
  prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> {
    return new BetterStatement<P, R>(call(() => this.db.prepare<unknown[], R>(sql)));
  }
  transaction<T>(mode: TransactionMode, fn: () => T): T {
    return this.tx.run(mode, fn);
  }
  pragma(name: string): unknown {
    return call(() => this.db.pragma(name, { simple: true }));
  }
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }
  close(): void {
    if (this.db.open) this.db.close();
  }
}
