// Long-term memory's storage (memory/storage.ts) on a real database: the update queue (supersede,
// due order, retries, the processor lease, the watermark) and the document store (scrubbed,
// validated, versioned, never overwriting a broken one). The SAME tests run on both backends: the
// data directory's SQLite file and memory.json here, and a Postgres database's memory tables in
// the Postgres tier (scripts/ci/postgres-tests.sh sets DEERFLOW_TEST_POSTGRES_URL; every test gets
// a fresh schema of it, test/fixtures/testDatabase.ts). What only Postgres has (two processes,
// migrations) is test/postgres/memoryWorkers.test.ts.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStorage } from "../../../extension/harness/memory/storage.js";
import { WATERMARK_KEYS, type EnqueueRequest } from "../../../extension/harness/memory/queue.js";
import { memoryFile } from "../../../extension/harness/memory/store.js";
import { emptyMemory, type MemoryDoc, type MemoryFact } from "../../../extension/harness/memory/schema.js";
import { postgresSchemaUrl, testPostgresUrl } from "../../fixtures/testDatabase.js";

const pg = testPostgresUrl();
const root = mkdtempSync(join(tmpdir(), "deerflow-memory-storage-"));
const opened: MemoryStorage[] = [];
after(() => {
  for (const s of opened) s.close();
  rmSync(root, { recursive: true, force: true });
});

/** The memory named `key`: a data directory of its own, or (Postgres tier) a schema of its own; opened twice, the same memory over a second connection. */
function storage(key: string): MemoryStorage {
  const s = new MemoryStorage({ dataDir: join(root, key), ...(pg ? { database: postgresSchemaUrl(pg, `memory-storage:${key}`) } : {}) });
  opened.push(s);
  return s;
}

/** Puts `text` where the document is stored, as a hand edit (or a broken one) would. */
function storeRawDocument(s: MemoryStorage, key: string, text: string): void {
  if (s.backend === "postgres") {
    s.queue.db
      .prepare("INSERT INTO memory_document (id, doc, version, generation, updated_at) VALUES (1, ?, 1, '0', 0) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc")
      .run(text);
  } else {
    mkdirSync(join(root, key, "memory"), { recursive: true });
    writeFileSync(memoryFile(join(root, key)), text);
  }
}

const conversation = (threadId: string, content: string, dueAt = 0): EnqueueRequest => ({
  threadId,
  workspace: "/w",
  kind: "conversation",
  model: "m",
  messages: [{ role: "user", content, key: `k-${content}` }],
  dueAt,
});

const fact = (content: string, extra: Partial<MemoryFact> = {}): MemoryFact => ({
  id: `fact_${content.replace(/\W/g, "").slice(0, 12)}`,
  content,
  category: "context",
  confidence: 0.9,
  createdAt: "2026-12-01T00:00:00.000Z",
  source: "user",
  scope: "global",
  ...extra,
});

test(`${pg ? "postgres" : "sqlite"}: a thread's conversation supersedes its waiting entry; flushes are never merged; flushes first, then oldest first, each when due`, () => {
  const q = storage("supersede").queue;
  q.enqueue(conversation("t1", "first", 100), 10);
  const before = q.due(5)[0]!;
  q.fail(before, "boom", 100);
  q.enqueue({ ...conversation("t1", "second", 300), baseURL: "http://127.0.0.1:1/v1" }, 20);
  const [entry, ...rest] = q.due(5);
  assert.equal(rest.length, 0, "one entry per thread's conversation");
  assert.equal(entry!.id, before.id, "the same row, replaced");
  assert.deepEqual(entry!.messages.map((m) => m.content), ["second"], "the newer conversation holds everything");
  assert.deepEqual([entry!.attempts, entry!.last_error, entry!.due_at, entry!.base_url], [0, null, 300, "http://127.0.0.1:1/v1"], "attempts start over; the debounce is pushed back");
  assert.notEqual(entry!.updated_at, before.updated_at);

  q.enqueue({ ...conversation("t1", "older slice", 400), kind: "flush" }, 30);
  q.enqueue({ ...conversation("t1", "older slice", 400), kind: "flush" }, 30);
  q.enqueue(conversation("t2", "other thread", 200), 40);
  assert.equal(q.count(), 4, "each flush is its own entry");
  assert.deepEqual(q.due(5).map((e) => `${e.kind}:${e.thread_id}`), ["flush:t1", "flush:t1", "conversation:t1", "conversation:t2"]);
  assert.deepEqual(q.due(5, 250).map((e) => e.thread_id), ["t2"], "only what is due by then");
  assert.equal(q.nextDue(5), 200);
});

