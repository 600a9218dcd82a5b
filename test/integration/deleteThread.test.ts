// `deerflow delete` end to end: real CLI processes, real SQLite files and workspace folder, the
// scripted model server as the only fake. A thread with runs, events, uploaded and viewed images,
// output files and long-term memory rows is deleted; afterwards nothing in either database — the
// workspace's and the user's memory database, every table listed from sqlite_master, any column,
// the files' bytes — or the workspace holds it, while a thread that viewed the same image keeps
// its blob, its state and its queued memory update. A delete during an active run is refused and
// changes nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { storageDriver } from "../../extension/harness/store/sqlite/open.js";
import type { ScriptedReply, ScriptFn } from "../fixtures/modelServer.js";
import { isExtraction, update } from "./helpers/memory.js";
import { runCli, sandboxDirs, spawnCli, tempDir, useModelServer, type Dirs } from "./helpers/cli.js";

const server = useModelServer();

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
/** A valid PNG whose trailing bytes make it distinct (the sniffer reads only the header). */
const png = (tag: string) => Buffer.concat([PNG, Buffer.from(tag)]);
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];

function runArgs(d: Dirs, threadId: string, prompt: string, extra: string[] = []): string[] {
  return ["run", ...base(d), "--base-url", server.url, "--model", "scripted", "--thread", threadId, "--prompt", prompt, ...extra];
}

async function run(d: Dirs, threadId: string, script: ScriptedReply[], extra: string[] = []): Promise<void> {
  server.setScript(script);
  const r = await runCli(runArgs(d, threadId, "go", extra));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.lines.at(-1)?.data?.status, "success");
}

function uploadFile(name: string, bytes: Buffer): string {
  const path = join(tempDir("upload"), name);
  writeFileSync(path, bytes);
  return path;
}

const viewAndAnswer = (name: string): ScriptedReply[] => [
  { toolCalls: [{ name: "view_image", args: { image_path: `/mnt/user-data/uploads/${name}` } }] },
  { content: "An image." },
];

function dbFile(d: Dirs): string {
  const keys = readdirSync(join(d.dataDir, "workspaces"));
  assert.equal(keys.length, 1);
  return join(d.dataDir, "workspaces", keys[0]!, "harness.db");
}

/** The per-user memory database (memory/queue.ts). */
const memoryDbFile = (d: Dirs): string => join(d.dataDir, "memory", "memory.db");

