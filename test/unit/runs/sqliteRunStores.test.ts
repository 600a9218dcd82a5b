// The run, lease and journal stores against the conformance suite: real SQLite files, or a real
// Postgres server in the Postgres tier (test/fixtures/testDatabase.ts).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { createRunStore } from "../../../extension/harness/store/runs.js";
import { createEventStore } from "../../../extension/harness/store/events.js";
import { createThreadStore } from "../../../extension/harness/store/threads.js";
import { runStoreConformance } from "./runStoreConformance.js";
import { testDatabase, testPostgresUrl } from "../../fixtures/testDatabase.js";

runStoreConformance(testPostgresUrl() ? "postgres" : "sqlite", () => {
  const file = testDatabase(join(mkdtempSync(join(tmpdir(), "deerflow-runs-")), "harness.db"));
  const db = openDatabase(file);
  const threads = createThreadStore(db, { workspaceFolder: "/ws" });
  let n = 0;
  return {
    runs: createRunStore(db),
    events: createEventStore(db),
    newThread: () => threads.create({ workspaceFolder: "/ws", threadId: `t${++n}` }).threadId,
    reopen: () => {
      const db2 = openDatabase(file);
      return { runs: createRunStore(db2), events: createEventStore(db2) };
    },
  };
});
