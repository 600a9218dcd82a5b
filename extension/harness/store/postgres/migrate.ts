/**
 * Brings a Postgres database's schema up to date (db.ts `migrate` for the postgres dialect).
 * `schema_migrations` is the source of truth here (SQLite's is `PRAGMA user_version`). Everything
 * runs in ONE transaction under the write lock (an IMMEDIATE transaction's advisory lock), so two
 * `deerflow serve` processes starting on a fresh database never both apply a migration, and a
 * failed migration leaves nothing half-applied (Postgres' DDL is transactional).
 *
 * `ledger`: the table that records the list's versions. The workspace schema's is
 * `schema_migrations`; another list on the same database (long-term memory,
 * memoryMigrations.ts) keeps its own, so each list's versions count only its own migrations.
 */
import { HarnessError } from "../../errors.js";
import type { Migration } from "../migrations/index.js";
import type { Db } from "../sqlite/types.js";

export function migratePostgres(db: Db, list: readonly Migration[], o: { ledger?: string; now?: () => number } = {}): void {
  const { ledger = "schema_migrations", now = Date.now } = o;
  if (!/^[a-z_]+$/.test(ledger)) throw new TypeError(`Not a ledger table name: ${ledger}`);
  db.transaction("immediate", () => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${ledger} (
  version    BIGINT PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`);
    const current = db.prepare<[], { v: number | null }>(`SELECT MAX(version) AS v FROM ${ledger}`).get()?.v ?? 0;
    if (current > list.length) {
      throw new HarnessError(
        "storage",
        `The Postgres database ${db.file} has schema version ${current}, newer than this build knows (${list.length}). Update DeerFlow.`,
      );
    }
    const record = db.prepare(`INSERT INTO ${ledger} (version, name, applied_at) VALUES (?, ?, ?)`);
    for (let i = current; i < list.length; i++) {
      db.exec(list[i]!.sql);
      record.run(i + 1, list[i]!.name, now());
    }
  });
}
