// The driver contract the stores rely on, on whichever driver this runtime chose (better-sqlite3
// on the Node 20 tier, node:sqlite on the Node 24 tier): plain rows, Buffer BLOBs, better-sqlite3's
// error codes, nested transactions, pragmas, and a second connection seeing committed rows.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chooseStorageDriver, describeStorageDriver, DRIVER_ENV, storageDriver } from "../../../extension/harness/store/sqlite/open.js";
import { SqliteError, type Db } from "../../../extension/harness/store/sqlite/types.js";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { HarnessError } from "../../../extension/harness/errors.js";

const nodeMajor = Number(process.versions.node.split(".")[0]);

function withDb(fn: (db: Db, file: string) => void) {
  return () => {
    const dir = mkdtempSync(join(tmpdir(), "deerflow-driver-"));
    const file = join(dir, "t.db");
    const db = storageDriver().open(file);
    try {
      db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB)");
      fn(db, file);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

describe(`SQLite driver (${describeStorageDriver()})`, () => {
  it("is better-sqlite3 where its binary loads, node:sqlite otherwise", () => {
    const d = storageDriver();
    if (d.name === "node:sqlite") {
      assert.ok(nodeMajor >= 22, "node:sqlite is only taken on Node 22+");
      assert.match(d.fallbackReason ?? "", /better-sqlite3 did not load/);
    } else {
      assert.equal(d.fallbackReason, undefined);
    }
    assert.equal(d.runtime, `Node ${process.versions.node}`);
  });

  it(
    "returns plain-object rows and BLOBs as Buffers, and binds positional and @named parameters",
    withDb((db) => {
      const bytes = new Uint8Array([0, 1, 2, 250]);
      db.prepare("INSERT INTO t (id, name, data) VALUES (?, ?, ?)").run(1, "a", bytes);
      const r = db.prepare("INSERT INTO t (id, name, data) VALUES (@id, @name, @data)").run({ id: 2, name: "b", data: Buffer.from("hi") });
      assert.equal(r.changes, 1);
      assert.equal(Number(r.lastInsertRowid), 2);
      const row = db.prepare<[number], { id: number; name: string; data: Buffer }>("SELECT * FROM t WHERE id = ?").get(1)!;
      assert.equal(Object.getPrototypeOf(row), Object.prototype);
      assert.deepEqual({ ...row, data: undefined }, { id: 1, name: "a", data: undefined });
      assert.ok(Buffer.isBuffer(row.data));
      assert.deepEqual([...row.data], [0, 1, 2, 250]);
      assert.deepEqual(db.prepare("SELECT id, name FROM t ORDER BY id").all(), [{ id: 1, name: "a" }, { id: 2, name: "b" }]);
      assert.deepEqual([...db.prepare<[], { id: number }>("SELECT id FROM t ORDER BY id").iterate()].map((x) => x.id), [1, 2]);
      assert.equal(db.prepare("SELECT * FROM t WHERE id = 99").get(), undefined);
    }),
  );

  it(
    "reports constraint violations with better-sqlite3's codes",
    withDb((db) => {
      const insert = db.prepare("INSERT INTO t (id, name) VALUES (?, ?)");
      insert.run(1, "a");
      const codeOf = (fn: () => unknown) => {
        try {
          fn();
        } catch (err) {
          assert.ok(err instanceof SqliteError, `a SqliteError, got ${String(err)}`);
          return err.code;
        }
        assert.fail("expected a SqliteError");
      };
      assert.equal(codeOf(() => insert.run(1, "b")), "SQLITE_CONSTRAINT_PRIMARYKEY");
      assert.equal(codeOf(() => insert.run(2, "a")), "SQLITE_CONSTRAINT_UNIQUE");
      assert.equal(codeOf(() => db.exec("NOT SQL")), "SQLITE_ERROR");
      assert.equal(codeOf(() => db.prepare("SELECT * FROM missing")), "SQLITE_ERROR");
    }),
  );

  it(
    "commits, rolls back on a throw, nests with savepoints, and refuses an async body",
    withDb((db) => {
      const insert = db.prepare("INSERT INTO t (id, name) VALUES (?, ?)");
      const count = () => (db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n;
      assert.equal(db.transaction("immediate", () => (insert.run(1, "a"), "done")), "done");
      assert.equal(count(), 1);
      assert.throws(() => db.transaction("immediate", () => {
        insert.run(2, "b");
        throw new Error("boom");
      }), /boom/);
      assert.equal(count(), 1);
      assert.equal(db.inTransaction, false);
      db.transaction("immediate", () => {
        insert.run(3, "c");
        assert.equal(db.inTransaction, true);
        assert.throws(() => db.transaction("immediate", () => {
          insert.run(4, "d");
          throw new Error("inner");
        }));
        insert.run(5, "e");
      });
      assert.deepEqual(db.prepare("SELECT id FROM t ORDER BY id").all(), [{ id: 1 }, { id: 3 }, { id: 5 }]);
      assert.throws(() => db.transaction("deferred", () => Promise.resolve(1)), /synchronous/);
      assert.equal(db.inTransaction, false);
    }),
  );

  it(
    "reads pragmas and shows committed rows to a second connection (WAL)",
    withDb((db, file) => {
      db.exec("PRAGMA journal_mode = WAL");
      assert.equal(db.pragma("journal_mode"), "wal");
      const other = storageDriver().open(file);
      try {
        db.prepare("INSERT INTO t (id, name) VALUES (1, 'a')").run();
        assert.deepEqual(other.prepare("SELECT name FROM t").all(), [{ name: "a" }]);
      } finally {
        other.close();
      }
    }),
  );

  it("opens the harness database with WAL, foreign keys and the busy timeout", () => {
    const dir = mkdtempSync(join(tmpdir(), "deerflow-driver-"));
    try {
      const db = openDatabase(join(dir, "h.db"));
      assert.equal(db.driver, storageDriver().name);
      assert.equal(db.pragma("journal_mode"), "wal");
      assert.equal(db.pragma("foreign_keys"), 1);
      assert.equal(db.pragma("busy_timeout"), 5000);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an unknown forced driver, and a forced driver this runtime lacks, saying why", () => {
    assert.throws(
      () => chooseStorageDriver({ [DRIVER_ENV]: "postgres" }),
      (err) => err instanceof HarnessError && err.code === "storage_unavailable" && /not a SQLite driver/.test(err.message),
    );
    if (nodeMajor < 22) {
      assert.throws(
        () => chooseStorageDriver({ [DRIVER_ENV]: "node:sqlite" }),
        (err) => err instanceof HarnessError && /node:sqlite, which does not work on Node 20\..*needs Node 22\.13/.test(err.message),
      );
    } else {
      assert.equal(chooseStorageDriver({ [DRIVER_ENV]: "node:sqlite" }).name, "node:sqlite");
    }
  });
});
