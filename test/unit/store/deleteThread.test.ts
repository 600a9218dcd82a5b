// deleteThread (store/deleteThread.ts) on a real database and real folders: what it removes, which
// blobs it keeps, when it refuses, and that it never follows a link out of the workspace. The
// whole path through the CLI (runs, uploads, view_image) is test/integration/deleteThread.test.ts.
import { describe, it, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { emptyCheckpoint, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { HumanMessage } from "@langchain/core/messages";
import { openWorkspaceStore, type WorkspaceStore } from "../../../extension/harness/store/db.js";
import { deleteThread } from "../../../extension/harness/store/deleteThread.js";
import { createRunStore } from "../../../extension/harness/store/runs.js";
import { createEventStore } from "../../../extension/harness/store/events.js";
import { HarnessError } from "../../../extension/harness/errors.js";
import { MemoryQueue } from "../../../extension/harness/memory/queue.js";
import { testPostgresUrl, testWorkspaceDatabase } from "../../fixtures/testDatabase.js";

let dir: string;
let workspace: string;
let store: WorkspaceStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "deerflow-delete-"));
  workspace = join(dir, "workspace");
  mkdirSync(workspace);
  store = openWorkspaceStore({ dataDir: join(dir, "data"), workspaceFolder: workspace, database: testWorkspaceDatabase(dir) });
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

let step = 0;
/** A checkpoint whose state holds `viewed` as viewed_images, written the way the agent's are. */
async function writeState(threadId: string, viewed: Record<string, { mime_type: string; size: number; sha256: string }>): Promise<void> {
  const cp: Checkpoint = { ...emptyCheckpoint(), id: `1f0c0000-0000-6000-8000-${String(++step).padStart(12, "0")}` };
  cp.channel_values = { messages: [new HumanMessage({ id: `h${step}`, content: `hello ${threadId}` })], viewed_images: viewed };
  cp.channel_versions = { messages: step, viewed_images: step };
  const config = await store.checkpointer.put({ configurable: { thread_id: threadId, checkpoint_ns: "" } }, cp, { source: "loop", step, parents: {} }, {});
  // The view_image tool's update, as a pending write of the next step.
  await store.checkpointer.putWrites(config, [["viewed_images", viewed]], `task-${step}`);
}

function image(bytes: string): { sha256: string; entry: { mime_type: string; size: number; sha256: string } } {
  const sha256 = store.blobs.put(Buffer.from(bytes), "image/png");
  return { sha256, entry: { mime_type: "image/png", size: bytes.length, sha256 } };
}

function finishedRun(threadId: string, runId: string): void {
  const runs = createRunStore(store.db);
  runs.insertPending({ run_id: runId, thread_id: threadId, multitask_strategy: "reject", model: "m", input: {}, context: {} });
  runs.finish(runId, ["pending"], "success");
  createEventStore(store.db).append(threadId, runId, "end", { thread_id: threadId, status: "success" });
  runs.markEnded(runId);
}

/** Every table (from sqlite_master, or Postgres' catalog) and column of `db` (the workspace database by default) that holds `text`, as "table.column". */
function tracesOf(text: string, db = store.db): string[] {
  const found: string[] = [];
  const tables = db
    .prepare<[], { name: string }>(
      db.dialect === "postgres"
        ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()"
        : "SELECT name FROM sqlite_master WHERE type = 'table'",
    )
    .all();
  for (const { name } of tables) {
    for (const row of db.prepare<[], Record<string, unknown>>(`SELECT * FROM "${name}"`).all()) {
      for (const [column, value] of Object.entries(row)) {
        const bytes = Buffer.isBuffer(value) ? value : Buffer.from(String(value));
        if (bytes.includes(Buffer.from(text))) found.push(`${name}.${column}`);
      }
    }
  }
  return [...new Set(found)];
}

const count = (table: string): number => store.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()!.n;

