/**
 * Runs and their event journal (issue: runs that nothing can lose).
 *
 * runs: one row per execution on a thread. Status moves only forward
 * (pending → running → success | error | timeout | interrupted) through conditional UPDATEs.
 * The partial unique index `runs_one_active` admits at most one pending/running run per thread:
 * the `reject` multitask strategy is enforced by SQLite itself, atomically across processes.
 * A running run is owned through a lease (`lease_owner`, `lease_expires_at`) that its worker
 * renews; an expired lease, or an owner process that is provably gone, means the run is dead.
 *
 * events: the journal. `seq` is thread-global and gap-free: it is assigned inside the INSERT's
 * write transaction as MAX(seq)+1, and SQLite serialises writers, so two processes appending to
 * one thread can neither collide nor skip. An event is stored before it is delivered.
 */
export const runsEventsSql = `
CREATE TABLE IF NOT EXISTS runs (
  run_id              TEXT PRIMARY KEY,
  thread_id           TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  status              TEXT NOT NULL CHECK (status IN ('pending','running','success','error','timeout','interrupted')),
  multitask_strategy  TEXT NOT NULL DEFAULT 'reject' CHECK (multitask_strategy IN ('reject','interrupt')),
  idempotency_key     TEXT,
  model               TEXT NOT NULL,
  input               TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(input)),
  context             TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(context)),
  lease_owner         TEXT,
  lease_expires_at    INTEGER,
  error               TEXT,
  usage               TEXT CHECK (usage IS NULL OR json_valid(usage)),
  created_at          INTEGER NOT NULL,
  started_at          INTEGER,
  ended_at            INTEGER,
  updated_at          INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id, created_at DESC);
CREATE UNIQUE INDEX IF NOT EXISTS runs_one_active ON runs (thread_id) WHERE status IN ('pending','running');
CREATE UNIQUE INDEX IF NOT EXISTS runs_idempotency ON runs (thread_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_running ON runs (status) WHERE status IN ('pending','running');

CREATE TABLE IF NOT EXISTS events (
  thread_id  TEXT NOT NULL,
  seq        INTEGER NOT NULL CHECK (seq > 0),
  run_id     TEXT NOT NULL,
  event      TEXT NOT NULL,
  data       TEXT NOT NULL CHECK (json_valid(data)),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_by_run ON events (run_id, seq);
`;
