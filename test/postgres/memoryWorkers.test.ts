// Long-term memory shared by several `deerflow serve` workers on one Postgres (issue 26): real
// processes (test/fixtures/memoryWorker.ts) race for the queue and for the document; an
// extraction whose lease was taken over meanwhile writes nothing; the schema beside the
// workspace schema, migrated idempotently; the harness server's memory methods and the CLI's
// `deerflow memory … --database` on it. What both backends share (the queue's and the
// document's rules) is test/unit/memory/storage.test.ts. Run by scripts/ci/postgres-tests.sh.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";
import { POSTGRES_TEST_ENV, postgresSchemaUrl, testPostgresUrl } from "../fixtures/testDatabase.js";
import { tempDir, runCli } from "../integration/helpers/cli.js";
import { settings } from "../integration/helpers/server.js";
import { conversationOf, extractionInput, isExtraction, update } from "../integration/helpers/memory.js";
import { MemoryStorage } from "../../extension/harness/memory/storage.js";
import { emptyMemory } from "../../extension/harness/memory/schema.js";
import type { MemoryQueue } from "../../extension/harness/memory/queue.js";
import { MemoryService, type ProcessResult } from "../../extension/harness/memory/service.js";
import { openMemoryDatabase } from "../../extension/harness/memory/queue.js";
import { MEMORY_LEDGER, postgresMemoryMigrations } from "../../extension/harness/store/postgres/memoryMigrations.js";
import { postgresMigrations } from "../../extension/harness/store/postgres/migrations.js";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { parseHarnessConfig } from "../../extension/harness/config/harnessConfig.js";
import { ServerMemory } from "../../extension/harness/server/memory.js";
import { Session } from "../../extension/harness/server/session.js";
import type { Logger } from "../../extension/harness/server/logger.js";

const base = testPostgresUrl();
assert.ok(base, `${POSTGRES_TEST_ENV} must name a Postgres server (scripts/ci/postgres-tests.sh sets it)`);
const workerScript = fileURLToPath(new URL("../fixtures/memoryWorker.ts", import.meta.url));
let model: ModelServer;
/** Two more processes on the memory, as two serve workers on other machines would be (their own data dirs). */
let workers: Worker[];
const opened: MemoryStorage[] = [];
before(async () => {
  model = await startModelServer();
  workers = [startWorker(), startWorker()];
  await Promise.all(workers.map((w) => w.ready));
});
after(async () => {
  for (const s of opened) s.close();
  await Promise.all((workers ?? []).map((w) => w.stop()));
  await model?.close();
});

/** A database of its own for one test (a fresh schema), and memory storage on it. */
function memoryDb(key: string): { url: string; storage: MemoryStorage } {
  const url = postgresSchemaUrl(base!, `memoryWorkers:${key}`);
  const storage = new MemoryStorage({ dataDir: tempDir("memory-data"), database: url });
  opened.push(storage);
  return { url, storage };
}

interface Worker {
  ready: Promise<void>;
  /** One command (test/fixtures/memoryWorker.ts); resolves with its result. */
  send(command: Record<string, unknown>): Promise<unknown>;
  stop(): Promise<void>;
}

function startWorker(): Worker {
  const child = spawn(process.execPath, ["--import", "tsx", workerScript, tempDir("worker-data")], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      for (const w of waiting.splice(0)) w.reject(new Error(`the worker exited (${code}): ${stderr}`));
      resolve();
    }),
  );
  createInterface({ input: child.stdout }).on("line", (line) => waiting.shift()?.resolve(line));
  const line = () => new Promise<string>((resolve, reject) => waiting.push({ resolve, reject }));
  const ready = line().then((l) => assert.equal(l, "ready"));
  return {
    ready,
    send: async (command) => {
      const answer = line();
      child.stdin.write(`${JSON.stringify(command)}\n`);
      const reply = JSON.parse(await answer) as { ok: boolean; result?: unknown; error?: string };
      if (!reply.ok) throw new Error(`the worker failed: ${reply.error}\n${stderr}`);
      return reply.result;
    },
    stop: () => {
      child.stdin.end();
      return exited;
    },
  };
}

const entry = (threadId: string, content: string) => ({
  threadId,
  workspace: "/srv/ws",
  kind: "conversation" as const,
  model: "scripted",
  baseURL: model.url,
  messages: [{ role: "user" as const, content, key: `k-${threadId}` }],
  dueAt: 0,
});

