/**
 * Brings a Postgres database's schema up to date (db.ts `migrate` for the postgres dialect).
 * `schema_migrations` is the source of truth here (SQLite's is `PRAGMA user_version`). Everything
 * runs in ONE transaction under the write lock (an IMMEDIATE transaction's advisory lock), so two
 * `deerflow serve` processes starting on a fresh database never both apply a migration, and a
 * failed migration leaves nothing half-applied (Postgres' DDL is transactional).
 */
import { HarnessError } from "../../errors.js";
import type { Migration } from "../migrations/index.js";
import type { Db } from "../sqlite/types.js";

export function migratePostgres(db: Db, list: readonly Migration[], now: () => number = Date.now): void {
  db.transaction("immediate", () => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
  version    BIGINT PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`);
    const current = db.prepare<[], { v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").get()?.v ?? 0;
    if (current > list.length) {
      throw new HarnessError(
        "storage",
        `The Postgres database ${db.file} has schema version ${current}, newer than this build knows (${list.length}). Update DeerFlow.`,
      );
    }
    const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    for (let i = current; i < list.length; i++) {
      db.exec(list[i]!.sql);
      record.run(i + 1, list[i]!.name, now());
    }
  });
}
