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

export function openRunSystem(store: WorkspaceStore, opts: { leaseTtlMs?: number } = {}): RunManager {
  const envTtl = Number(process.env.DEERFLOW_LEASE_TTL_MS);
  const leaseTtlMs = opts.leaseTtlMs ?? (Number.isFinite(envTtl) && envTtl > 0 ? envTtl : undefined);
  return new RunManager({
    runs: createRunStore(store.db),
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