test("two workers' processors race for the queue: exactly one wins the lease and extracts every entry once; the other is told it is busy", async () => {
  const { url, storage } = memoryDb("race");
  const threads = ["t1", "t2", "t3"];
  for (const t of threads) storage.queue.enqueue(entry(t, `I am user ${t}.`));
  // The winner's first extraction is held until the loser has answered: their rounds overlap.
  let loserAnswered!: () => void;
  const overlap = new Promise<void>((resolve) => (loserAnswered = resolve));
  const first = model.requests.length;
  model.setScript(async (req) => {
    if (!isExtraction(req)) return undefined;
    await overlap;
    const user = /I am user (t\d)\./.exec(conversationOf(extractionInput(req)))?.[1];
    return update([{ content: `The user is ${user}.` }]);
  });
  await Promise.all(workers.map((w) => w.send({ op: "open", database: url })));
  const rounds = workers.map((w) => w.send({ op: "process", database: url }) as Promise<ProcessResult>);
  const loser = await Promise.race(rounds);
  assert.deepEqual([loser.busy, loser.processed, loser.remaining], [true, 0, 3], "the first to answer is the one that did not get the lease");
  loserAnswered();
  const results = await Promise.all(rounds);
  await Promise.all(workers.map((w) => w.send({ op: "close", database: url })));
  const winner = results.find((r) => r !== loser);
  assert.ok(winner, JSON.stringify(results));
  assert.deepEqual([winner.busy, winner.processed, winner.failed, winner.remaining], [false, 3, 0, 0]);
  const extractions = model.requests.slice(first).filter(isExtraction);
  assert.deepEqual(extractions.map((r) => /I am user (t\d)/.exec(extractionInput(r))?.[1]).sort(), threads, "each entry extracted once, by one process");
  assert.deepEqual(storage.document.read().facts.map((f) => f.content).sort(), threads.map((t) => `The user is ${t}.`));
  assert.equal(storage.queue.count(), 0);
  assert.equal(storage.queue.holder(), undefined, "the lease is released");
});

test("two writers' read-modify-writes of the document in two processes: neither loses a fact; two processes migrate a fresh schema at once", async () => {
  // Nothing opened the schema yet: both workers create the memory tables at the same moment.
  const url = postgresSchemaUrl(base, "memoryWorkers:writers");
  await Promise.all([workers[0]!.send({ op: "open", database: url }), workers[1]!.send({ op: "open", database: url })]);
  await Promise.all([workers[0]!.send({ op: "write", database: url, count: 40, tag: "A" }), workers[1]!.send({ op: "write", database: url, count: 40, tag: "B" })]);
  await Promise.all(workers.map((w) => w.send({ op: "close", database: url })));
  const contents = memoryDb("writers").storage.document.read().facts.map((f) => f.content);
  assert.equal(contents.length, 80, `every update kept: ${contents.length} of 80`);
  for (const tag of ["A", "B"]) for (let i = 0; i < 40; i++) assert.ok(contents.includes(`${tag}-${i}`), `${tag}-${i} is there`);
});

test("an extraction whose lease another worker took meanwhile (its connection was replaced) writes nothing; the new holder does the entry", async () => {
  const { url, storage } = memoryDb("takeover");
  storage.queue.enqueue(entry("t1", "I am user t1."));
  const warnings: string[] = [];
  const log = { info: () => undefined, warn: (m: string) => void warnings.push(m) };
  const a = new MemoryService({ dataDir: tempDir("a"), database: url, config: () => parseHarnessConfig({}, "test"), log });
  const gate = model.gate("memory-takeover");
  model.setScript([{ ...update([{ content: "Written by the old holder." }]), gate: { until: gate } }]);
  const round = a.process({ all: true });
  await gate.reached;
  // A's connection dies while its model answers; B (another worker) finds the lease's holder gone and takes it.
  const aQueue = (a as unknown as { queue: MemoryQueue }).queue;
  const aPid = aQueue.db.prepare<[], { pid: number }>("SELECT pg_backend_pid() AS pid").get()!.pid;
  assert.equal(storage.queue.db.prepare<[number], { ok: boolean }>("SELECT pg_terminate_backend(?, 5000) AS ok").get(aPid)?.ok, true);
  assert.equal(storage.queue.acquire("other:worker", 60_000), true);
  gate.open();
  const r = await round;
  assert.deepEqual([r.busy, r.processed, r.failed], [true, 0, 0], "A stops: not failed, not done");
  assert.ok(warnings.some((w) => /another process took over the memory update/.test(w)), warnings.join("\n"));
  assert.deepEqual(storage.document.read().facts, [], "nothing written by the old holder");
  assert.equal(storage.queue.count(), 1, "the entry waits for the new holder");
  assert.equal(storage.queue.due(5)[0]!.attempts, 0, "and is not counted as a failure");
  assert.equal(storage.queue.extracted("t1").size, 0, "nor its watermark moved");
  await a.close();
});

