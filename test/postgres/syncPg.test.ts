// The synchronous Postgres driver (store/postgres/syncPg.ts) on a real server: SQLite's error
// codes, and a dropped connection: replaced outside a transaction, never inside one (its work is
// gone, and a COMMIT on a fresh connection would report success). Run by scripts/ci/postgres-tests.sh.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { PostgresDb } from "../../extension/harness/store/postgres/syncPg.js";
import { POSTGRES_TEST_ENV, postgresSchemaUrl, testPostgresUrl } from "../fixtures/testDatabase.js";

const base = testPostgresUrl();
assert.ok(base, `${POSTGRES_TEST_ENV} must name a Postgres server (scripts/ci/postgres-tests.sh sets it)`);
const url = postgresSchemaUrl(base, "syncPg.test");
const db = PostgresDb.open(url);
const admin = PostgresDb.open(url);
after(() => {
  db.close();
  admin.close();
});
db.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v BIGINT NOT NULL)");
const pid = () => db.prepare<[], { pid: number }>("SELECT pg_backend_pid() AS pid").get()!.pid;
/** Ends `db`'s server process and waits until it is gone (Postgres 14+: the timeout argument). */
const kill = (victim: number) => assert.equal(admin.prepare<[number], { ok: boolean }>("SELECT pg_terminate_backend(?, 5000) AS ok").get(victim)?.ok, true);

test("constraint violations carry SQLite's codes; BIGINT comes back as a number", () => {
  db.prepare("INSERT INTO kv (k, v) VALUES (?, ?)").run("a", 2 ** 40);
  assert.equal(db.prepare<[string], { v: number }>("SELECT v FROM kv WHERE k = ?").get("a")?.v, 2 ** 40);
  assert.throws(() => db.prepare("INSERT INTO kv (k, v) VALUES (?, ?)").run("a", 1), (e: { code?: string }) => e.code === "SQLITE_CONSTRAINT_PRIMARYKEY");
  assert.throws(() => db.prepare("INSERT INTO kv (k, v) VALUES (?, NULL)").run("b"), (e: { code?: string }) => e.code === "SQLITE_CONSTRAINT_NOTNULL");
});

test("a dropped connection: a transaction in progress fails whole; the next statement gets a new connection", () => {
  const first = pid();
  assert.throws(() =>
    db.transaction("immediate", () => {
      db.prepare("INSERT INTO kv (k, v) VALUES (?, ?)").run("lost", 1);
      kill(first);
      db.prepare("INSERT INTO kv (k, v) VALUES (?, ?)").run("lost2", 2);
    }),
  );
  assert.equal(db.inTransaction, false);
  const second = pid();
  assert.notEqual(second, first, "a new server process");
  assert.equal(db.prepare("SELECT k FROM kv WHERE k LIKE 'lost%'").all().length, 0, "nothing of the broken transaction");
  db.transaction("immediate", () => db.prepare("INSERT INTO kv (k, v) VALUES (?, ?)").run("after", 3));
  assert.equal(db.prepare<[string], { v: number }>("SELECT v FROM kv WHERE k = ?").get("after")?.v, 3);
});