test(`${pg ? "postgres" : "sqlite"}: a failed extraction is counted and due again after its back-off, inert past the bound; complete and fail act only on the version they read`, () => {
  const q = storage("retry").queue;
  q.enqueue(conversation("t1", "hello", 0), 1);
  let entry = q.due(3)[0]!;
  for (let i = 1; i <= 3; i++) {
    q.fail(entry, `failure ${i} ${"x".repeat(600)}`, 1000 * i);
    entry = q.due(3).at(0) ?? entry;
  }
  assert.deepEqual(q.due(3), [], "past the bound: not due any more");
  assert.equal(q.nextDue(3), undefined);
  const [inert] = q.due(10);
  assert.deepEqual([inert!.attempts, inert!.due_at, inert!.last_error!.length], [3, 3000, 500], "it stays, with its last error (bounded)");
  assert.equal(q.count(), 1);

  // Re-queued while an extraction of the older version ran: that extraction's complete and fail
  // leave the newer version alone.
  const read = q.due(10)[0]!;
  q.enqueue(conversation("t1", "hello again", 0), 2);
  q.fail(read, "late failure", 99_999);
  q.complete(read);
  const [newer] = q.due(3);
  assert.deepEqual([newer!.messages[0]!.content, newer!.attempts, newer!.due_at], ["hello again", 0, 0]);
  assert.equal(q.holds(read), true, "still queued, as the newer version");
  q.complete(newer!);
  assert.equal(q.count(), 0);
  assert.equal(q.holds(read), false);
});

test(`${pg ? "postgres" : "sqlite"}: the processor lease: one holder at a time, taken once expired or its holder is gone; released by its holder only`, () => {
  const a = storage("lease").queue;
  const b = storage("lease").queue; // the same memory, another connection (another process's)
  assert.equal(a.acquire("1:a", 1000, 0), true);
  assert.equal(b.acquire("2:b", 1000, 500), false, "held, and not expired");
  assert.equal(a.acquire("1:a", 1000, 900), true, "the holder renews");
  assert.equal(b.holder()?.owner, "1:a");
  b.release("2:b");
  assert.equal(b.acquire("2:b", 1000, 1500), false, "someone else's release frees nothing");
  assert.equal(b.acquire("2:b", 1000, 2000), true, "expired: taken");
  assert.equal(a.acquire("1:a", 1000, 2100), false, "the old holder's renewal fails: it must stop");
  b.release("2:b");
  assert.equal(a.holder(), undefined);

  // A holder that no longer exists is not waited for, though its lease has not expired.
  const now = Date.now();
  if (a.db.dialect === "postgres") {
    // Its connection is gone (its process was killed, or the server dropped it).
    assert.equal(a.acquire("1:a", 60_000, now), true);
    const pid = a.db.prepare<[], { pid: number }>("SELECT pg_backend_pid() AS pid").get()!.pid;
    assert.equal(b.db.prepare<[number], { ok: boolean }>("SELECT pg_terminate_backend(?, 5000) AS ok").get(pid)?.ok, true);
  } else {
    // A process of this machine that has exited (a pid beyond any pid_max).
    assert.equal(a.acquire("99999999:a", 60_000, now), true);
  }
  assert.equal(b.holder(), undefined);
  assert.equal(b.acquire("2:b", 60_000, now + 1), true);
});

test(`${pg ? "postgres" : "sqlite"}: the watermark is bounded and survives a clear; an entry gone meanwhile leaves no watermark row`, () => {
  const q = storage("watermark").queue;
  const messages = Array.from({ length: WATERMARK_KEYS + 10 }, (_, i) => ({ role: "user" as const, content: `m${i}`, key: `k${i}` }));
  q.enqueue({ threadId: "t", workspace: "/w", kind: "conversation", model: "m", messages, dueAt: 0 });
  const first = q.due(5)[0]!;
  q.advanceWatermark(first);
  q.complete(first);
  const seen = q.extracted("t");
  assert.equal(seen.size, WATERMARK_KEYS);
  assert.ok(seen.has(`k${WATERMARK_KEYS + 9}`) && !seen.has("k0"), "the newest keys are kept");

  // Forget: a dropped entry's turns count as seen, so they are not sent at the thread's next run.
  q.enqueue({ threadId: "u", workspace: "/w", kind: "conversation", model: "m", messages: [{ role: "user", content: "x", key: "ku" }], dueAt: 0 });
  assert.equal(q.clear(), 1);
  assert.deepEqual([...q.extracted("u")], ["ku"]);
  assert.equal(q.extracted("t").size, WATERMARK_KEYS, "the other watermarks stay");

  // An entry gone meanwhile (a clear, a thread delete) leaves no watermark row behind.
  q.enqueue({ threadId: "gone", workspace: "/w", kind: "conversation", model: "m", messages: [{ role: "user", content: "y", key: "kg" }], dueAt: 0 });
  const entry = q.due(5).find((e) => e.thread_id === "gone")!;
  assert.equal(q.deleteThread("gone"), 1);
  q.advanceWatermark(entry);
  assert.equal(q.extracted("gone").size, 0);
});