test("migrations: the memory schema beside the workspace schema, each in its own ledger; opening again changes nothing; a newer schema is refused", () => {
  const url = postgresSchemaUrl(base, "memoryWorkers:migrations");
  const dataDir = tempDir("migrate-data");
  const folder = tempDir("migrate-ws");
  const store = openWorkspaceStore({ dataDir, workspaceFolder: folder, database: url });
  const first = openMemoryDatabase(url);
  const again = openMemoryDatabase(url);
  const ledger = (table: string) => store.db.prepare<[], { version: number; name: string }>(`SELECT version, name FROM ${table} ORDER BY version`).all();
  try {
    assert.deepEqual(ledger(MEMORY_LEDGER).map((r) => r.name), postgresMemoryMigrations.map((m) => m.name), "each memory migration once");
    assert.deepEqual(ledger("schema_migrations").map((r) => r.name), postgresMigrations.map((m) => m.name), "the workspace ledger has only its own");
    const tables = store.db.prepare<[], { name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'memory%' ORDER BY 1").all();
    assert.deepEqual(tables.map((t) => t.name), ["memory_document", "memory_processor", "memory_queue", MEMORY_LEDGER, "memory_watermarks"]);
    first.prepare(`INSERT INTO ${MEMORY_LEDGER} (version, name, applied_at) VALUES (?, 'from a newer build', 0)`).run(postgresMemoryMigrations.length + 1);
    assert.throws(() => openMemoryDatabase(url), (e: { code?: string; message?: string }) => e.code === "storage" && /newer than this build knows/.test(e.message ?? ""));
  } finally {
    first.close();
    again.close();
    store.close();
  }
});

const quietLog: Logger = { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

test("the harness server's memory on a database: what one worker saves, promotes, queues or clears, another sees", async () => {
  const { url } = memoryDb("server");
  const folder = realpathSync(tempDir("server-ws"));
  const worker = () => {
    const session = new Session();
    session.initialize(tempDir("server-data"), settings(model.url));
    return new ServerMemory(session, quietLog, { database: url });
  };
  const [a, b] = [worker(), worker()];
  try {
    const saved = a.set({ memory: { ...emptyMemory(), facts: [{ id: "fact_1", content: "Prefers tabs.", category: "preference", confidence: 0.9, createdAt: "2026-12-01T00:00:00.000Z", source: "thread-1", scope: "workspace", workspace: folder }] } });
    const seen = b.get();
    assert.deepEqual([seen.memory.facts.map((f) => f.content), seen.version], [["Prefers tabs."], saved.version]);
    const promoted = b.promote({ factId: "fact_1" });
    assert.ok(promoted.version > saved.version);
    assert.equal(a.get().memory.facts[0]!.scope, "global");
    a.wiring(folder)!.service.enqueue("thread-2", "conversation", [{ role: "user", content: "I moved to Lyon.", key: "k1" }], { name: "scripted" });
    assert.equal(b.get().queued, 1, "one queue");
    b.clear();
    assert.deepEqual([a.get().memory.facts, a.get().queued], [[], 0]);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test("deerflow memory show|clear --database: an operator's view of a server's memory; the data dir is left alone", async () => {
  const { url, storage } = memoryDb("cli");
  const folder = realpathSync(tempDir("cli-ws"));
  storage.document.replace({ ...emptyMemory(), facts: [{ id: "fact_cli", content: "Deploys on Fridays.", category: "context", confidence: 0.9, createdAt: "2026-12-01T00:00:00.000Z", source: "thread-1", scope: "workspace", workspace: folder }] });
  storage.queue.enqueue(entry("t-cli", "queued on the server"));
  const dataDir = tempDir("cli-data");
  // (promote --database takes the same path: the storage's document.update, as ServerMemory's promote above.)
  const cli = (args: string[]) => runCli(["memory", ...args, "--data-dir", dataDir, "--database", url]);

  const shown = await cli(["show", "--workspace", folder]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.deepEqual((JSON.parse(shown.stdout) as { facts: Array<{ content: string }> }).facts.map((f) => f.content), ["Deploys on Fridays."]);
  const cleared = await cli(["clear"]);
  assert.equal(cleared.code, 0, cleared.stderr);
  assert.match(cleared.stderr, /cleared the memory_document table of postgres:\/\/.* and 1 queued update\(s\)/);
  assert.deepEqual([storage.document.read().facts, storage.queue.count()], [[], 0]);
  assert.equal(existsSync(join(dataDir, "memory")), false, "nothing written to the data dir");
});
