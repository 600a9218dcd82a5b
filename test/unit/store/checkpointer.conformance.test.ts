// Runs the conformance suite against our saver and, to prove the suite itself, the stock SqliteSaver.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { storageDriver } from "../../../extension/harness/store/sqlite/open.js";
import { LinearSqliteSaver } from "../../../extension/harness/store/checkpointer.js";
import { runCheckpointerConformance, type SaverHandle } from "./checkpointerConformance.js";
import { testDatabase, testPostgresUrl } from "../../fixtures/testDatabase.js";

function tempFile(): { file: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-ckpt-"));
  return { file: join(dir, "harness.db"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

runCheckpointerConformance(
  `LinearSqliteSaver on ${testPostgresUrl() ? "postgres" : storageDriver().name}`,
  (): SaverHandle => {
    const temp = tempFile();
    const { cleanup } = temp;
    const file = testDatabase(temp.file);
    const dbs = [openDatabase(file)];
    return {
      saver: new LinearSqliteSaver(dbs[0]!),
      reopen: () => {
        const db = openDatabase(file);
        dbs.push(db);
        return new LinearSqliteSaver(db);
      },
      close: () => {
        for (const db of dbs) db.close();
        cleanup();
      },
    };
  },
  { orderedPendingWrites: true },
);

/**
 * The control group: the stock saver must pass the same suite (so a failure of ours is ours, not
 * the suite's). It is built on better-sqlite3 itself, so it runs on the runtimes where that
 * binary loads (the Node 20 tier); our saver runs on both drivers above.
 */
function betterSqliteLoads(): boolean {
  try {
    new Database(":memory:").close();
    return true;
  } catch {
    return false;
  }
}

// (Not again in the Postgres tier: it tests the suite, which the SQLite tiers have done.)
if (betterSqliteLoads() && !testPostgresUrl()) runCheckpointerConformance(
  "stock SqliteSaver (@langchain/langgraph-checkpoint-sqlite)",
  (): SaverHandle => {
    const { file, cleanup } = tempFile();
    const dbs = [new Database(file)];
    return {
      saver: new SqliteSaver(dbs[0]!),
      reopen: () => {
        const db = new Database(file);
        dbs.push(db);
        return new SqliteSaver(db);
      },
      close: () => {
        for (const db of dbs) db.close();
        cleanup();
      },
    };
  },
  { orderedPendingWrites: false },
);