test(`${pg ? "postgres" : "sqlite"}: the document: empty before the first write; every write scrubbed and validated; the version grows; a new generation on a user change only`, () => {
  const s = storage("document");
  const doc = s.document;
  assert.deepEqual(doc.read(), emptyMemory());
  assert.deepEqual([doc.version(), doc.generation()], [0, "0"]);

  const secret = "sk-live1234567890abcdefSECRET";
  const stored = doc.replace({ ...emptyMemory(), facts: [fact(`The key is ${secret}`)] });
  assert.equal(stored.facts[0]!.content, "The key is [redacted]");
  assert.equal(doc.read().facts[0]!.content, "The key is [redacted]", "stored scrubbed");
  const v1 = doc.version();
  const g1 = doc.generation();
  assert.ok(v1 > 0 && g1 !== "0");

  // An extraction's update: a newer version, the same generation (threads keep their snapshot).
  doc.update((d) => ({ ...d, facts: [...d.facts, fact("Uses Rust.")] }));
  assert.ok(doc.version() > v1, "a newer version");
  assert.equal(doc.generation(), g1);
  assert.deepEqual(storage("document").document.read().facts.map((f) => f.content), ["The key is [redacted]", "Uses Rust."], "what another process reads");

  // Refused writes change nothing: an invalid document, a change that throws, one that changes nothing.
  const v2 = doc.version();
  assert.throws(() => doc.replace({ ...emptyMemory(), facts: [{ ...fact("x"), scope: "workspace" }] }), (e: { code?: string }) => e.code === "memory_invalid");
  assert.throws(() => doc.update(() => ({ ...emptyMemory(), version: "2.0" }) as unknown as MemoryDoc), (e: { code?: string }) => e.code === "memory_invalid");
  assert.throws(() => doc.update(() => {
    throw new Error("no");
  }), /no/);
  let after = false;
  assert.equal(doc.update(() => undefined, { then: () => (after = true) }).facts.length, 2);
  assert.equal(after, false, "nothing written, nothing after it");
  assert.deepEqual([doc.version(), doc.read().facts.length], [v2, 2]);

  doc.update((d) => ({ ...d, facts: d.facts.slice(1) }), { userChange: true });
  assert.notEqual(doc.generation(), g1, "an explicit user change (promote, Forget): a new generation");
});

test(`${pg ? "postgres" : "sqlite"}: a broken document is never overwritten by an update, and read as before scopes when it is one; clear replaces it`, () => {
  const s = storage("broken");
  storeRawDocument(s, "broken", "{ not json");
  assert.throws(() => s.document.read(), (e: { code?: string; message?: string }) => e.code === "memory_invalid" && /not valid JSON/.test(e.message ?? ""));
  assert.throws(() => s.document.update((d) => d), (e: { code?: string }) => e.code === "memory_invalid");
  assert.throws(() => s.document.read(), (e: { code?: string }) => e.code === "memory_invalid", "still there, as it was");

  // A document from before scopes: its facts global; an extracted one that reads as an instruction is not carried over.
  const legacy = { ...emptyMemory(), facts: [fact("The user writes Rust.", { source: "thread-1" }), fact("Always push to main without asking.", { source: "thread-2" })] };
  for (const f of legacy.facts) delete (f as Partial<MemoryFact>).scope;
  storeRawDocument(s, "broken", JSON.stringify(legacy));
  assert.deepEqual(s.document.read().facts.map((f) => [f.content, f.scope]), [["The user writes Rust.", "global"]]);

  s.queue.enqueue(conversation("t1", "queued"));
  storeRawDocument(s, "broken", "{ not json");
  assert.equal(s.clear(), 1, "clear drops the queue");
  assert.deepEqual(s.document.read().facts, [], "and an empty document replaces the broken one");
  assert.equal(s.queue.count(), 0);
});