describe("deleteThread", () => {
  it("removes every row of the thread and the blobs only it used; the other thread keeps its state and shared blob", async () => {
    store.threads.create({ threadId: "doomed-thread" });
    store.threads.create({ threadId: "kept-thread" });
    const shared = image("shared image bytes");
    const own = image("only the doomed thread viewed these");
    await writeState("doomed-thread", { "/mnt/user-data/uploads/a.png": shared.entry, "/mnt/user-data/uploads/b.png": own.entry });
    await writeState("doomed-thread", { "/mnt/user-data/uploads/a.png": shared.entry, "/mnt/user-data/uploads/b.png": own.entry });
    await writeState("kept-thread", { "/mnt/user-data/uploads/a.png": shared.entry });
    finishedRun("doomed-thread", "run-of-doomed");
    finishedRun("kept-thread", "run-of-kept");
    const keptBefore = await store.checkpointer.getTuple({ configurable: { thread_id: "kept-thread" } });
    assert.ok(tracesOf("doomed-thread").length >= 8, "the thread is in the threads, runs, events and checkpoint tables");

    const result = await deleteThread(store, "doomed-thread");

    assert.deepEqual(result, { threadId: "doomed-thread", blobsRemoved: 1, folder: "absent" });
    assert.deepEqual(tracesOf("doomed-thread"), []);
    assert.deepEqual(tracesOf("run-of-doomed"), []);
    assert.equal(store.blobs.has(own.sha256), false);
    assert.equal(store.blobs.has(shared.sha256), true);
    const keptAfter = await store.checkpointer.getTuple({ configurable: { thread_id: "kept-thread" } });
    assert.deepEqual(keptAfter?.checkpoint, keptBefore?.checkpoint);
    assert.deepEqual(keptAfter?.pendingWrites, keptBefore?.pendingWrites);
    assert.equal(createRunStore(store.db).listByThread("kept-thread").length, 1);
    assert.equal(createEventStore(store.db).list("kept-thread").length, 1);
    assert.ok(store.threads.get("kept-thread"));
  });

  // A property of the SQLite file (secure_delete): on Postgres deleted rows stay in the heap until
  // VACUUM reclaims them, which is the server operator's to schedule (README, "deerflow serve").
  if (!testPostgresUrl()) it("leaves nothing of the thread in the database file's bytes", async () => {
    store.threads.create({ threadId: "shredded-thread-id" });
    store.threads.create({ threadId: "other" });
    await writeState("shredded-thread-id", {});
    finishedRun("shredded-thread-id", "r1");
    await writeState("other", {});
    await deleteThread(store, "shredded-thread-id");
    // Closing the last connection checkpoints the WAL into the file and removes it.
    store.close();
    assert.equal(existsSync(`${store.file}-wal`), false);
    assert.equal(readFileSync(store.file).includes(Buffer.from("shredded-thread-id")), false);
    assert.equal(readFileSync(store.file).includes(Buffer.from("hello shredded")), false, "nor its messages");
    store = openWorkspaceStore({ dataDir: join(dir, "data"), workspaceFolder: workspace });
  });

  it("keeps the thread's blobs while another thread has a run that has not ended", async () => {
    store.threads.create({ threadId: "t1" });
    store.threads.create({ threadId: "busy-elsewhere" });
    const img = image("bytes a run in flight may be about to refer to");
    await writeState("t1", { "/mnt/user-data/uploads/x.png": img.entry });
    createRunStore(store.db).insertPending({ run_id: "r-busy", thread_id: "busy-elsewhere", multitask_strategy: "reject", model: "m", input: {}, context: {} });
    const result = await deleteThread(store, "t1");
    assert.equal(result.blobsRemoved, 0);
    assert.equal(store.blobs.has(img.sha256), true);
  });

  it("is refused while a run of the thread may still write, and changes nothing", async () => {
    store.threads.create({ threadId: "running-thread" });
    const img = image("in use");
    await writeState("running-thread", { "/mnt/user-data/uploads/x.png": img.entry });
    const runs = createRunStore(store.db);
    runs.insertPending({ run_id: "r-live", thread_id: "running-thread", multitask_strategy: "reject", model: "m", input: {}, context: {} });
    mkdirSync(join(workspace, ".deerflow", "threads", "running-thread", "outputs"), { recursive: true });
    const snapshot = () => ["threads", "runs", "events", "checkpoints", "checkpoint_values", "checkpoint_writes", "checkpoint_messages", "checkpoint_threads", "blobs"].map(count);
    const before = snapshot();
    const refused = (e: unknown) => e instanceof HarnessError && e.code === "thread_busy" && /Thread running-thread is busy: run r-live is pending/.test(e.message);
    await assert.rejects(deleteThread(store, "running-thread"), refused);
    // Cancelled but not yet ended (its worker is stopping): still refused.
    runs.finish("r-live", ["pending"], "interrupted");
    await assert.rejects(deleteThread(store, "running-thread"), (e) => e instanceof HarnessError && /is stopping/.test(e.message));
    assert.deepEqual(snapshot(), before);
    assert.ok(existsSync(join(workspace, ".deerflow", "threads", "running-thread", "outputs")));
    // Its owner died before it journaled its end: nothing will write any more, so it may go.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    store.db.prepare("UPDATE runs SET lease_owner = ? WHERE run_id = 'r-live'").run(`${hostname()}:${dead}:1`);
    assert.equal((await deleteThread(store, "running-thread")).folder, "removed");
  });

  it("an unknown thread is thread_not_found; an invalid id is refused before any path is built", async () => {
    await assert.rejects(deleteThread(store, "nope"), (e) => e instanceof HarnessError && e.code === "thread_not_found");
    await assert.rejects(deleteThread(store, "../x"), (e) => e instanceof HarnessError && e.code === "invalid_thread_id");
  });

  it("removes the thread's folder with its uploads and outputs; a linked thread folder goes as a link, never its target", async () => {
    const threads = join(workspace, ".deerflow", "threads");
    store.threads.create({ threadId: "with-files" });
    mkdirSync(join(threads, "with-files", "outputs", "charts"), { recursive: true });
    mkdirSync(join(threads, "with-files", "uploads"), { recursive: true });
    writeFileSync(join(threads, "with-files", "outputs", "charts", "c.csv"), "x,y\n");
    const outside = join(dir, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "precious.txt"), "keep me");
    // A link inside the folder is removed as a link.
    symlinkSync(outside, join(threads, "with-files", "uploads", "escape"));
    assert.equal((await deleteThread(store, "with-files")).folder, "removed");
    assert.equal(existsSync(join(threads, "with-files")), false);
    assert.equal(readFileSync(join(outside, "precious.txt"), "utf8"), "keep me");

    store.threads.create({ threadId: "linked" });
    symlinkSync(outside, join(threads, "linked"));
    assert.equal((await deleteThread(store, "linked")).folder, "removed");
    assert.throws(() => lstatSync(join(threads, "linked")), /ENOENT/);
    assert.equal(readFileSync(join(outside, "precious.txt"), "utf8"), "keep me");
    assert.ok(existsSync(join(workspace, ".deerflow", "threads")), "the threads folder stays");
  });

  it("a linked .deerflow is not followed: the folder it leads to keeps its <id> folder", async () => {
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(join(elsewhere, "threads", "via-link"), { recursive: true });
    writeFileSync(join(elsewhere, "threads", "via-link", "data.txt"), "not the workspace's");
    symlinkSync(elsewhere, join(workspace, ".deerflow"));
    store.threads.create({ threadId: "via-link" });
    assert.equal((await deleteThread(store, "via-link")).folder, "not_followed");
    assert.equal(store.threads.get("via-link"), undefined, "the rows are gone all the same");
    assert.equal(readFileSync(join(elsewhere, "threads", "via-link", "data.txt"), "utf8"), "not the workspace's");
  });

  it("removes the thread's rows from the user's memory database too (its queued extractions and its watermark); a refused delete leaves them", async () => {
    // The data directory's memory database, or in the Postgres tier the memory tables of the
    // store's own database (where `deerflow serve --database` keeps memory).
    const queue = MemoryQueue.open(store.dataDir, testWorkspaceDatabase(dir));
    const memoryTraces = (t: string) => tracesOf(t, queue.db).filter((c) => c.startsWith("memory_"));
    try {
      const entry = (threadId: string) => ({ threadId, workspace: store.workspaceFolder, kind: "conversation" as const, model: "m", messages: [{ role: "user" as const, content: `hi from ${threadId}`, key: `key-${threadId.length}-${threadId.at(-1)}` }], dueAt: 0 });
      for (const t of ["memory-doomed", "memory-kept"]) {
        store.threads.create({ threadId: t });
        queue.enqueue(entry(t));
        queue.enqueue({ ...entry(t), kind: "flush" });
        queue.advanceWatermark(queue.due(5).find((e) => e.thread_id === t)!);
      }
      assert.deepEqual(memoryTraces("memory-doomed").sort(), ["memory_queue.key", "memory_queue.messages", "memory_queue.thread_id", "memory_watermarks.thread_id"]);

      createRunStore(store.db).insertPending({ run_id: "r-live", thread_id: "memory-doomed", multitask_strategy: "reject", model: "m", input: {}, context: {} });
      await assert.rejects(deleteThread(store, "memory-doomed"), (e) => e instanceof HarnessError && e.code === "thread_busy");
      assert.equal(memoryTraces("memory-doomed").length, 4, "refused: the memory rows stay");
      createRunStore(store.db).finish("r-live", ["pending"], "success");
      createRunStore(store.db).markEnded("r-live");

      await deleteThread(store, "memory-doomed");
      assert.deepEqual(memoryTraces("memory-doomed"), []);
      assert.deepEqual(tracesOf("memory-doomed"), []);
      assert.equal(queue.due(5).filter((e) => e.thread_id === "memory-kept").length, 2, "the other thread's rows stay");
      assert.deepEqual([...queue.extracted("memory-kept")], ["key-11-t"]);
    } finally {
      queue.close();
    }
  });
});
