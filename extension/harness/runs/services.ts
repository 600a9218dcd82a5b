/**
 * The run system of one workspace database: stores, journal and manager, wired once per process
 * (the CLI per invocation, the harness server per workspace folder).
 */
import type { WorkspaceStore } from "../store/db.js";
import { createEventStore } from "../store/events.js";
import { createRunStore } from "../store/runs.js";
import { Journal } from "./journal.js";
import { RunManager } from "./manager.js";
import { currentOwnerId } from "./owner.js";
import type { DatabaseClock } from "./sweep.js";

export interface RunSystemOptions {
  /** DeerFlow's run_ownership.lease_seconds, in ms (DEERFLOW_LEASE_TTL_MS wins: the tests' short lease). */
  leaseTtlMs?: number;
  /** DeerFlow's run_ownership.grace_seconds, in ms. */
  graceMs?: number;
  /** Lease times from the database's clock (runs/sweep.ts); this machine's otherwise. */
  clock?: DatabaseClock;
}

export function openRunSystem(store: WorkspaceStore, opts: RunSystemOptions = {}): RunManager {
  const envTtl = Number(process.env.DEERFLOW_LEASE_TTL_MS);
  const leaseTtlMs = Number.isFinite(envTtl) && envTtl > 0 ? envTtl : opts.leaseTtlMs;
  const clock = opts.clock?.now;
  return new RunManager({
    runs: createRunStore(store.db, clock),
    ...(clock ? { clock } : {}),
    ...(opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {}),
    journal: new Journal(createEventStore(store.db), { inTransaction: () => store.db.inTransaction }),
    changes: store.fileChanges,
    owner: currentOwnerId(),
    // Watched to learn of other processes' writes: a SQLite file's folder. Postgres has no
    // folder to watch: LISTEN/NOTIFY wakes waiters there (store/postgres/notify.ts).
    ...(store.db.dialect === "sqlite" ? { dbFile: store.file } : {}),
    ...(store.db.watchEvents ? { watchEvents: store.db.watchEvents.bind(store.db) } : {}),
    ...(leaseTtlMs ? { leaseTtlMs } : {}),
  });
}
