/**
 * The one seam between the stores and SQLite: the subset of a synchronous SQLite binding the
 * stores use (exec, prepared statements with run/get/all/iterate, transactions, pragmas, close).
 *
 * Two drivers implement it (ARCHITECTURE.md, "Persistence"): better-sqlite3 where its native
 * binary loads for the running Node, and Node's built-in `node:sqlite` where it does not (Node
 * ≥ 22.13: today's VS Code servers, code-server 4.139 on Node 24, Electron's Node on desktop).
 * Both must behave identically for the stores: rows are plain objects, BLOBs come back as
 * `Buffer`, errors carry better-sqlite3's string codes (`SQLITE_CONSTRAINT_UNIQUE`, …), and
 * transactions nest with savepoints. The conformance suites run on both (test/unit/store,
 * test/unit/runs, test/conformance).
 *
 * It is also the seam for Postgres when a team outgrows one machine (store/postgres/: a
 * synchronous driver over `pg` in a worker thread, issue 26). The stores' SQL is SQLite's; where
 * Postgres spells a statement differently, a store asks `dialect` and prepares that spelling.
 */

export type SqliteDriverName = "better-sqlite3" | "node:sqlite";
export type DriverName = SqliteDriverName | "postgres";
export type Dialect = "sqlite" | "postgres";

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/**
 * A prepared statement. `P` is the bind parameters (a tuple of positional values, or a one-element
 * tuple holding an object for `@name` parameters), `R` the row type. Rows are plain objects.
 */
export interface Statement<P extends unknown[] = unknown[], R = unknown> {
  run(...params: P): RunResult;
  get(...params: P): R | undefined;
  all(...params: P): R[];
  iterate(...params: P): IterableIterator<R>;
}

/**
 * How a transaction takes its lock: DEFERRED (a read snapshot) or IMMEDIATE (the write lock now).
 * On Postgres IMMEDIATE takes one database-wide advisory lock, so every store keeps SQLite's
 * one-writer-at-a-time semantics across processes; DEFERRED is a REPEATABLE READ, READ ONLY snapshot.
 */
export type TransactionMode = "deferred" | "immediate";

export interface Db {
  /** Which driver opened this connection. */
  readonly driver: DriverName;
  /** Whose SQL it speaks: the few statements Postgres spells differently are chosen by it. */
  readonly dialect: Dialect;
  /** The database file (":memory:" for an in-memory database); for Postgres, its URL without credentials. */
  readonly file: string;
  exec(sql: string): void;
  prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R>;
  /**
   * Runs `fn` inside a transaction and returns its result: COMMIT when it returns, ROLLBACK when
   * it throws. Nested calls become savepoints (an inner failure rolls back only the inner part).
   * `fn` must be synchronous: a promise returned from it is refused, since its work would run
   * after the COMMIT.
   */
  transaction<T>(mode: TransactionMode, fn: () => T): T;
  /** Reads one pragma's value (the first column of its first row), e.g. `pragma("user_version")`. */
  pragma(name: string): unknown;
  readonly inTransaction: boolean;
  /**
   * Postgres only: calls `listener` with the thread id of every event journaled by any connection
   * (LISTEN/NOTIFY, postgres/notify.ts). SQLite's counterpart is a watch on the file's folder
   * (runs/manager.ts).
   */
  watchEvents?(listener: (threadId: string) => void): () => void;
  close(): void;
}

/**
 * An error raised by SQLite, whichever driver ran the statement. `code` is SQLite's extended
 * result code name as better-sqlite3 spells it (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_PRIMARYKEY`, …):
 * the stores branch on it, never on the message.
 */
export class SqliteError extends Error {
  override readonly name = "SqliteError";
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
