/**
 * One transaction helper for both drivers, so BEGIN/COMMIT/ROLLBACK and nesting behave the same
 * whichever binding runs underneath (better-sqlite3's own `.transaction()` has no node:sqlite
 * counterpart). Nested calls use savepoints, as better-sqlite3 does: an inner failure rolls back
 * the inner part only, and the outer transaction decides the rest.
 */
import type { TransactionMode } from "./types.js";

export interface TransactionHost {
  exec(sql: string): void;
  /** SQLite's own view (autocommit off), when the binding exposes it. */
  nativeInTransaction(): boolean | undefined;
  /** The statement that opens an outermost transaction (Postgres: its own spelling of the modes). */
  begin?(mode: TransactionMode): string;
}

export class TransactionRunner {
  private depth = 0;

  constructor(private readonly host: TransactionHost) {}

  get active(): boolean {
    return this.depth > 0;
  }

  run<T>(mode: TransactionMode, fn: () => T): T {
    const level = this.depth;
    const savepoint = `deerflow_sp${level}`;
    this.host.exec(level === 0 ? (this.host.begin?.(mode) ?? (mode === "immediate" ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")) : `SAVEPOINT ${savepoint}`);
    this.depth++;
    let result: T;
    try {
      result = fn();
      if (result !== null && typeof result === "object" && typeof (result as { then?: unknown }).then === "function") {
        throw new TypeError("A transaction function must be synchronous: its promise would settle after COMMIT.");
      }
    } catch (err) {
      this.depth--;
      this.rollback(level, savepoint);
      throw err;
    }
    this.depth--;
    try {
      this.host.exec(level === 0 ? "COMMIT" : `RELEASE ${savepoint}`);
    } catch (err) {
      this.rollback(level, savepoint);
      throw err;
    }
    return result;
  }

  private rollback(level: number, savepoint: string): void {
    try {
      if (level > 0) this.host.exec(`ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
      // SQLite may already have rolled back by itself (SQLITE_FULL, SQLITE_IOERR, …).
      else if (this.host.nativeInTransaction() !== false) this.host.exec("ROLLBACK");
    } catch {
      // The original error is the one worth reporting; a failed rollback leaves SQLite to undo
      // the transaction when the connection closes.
    }
  }
}
