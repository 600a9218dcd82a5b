/**
 * LangGraph's own conformance suite for checkpoint savers, against LinearSqliteSaver on this
 * runtime's SQLite driver, or on Postgres in the Postgres tier. Every instance gets its own database file (the suite requires that
 * instances never see each other's state).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { openDatabase } from "../../extension/harness/store/db.js";
import type { Db } from "../../extension/harness/store/sqlite/types.js";
import { LinearSqliteSaver } from "../../extension/harness/store/checkpointer.js";
import { storageDriver } from "../../extension/harness/store/sqlite/open.js";
import { testDatabase, testPostgresUrl } from "../fixtures/testDatabase.js";

const open = new Map<LinearSqliteSaver, { db: Db; dir: string }>();

validate<LinearSqliteSaver>({
  checkpointerName: `LinearSqliteSaver (${testPostgresUrl() ? "postgres" : storageDriver().name} on ${storageDriver().runtime})`,
  createCheckpointer() {
    const dir = mkdtempSync(join(tmpdir(), "deerflow-lg-conformance-"));
    // In the Postgres tier (scripts/ci/postgres-tests.sh) a fresh schema on the real server.
    const db = openDatabase(testDatabase(join(dir, "harness.db")));
    const saver = new LinearSqliteSaver(db);
    open.set(saver, { db, dir });
    return saver;
  },
  destroyCheckpointer(saver) {
    const entry = open.get(saver);
    if (!entry) return;
    open.delete(saver);
    entry.db.close();
    rmSync(entry.dir, { recursive: true, force: true });
  },
});
