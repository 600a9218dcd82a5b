import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openWorkspaceStore, type WorkspaceStore } from "../../../extension/harness/store/db.js";
import { HarnessError } from "../../../extension/harness/errors.js";
import { deleteThread } from "../../../extension/harness/store/deleteThread.js";
import { emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { testWorkspaceDatabase } from "../../fixtures/testDatabase.js";

let dir: string;
let store: WorkspaceStore;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "deerflow-store-"));
  mkdirSync(join(dir, "workspace"));
  store = openWorkspaceStore({ dataDir: join(dir, "data"), workspaceFolder: join(dir, "workspace"), database: testWorkspaceDatabase(dir) });
});
after(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("blobs", () => {
  it("stores bytes once under their sha256 and returns them with mime type and size", () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const hash = store.blobs.put(png, "image/png");
    assert.equal(hash, createHash("sha256").update(png).digest("hex"));
    assert.equal(store.blobs.put(png, "image/png"), hash);
    assert.equal((store.db.prepare("SELECT count(*) n FROM blobs").get() as any).n, 1);
    assert.ok(store.blobs.has(hash));
    const got = store.blobs.get(hash);
    assert.deepEqual(got && { bytes: [...got.bytes], mime: got.mime, size: got.size }, { bytes: [...png], mime: "image/png", size: 7 });
    assert.equal(store.blobs.get("0".repeat(64)), undefined);
    assert.equal(store.blobs.has("0".repeat(64)), false);
  });

  it("accepts a view into a larger buffer", () => {
    const big = Buffer.from("xxhelloxx");
    const hash = store.blobs.put(big.subarray(2, 7), "text/plain");
    assert.equal(store.blobs.get(hash)?.bytes.toString(), "hello");
  });
});

describe("threads", () => {
  it("creates, gets, lists newest first, renames, touches and deletes (with checkpoints)", async () => {
    let clock = 1000;
    const { createThreadStore } = await import("../../../extension/harness/store/threads.js");
    const threads = createThreadStore(store.db, { workspaceFolder: store.workspaceFolder, now: () => clock });
    const a = threads.create({ threadId: "a", title: "First", metadata: { model: "m" } });
    assert.deepEqual(a, { threadId: "a", workspaceFolder: store.workspaceFolder, title: "First", createdAt: 1000, updatedAt: 1000, metadata: { model: "m" } });
    clock = 2000;
    const b = threads.create({ workspaceFolder: join(dir, "workspace") });
    assert.match(b.threadId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(threads.list().map((t) => t.threadId), [b.threadId, "a"]);
    clock = 3000;
    assert.equal(threads.rename("a", "Renamed").title, "Renamed");
    assert.deepEqual(threads.list().map((t) => t.threadId), ["a", b.threadId]);
    threads.touch(b.threadId, 5000);
    threads.touch(b.threadId, 4000); // never backwards
    assert.equal(threads.get(b.threadId)?.updatedAt, 5000);
    assert.deepEqual(threads.list({ limit: 1 }).map((t) => t.threadId), [b.threadId]);

    assert.throws(() => threads.create({ threadId: "a" }), (e) => e instanceof HarnessError && e.code === "storage");
    assert.throws(() => threads.create({ workspaceFolder: join(dir, "data") }), (e) => e instanceof HarnessError && e.code === "workspace_mismatch");
    assert.throws(() => threads.rename("nope", "x"), (e) => e instanceof HarnessError && e.code === "thread_not_found");
    assert.throws(() => threads.touch("nope"), (e) => e instanceof HarnessError && e.code === "thread_not_found");

    const cfg = { configurable: { thread_id: "a" } };
    await store.checkpointer.put(cfg, emptyCheckpoint(), { source: "input", step: -1, parents: {} }, {});
    assert.ok(await store.checkpointer.getTuple(cfg));
    assert.equal((await deleteThread(store, "a")).threadId, "a");
    assert.equal(threads.get("a"), undefined);
    assert.equal(await store.checkpointer.getTuple(cfg), undefined);
    await assert.rejects(deleteThread(store, "a"), (e) => e instanceof HarnessError && e.code === "thread_not_found");
  });
});

describe("thread metadata", () => {
  it("setMetadata sets, keeps unchanged values without a write, removes with undefined, and refuses an unknown thread", () => {
    const t = store.threads.create({ metadata: { keep: 1 } });
    // Whether the row was written: SQLite counts changes; on Postgres a write gives the row a new xmin.
    const changes = (): unknown =>
      store.db.dialect === "postgres"
        ? (store.db.prepare("SELECT xmin::text AS n FROM threads WHERE thread_id = ?").get(t.threadId) as { n: string }).n
        : (store.db.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
    store.threads.setMetadata(t.threadId, "pending_approvals", [{ tool_call_id: "c1" }]);
    assert.deepEqual(store.threads.get(t.threadId)!.metadata, { keep: 1, pending_approvals: [{ tool_call_id: "c1" }] });
    const before = changes();
    store.threads.setMetadata(t.threadId, "pending_approvals", [{ tool_call_id: "c1" }]);
    store.threads.setMetadata(t.threadId, "absent", undefined);
    assert.equal(changes(), before, "nothing to change, nothing written");
    store.threads.setMetadata(t.threadId, "pending_approvals", undefined);
    assert.deepEqual(store.threads.get(t.threadId)!.metadata, { keep: 1 });
    assert.notEqual(changes(), before);
    assert.throws(() => store.threads.setMetadata("no-such-thread", "x", 1), (e: HarnessError) => e.code === "thread_not_found");
    assert.throws(() => store.threads.setMetadata(t.threadId, "a.b", 1), /Bad metadata key/);
  });
});
