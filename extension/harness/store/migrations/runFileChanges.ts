/**
 * The files a run changed through the agent's file tools (issue 13, "Changed files, reviewable and
 * revertible"): one row per (thread, run, virtual path), written by changes/tracker.ts.
 *
 * - `before_sha256`: the content before the run's FIRST write to the path, a key into `blobs`
 *   (the bytes are kept there); NULL when the file did not exist.
 * - `after_state` / `after_sha256`: what the run left. `unknown` only between the first write's
 *   start and its end: a process that died right there leaves it so. Recorded after every write
 *   and again when the run ends (bash may have changed or deleted the file since).
 * - `protected_rule`: the protected-path rule the path fell under when the run wrote it (NULL for
 *   an ordinary path); a revert of such a file needs the user's explicit consent for that rule.
 * - `reverted_at`: set once a revert restored `before`.
 *
 * Keyed by thread first so deleting a thread is a range delete; `before_sha256` is indexed for
 * deleteThread's "does another thread still need this blob" question.
 */
export const runFileChangesSql = `
CREATE TABLE IF NOT EXISTS run_file_changes (
  thread_id      TEXT NOT NULL,
  run_id         TEXT NOT NULL,
  path           TEXT NOT NULL,
  before_sha256  TEXT CHECK (before_sha256 IS NULL OR length(before_sha256) = 64),
  after_state    TEXT NOT NULL DEFAULT 'unknown' CHECK (after_state IN ('unknown','present','absent')),
  after_sha256   TEXT CHECK ((after_state = 'present') = (after_sha256 IS NOT NULL)),
  protected_rule TEXT,
  reverted_at    INTEGER,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (thread_id, run_id, path)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_file_changes_by_run ON run_file_changes (run_id);
CREATE INDEX IF NOT EXISTS run_file_changes_by_before ON run_file_changes (before_sha256) WHERE before_sha256 IS NOT NULL;
`;
