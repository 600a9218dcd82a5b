import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataDir, migrate, openDatabase, openWorkspaceStore, workspaceDbPath } from "../../../extension/harness/store/db.js";
import { migrations } from "../../../extension/harness/store/migrations/index.js";
import { HarnessError } from "../../../extension/harness/errors.js";

function withTemp(fn: (dir: string) => void | Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "deerflow-db-"));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

describe("openDatabase", () => {
  it(
    "sets WAL, foreign keys and busy_timeout, and applies every migration once",
    withTemp((dir) => {
      const file = join(dir, "h.db");
      const db = openDatabase(file);
      assert.equal(db.pragma("journal_mode"), "wal");
      assert.equal(db.pragma("foreign_keys"), 1);
      assert.equal(db.pragma("busy_timeout"), 5000);
      assert.equal(db.pragma("secure_delete"), 1);
      assert.equal(db.pragma("user_version"), migrations.length);
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r: any) => r.name);
      for (const t of ["threads", "checkpoints", "checkpoint_messages", "checkpoint_values", "checkpoint_writes", "blobs", "schema_migrations"]) {
        assert.ok(tables.includes(t), t);
      }
      const applied = db.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all();
      assert.deepEqual(applied, migrations.map((m, i) => ({ version: i + 1, name: m.name })));
      db.close();
      // reopening applies nothing again
      const again = openDatabase(file);
      assert.equal((again.prepare("SELECT count(*) n FROM schema_migrations").get() as any).n, migrations.length);
      again.close();
    }),
  );

  it(
    "applies only the new migrations to an older file, each in a transaction",
    withTemp((dir) => {
      const db = openDatabase(join(dir, "h.db"), { migrations: migrations.slice(0, 1) });
      assert.equal(db.pragma("user_version"), 1);
      const failing = [...migrations, { name: "broken", sql: "CREATE TABLE ok_part (x); THIS IS NOT SQL;" }];
      assert.throws(() => migrate(db, failing));
      // everything before the broken one is in; the broken one left nothing behind
      assert.equal(db.pragma("user_version"), migrations.length);
      assert.equal(db.prepare("SELECT name FROM sqlite_master WHERE name = 'ok_part'").get(), undefined);
      db.close();
    }),
  );

  it(
    "refuses a database from a newer build",
    withTemp((dir) => {
      const file = join(dir, "h.db");
      const db = openDatabase(file);
      db.exec(`PRAGMA user_version = ${migrations.length + 1}`);
      db.close();
      assert.throws(
        () => openDatabase(file),
        (err) => err instanceof HarnessError && err.code === "storage" && /newer than this build/.test(err.message),
      );
    }),
  );
});

describe("data directory", () => {
  it("follows the platform conventions", () => {
    assert.equal(defaultDataDir({ HOME: "/home/u" }, "linux"), "/home/u/.local/share/deerflow");
    assert.equal(defaultDataDir({ HOME: "/home/u", XDG_DATA_HOME: "/xdg" }, "linux"), "/xdg/deerflow");
    assert.equal(defaultDataDir({ HOME: "/Users/u" }, "darwin"), "/Users/u/Library/Application Support/deerflow");
    assert.match(defaultDataDir({ HOME: "C:\\Users\\u", LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, "win32"), /AppData.Local.deerflow$/);
  });

  it(
    "gives one database per real folder, outside the folder",
    withTemp((dir) => {
      const folder = join(dir, "project");
      mkdirSync(folder);
      symlinkSync(folder, join(dir, "link"));
      const data = join(dir, "data");
      const a = workspaceDbPath(data, folder);
      const b = workspaceDbPath(data, join(dir, "link"));
      assert.equal(a.file, b.file);
      assert.match(a.file, /workspaces\/[0-9a-f]{16}\/harness\.db$/);
      assert.ok(!a.file.startsWith(folder));
      const store = openWorkspaceStore({ dataDir: data, workspaceFolder: join(dir, "link") });
      assert.equal(store.workspaceFolder, folder);
      assert.equal(store.file, a.file);
      store.threads.create({ threadId: "t1" });
      store.close();
      const other = join(dir, "other");
      mkdirSync(other);
      const otherStore = openWorkspaceStore({ dataDir: data, workspaceFolder: other });
      assert.notEqual(otherStore.file, a.file);
      assert.equal(otherStore.threads.get("t1"), undefined);
      otherStore.close();
      assert.throws(() => workspaceDbPath(data, join(dir, "missing")), (e) => e instanceof HarnessError && e.code === "storage");
      assert.throws(
        () => openWorkspaceStore({ dataDir: join(folder, ".deerflow-data"), workspaceFolder: folder }),
        (e) => e instanceof HarnessError && e.code === "storage" && /inside the workspace/.test(e.message),
      );
    }),
  );
});