/** Opens a database read-side for a look, and closes it. */
function withDb<T>(d: Dirs, fn: (db: ReturnType<ReturnType<typeof storageDriver>["open"]>) => T, file = dbFile(d)): T {
  const db = storageDriver().open(file);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Every table of a database, from sqlite_master: a table added later is looked at too. */
const tablesOf = (db: ReturnType<ReturnType<typeof storageDriver>["open"]>): string[] =>
  db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((t) => t.name);

/** "table.column" for every value (TEXT or BLOB) in every table of `file` that contains `text`. */
function tracesIn(d: Dirs, file: string, text: string): string[] {
  return withDb(
    d,
    (db) => {
      const found = new Set<string>();
      for (const name of tablesOf(db)) {
        for (const row of db.prepare<[], Record<string, unknown>>(`SELECT * FROM "${name}"`).all()) {
          for (const [column, value] of Object.entries(row)) {
            if (value === null) continue;
            const bytes = Buffer.isBuffer(value) ? value : Buffer.from(String(value as string | number));
            if (bytes.includes(Buffer.from(text))) found.add(`${name}.${column}`);
          }
        }
      }
      return [...found];
    },
    file,
  );
}

/** Traces in the workspace database. */
function tracesOf(d: Dirs, text: string): string[] {
  assert.ok(withDb(d, tablesOf).length >= 9);
  return tracesIn(d, dbFile(d), text);
}

const blobHashes = (d: Dirs): string[] => withDb(d, (db) => db.prepare<[], { sha256: string }>("SELECT sha256 FROM blobs ORDER BY sha256").all().map((r) => r.sha256));

async function cliJson(args: string[]): Promise<Array<Record<string, any>>> {
  const r = await runCli(args);
  assert.equal(r.code, 0, r.stderr);
  return r.lines;
}

test("deerflow delete removes the thread's rows, events, runs, unshared blobs and folder; the other thread keeps its blob and state", async () => {
  const d = sandboxDirs();
  const doomed = "thread-to-delete-7f3a";
  const kept = "thread-that-stays";
  const shared = png("shared-image");
  const ownImage = png("only-the-doomed-thread");
  // The doomed thread: an uploaded image it views, output files it presents, then a second run
  // that views an image only it has.
  await run(d, doomed, [
    { toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/diagram.png" } }] },
    { toolCalls: [{ name: "write_file", args: { description: "report", path: "/mnt/user-data/outputs/report.md", content: "# Report\n" } }] },
    { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] },
    { content: "Done." },
  ], ["--upload", uploadFile("diagram.png", shared)]);
  await run(d, doomed, viewAndAnswer("mine.png"), ["--upload", uploadFile("mine.png", ownImage)]);
  // The other thread viewed the same bytes: one blob row, shared.
  await run(d, kept, viewAndAnswer("same.png"), ["--upload", uploadFile("same.png", shared)]);
  const threadsDir = join(d.workspace, ".deerflow", "threads");
  assert.ok(existsSync(join(threadsDir, doomed, "outputs", "report.md")));
  assert.deepEqual(blobHashes(d), [sha(shared), sha(ownImage)].sort());
  const runIds = (await cliJson(["runs", ...base(d), "--thread", doomed])).map((l) => l.run_id as string);
  assert.equal(runIds.length, 2);
  assert.ok(tracesOf(d, doomed).length >= 8, `the thread is everywhere before: ${tracesOf(d, doomed).join(", ")}`);
  const keptState = await cliJson(["state", ...base(d), "--thread", kept]);
  const keptEvents = await cliJson(["events", ...base(d), "--thread", kept]);

  const r = await runCli(["delete", ...base(d), "--thread", doomed]);

  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.deepEqual(r.lines, [{ thread_id: doomed, deleted: true }]);
  for (const id of [doomed, ...runIds]) assert.deepEqual(tracesOf(d, id), [], `no table holds ${id}`);
  // Nor do the file's bytes: the CLI closed the last connection, which folds the WAL into the file.
  assert.equal(existsSync(`${dbFile(d)}-wal`), false);
  assert.equal(readFileSync(dbFile(d)).includes(Buffer.from(doomed)), false, "the database file holds the thread id");
  assert.equal(existsSync(join(threadsDir, doomed)), false);
  assert.ok(existsSync(join(threadsDir, kept, "uploads", "same.png")));
  assert.deepEqual(blobHashes(d), [sha(shared)], "the shared image stays, the doomed thread's own goes");
  assert.deepEqual(await cliJson(["state", ...base(d), "--thread", kept]), keptState);
  assert.deepEqual(await cliJson(["events", ...base(d), "--thread", kept]), keptEvents);
  assert.deepEqual((await cliJson(["threads", ...base(d)])).map((t) => t.thread_id), [kept]);
  // What the kept thread's state refers to is still there (the panel shows it by this hash).
  assert.equal(keptState[0]!.viewed_images["/mnt/user-data/uploads/same.png"].sha256, sha(shared));

  const unknown = await runCli(["delete", ...base(d), "--thread", doomed]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, new RegExp(`no thread ${doomed} in workspace`));
  assert.equal(unknown.stdout, "");
  const usage = await runCli(["delete", ...base(d)]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--thread ID is required/);
});

test("deerflow delete during an active run is refused (Thread … is busy) and changes nothing", async () => {
  const d = sandboxDirs();
  const busy = "busy-thread-to-keep";
  await run(d, busy, viewAndAnswer("pic.png"), ["--upload", uploadFile("pic.png", png("busy"))]);
  server.setScript([{ content: "a slow answer", gate: { afterChunks: 2, until: "delete-hold" } }]);
  const active = spawnCli(runArgs(d, busy, "second"));
  await server.waitForGate("delete-hold");
  const look = () =>
    withDb(d, (db) => ({
      threads: db.prepare("SELECT thread_id, title FROM threads").all(),
      runs: db.prepare("SELECT run_id, status FROM runs ORDER BY created_at").all(),
      checkpoints: db.prepare("SELECT checkpoint_id FROM checkpoints ORDER BY checkpoint_id").all(),
      messages: db.prepare("SELECT count(*) AS n FROM checkpoint_messages").get(),
      blobs: db.prepare("SELECT sha256 FROM blobs").all(),
      // The active run may journal more meanwhile; what was there must stay.
      events: db.prepare<[], { seq: number }>("SELECT seq FROM events ORDER BY seq").all().map((e) => e.seq),
    }));
  const before = look();
  assert.equal((before.runs as Array<{ status: string }>).at(-1)?.status, "running");

  const refused = await runCli(["delete", ...base(d), "--thread", busy]);

  assert.equal(refused.code, 1);
  assert.match(refused.stderr, new RegExp(`Thread ${busy} is busy: run [0-9a-f-]+ is running`));
  assert.equal(refused.stdout, "");
  const after = look();
  assert.deepEqual({ ...after, events: undefined }, { ...before, events: undefined });
  assert.deepEqual(after.events.slice(0, before.events.length), before.events);
  assert.ok(existsSync(join(d.workspace, ".deerflow", "threads", busy, "uploads", "pic.png")));

  server.gate("delete-hold").open();
  const done = await active.done;
  assert.equal(done.code, 0, done.stderr);
  const r = await runCli(["delete", ...base(d), "--thread", busy]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(tracesOf(d, busy), []);
  assert.deepEqual(blobHashes(d), []);
});

test("deerflow delete removes the thread's rows from every table of both databases: the workspace's and the user's memory database", async () => {
  const d = sandboxDirs();
  const doomed = "thread-with-memory-rows-9c1d";
  const kept = "thread-with-memory-kept";
  /** A run with memory on; `extract`: whether its extraction succeeds (a failed one stays queued for retry). */
  const memoryRun = async (threadId: string, prompt: string, extract: boolean) => {
    const s: ScriptFn = (req) => (isExtraction(req) ? (extract ? update([{ content: `The user said: ${prompt}` }]) : { error: { status: 500 } }) : { content: "ok" });
    server.setScript(s);
    const r = await runCli(runArgs(d, threadId, prompt), {}, { memory: true });
    assert.equal(r.code, 0, r.stderr);
  };
  await memoryRun(doomed, "I keep bees.", true); // extracted: the thread's watermark row
  await memoryRun(doomed, "I also keep goats.", false); // failed: its queued conversation stays
  await memoryRun(kept, "I keep chickens.", false);
  const memoryTables = withDb(d, tablesOf, memoryDbFile(d));
  for (const t of ["memory_queue", "memory_watermarks", "memory_processor", "schema_migrations"]) assert.ok(memoryTables.includes(t), `${t} in ${memoryTables.join(", ")}`);
  const before = tracesIn(d, memoryDbFile(d), doomed);
  assert.ok(before.includes("memory_queue.thread_id") && before.includes("memory_watermarks.thread_id"), `the memory database holds the thread: ${before.join(", ")}`);
  assert.ok(tracesOf(d, doomed).length > 0);

  const r = await runCli(["delete", ...base(d), "--thread", doomed]);

  assert.equal(r.code, 0, r.stderr);
  for (const file of [dbFile(d), memoryDbFile(d)]) {
    assert.deepEqual(tracesIn(d, file, doomed), [], `no table of ${file} holds the thread`);
    // Nor the files' bytes: the CLI closed its connections, which folds the WAL in.
    assert.equal(existsSync(`${file}-wal`), false);
    assert.equal(readFileSync(file).includes(Buffer.from(doomed)), false, `${file} holds the thread id`);
  }
  assert.ok(tracesIn(d, memoryDbFile(d), kept).includes("memory_queue.thread_id"), "the other thread's queued update stays");
  // The facts memory learnt from the thread are the user's, not the thread's: they stay.
  assert.match(readFileSync(join(d.dataDir, "memory", "memory.json"), "utf8"), /I keep bees/);
});
