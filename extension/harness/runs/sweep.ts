/**
 * Runs that nobody leaves running (issue 32 item 4): each `deerflow serve` process settles the
 * runs a dead worker left `running`, by itself, whether or not anyone touches their threads —
 * DeerFlow's orphan reconciliation. Every `run_ownership.lease_seconds / 3` it calls
 * RunManager.recover(): a run whose owner is provably gone (same host, dead pid) at once, one
 * whose lease expired more than `grace_seconds` ago otherwise. Lease times are the database's
 * (DatabaseClock): two machines' clocks never decide it.
 *
 * A database that is down makes a sweep throw: it is logged once per outage and the next tick
 * tries again. Nothing here may end the process.
 */
import type { Db } from "../store/sqlite/types.js";
import type { RunManager } from "./manager.js";

/**
 * The database's time, as an offset from this machine's clock, re-read on every sync() (the
 * sweep's tick). SQLite is this machine's own file: its clock is this one.
 */
export class DatabaseClock {
  private offsetMs = 0;

  constructor(private readonly db: Db) {
    this.sync();
  }

  readonly now = (): number => Date.now() + this.offsetMs;

  /** Re-reads the database's time; keeps the last offset when the database does not answer. */
  sync(): void {
    if (this.db.dialect !== "postgres") return;
    const before = Date.now();
    const row = this.db.prepare("SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) AS now_ms").get() as { now_ms: number | string } | undefined;
    const after = Date.now();
    const dbNow = Number(row?.now_ms);
    if (Number.isFinite(dbNow)) this.offsetMs = dbNow - Math.round((before + after) / 2);
  }
}

export interface SweepLog {
  info(message: string): void;
  warn(message: string): void;
}

/** Starts the sweep of one workspace's runs; the returned function stops it. */
export function startRunSweep(manager: RunManager, clock: DatabaseClock | undefined, log: SweepLog, label: string): () => void {
  let failing = false;
  const tick = (): void => {
    try {
      clock?.sync();
      for (const run of manager.recover()) log.info(`${label}: run ${run.run_id} of thread ${run.thread_id} had no live worker; settled as interrupted.`);
      if (failing) log.info(`${label}: the run sweep reaches the database again.`);
      failing = false;
    } catch (err) {
      if (!failing) log.warn(`${label}: the run sweep could not read the database (${err instanceof Error ? err.message : String(err)}); retrying every ${intervalMs / 1000} s.`);
      failing = true;
    }
  };
  // DeerFlow renews and reconciles every lease_seconds / 3.
  const intervalMs = Math.max(500, Math.floor(manager.leaseTtlMs / 3));
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
