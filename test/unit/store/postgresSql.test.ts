// The SQL the Postgres driver sends for the stores' SQLite spellings (store/postgres/sqlText.ts):
// parameters numbered, SQLite's INSERT OR verbs as ON CONFLICT, reads told from writes. Pure
// text; the statements themselves run on a real server in the Postgres tier.
import { test } from "node:test";
import assert from "node:assert/strict";
import { isReadOnly, rewriteParams, translateSqlite } from "../../../extension/harness/store/postgres/sqlText.js";
import { redactUrl } from "../../../extension/harness/store/postgres/url.js";
import { chooseDatabase } from "../../../extension/harness/store/postgres/config.js";

test("? and @name parameters become $n, outside quotes; undefined binds NULL, a Uint8Array a Buffer", () => {
  const p = rewriteParams("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ?");
  assert.equal(p.sql, "SELECT * FROM t WHERE a = $1 AND b = '?' AND c = $2");
  assert.deepEqual(p.bind([1, undefined]), [1, null]);
  const n = rewriteParams("INSERT INTO t VALUES (@id, @now, @now)");
  assert.equal(n.sql, "INSERT INTO t VALUES ($1, $2, $2)");
  assert.deepEqual(n.bind([{ now: 5, id: "x" }]), ["x", 5]);
  assert.ok(Buffer.isBuffer(rewriteParams("SELECT ?").bind([new Uint8Array([1])])[0]));
  assert.throws(() => rewriteParams("SELECT ? WHERE x = @x"), /mixes/);
});

test("INSERT OR IGNORE / OR REPLACE become ON CONFLICT on the table's key; an unknown table is refused", () => {
  assert.equal(
    translateSqlite("INSERT OR IGNORE INTO blobs (sha256, bytes) VALUES (?, ?)"),
    "INSERT INTO blobs (sha256, bytes) VALUES (?, ?) ON CONFLICT DO NOTHING",
  );
  assert.equal(
    translateSqlite("INSERT OR REPLACE INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?) ON CONFLICT (version) DO UPDATE SET name = EXCLUDED.name, applied_at = EXCLUDED.applied_at",
  );
  assert.throws(() => translateSqlite("INSERT OR REPLACE INTO threads (thread_id) VALUES (?)"), /no conflict key/);
  assert.equal(translateSqlite("UPDATE runs SET x = 1"), "UPDATE runs SET x = 1");
  assert.equal(isReadOnly("  select 1"), true);
  assert.equal(isReadOnly("INSERT INTO t VALUES (1) RETURNING *"), false);
  assert.equal(isReadOnly("WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x"), false, "a CTE may write: locked");
});

test("a database URL's password never reaches a message, whatever its scheme (a refused --database quotes what it was given)", () => {
  assert.equal(redactUrl("cannot reach postgres://ops:s3cret@db:5432/deerflow"), "cannot reach postgres://ops:***@db:5432/deerflow");
  // A password with an unencoded @ leaves no tail; libpq's query-parameter passwords are hidden too.
  assert.equal(redactUrl("postgres://ops:p@ss@w0rd@db:5432/x and mail@example.com"), "postgres://ops:***@db:5432/x and mail@example.com");
  assert.equal(redactUrl("postgres://db:5432/x?user=ops&password=hunter2&sslmode=disable"), "postgres://db:5432/x?user=ops&password=***&sslmode=disable");
  assert.equal(redactUrl("postgresql://db/x?sslpassword=k3y"), "postgresql://db/x?sslpassword=***");
  assert.throws(
    () => chooseDatabase("mysql://ops:hunter2@db/x", undefined),
    (e: { code?: string; message?: string }) => e.code === "usage" && /--database takes a postgres:\/\/ URL/.test(e.message ?? "") && !(e.message ?? "").includes("hunter2"),
  );
});
