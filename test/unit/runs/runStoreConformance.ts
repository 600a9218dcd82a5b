/**
 * Conformance suite for the run store, its leases, and the journal's event store (in the spirit
 * of langgraphjs' checkpoint-validation): any backend that passes it can replace the SQLite one.
 * Call `runStoreConformance(name, factory)`; the factory returns fresh stores sharing one backend
 * and a thread id known to it (runs reference threads).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { RunStore, NewRun } from "../../../extension/harness/store/runs.js";
import type { EventStore } from "../../../extension/harness/store/events.js";
import { HarnessError } from "../../../extension/harness/errors.js";

export interface StoresUnderTest {
  runs: RunStore;
  events: EventStore;
  /** Makes a thread the stores may reference; returns its id. */
  newThread(): string;
  /** A second handle on the same backend (another process, in production). */
  reopen(): { runs: RunStore; events: EventStore };
}

let counter = 0;
const newRun = (thread_id: string, extra: Partial<NewRun> = {}): NewRun => ({
  run_id: `run-${++counter}`,
  thread_id,
  multitask_strategy: "reject",
  model: "m",
  input: { prompt: "p" },
  context: {},
  ...extra,
});

export function runStoreConformance(name: string, factory: () => StoresUnderTest): void {
  test(`${name}: a new run is pending with defaults; get and listByThread hydrate it`, () => {
    const s = factory();
    const t = s.newThread();
    const r = s.runs.insertPending(newRun(t), 1000);
    assert.equal(r.status, "pending");
    assert.equal(r.multitask_strategy, "reject");
    assert.deepEqual(r.input, { prompt: "p" });
    assert.equal(r.created_at, 1000);
    assert.equal(r.lease_owner, null);
    assert.equal(r.ended_at, null);
    assert.deepEqual(s.runs.get(r.run_id), r);
    assert.equal(s.reopen().runs.get(r.run_id)?.status, "pending", "rows survive a new handle");
    assert.equal(s.runs.get("nope"), undefined);
  });

  test(`${name}: one active run per thread — a second is refused as thread_busy, other threads are free`, () => {
    const s = factory();
    const t = s.newThread();
    const first = s.runs.insertPending(newRun(t));
    assert.throws(() => s.runs.insertPending(newRun(t)), (e: unknown) => e instanceof HarnessError && e.code === "thread_busy" && e.message.includes(first.run_id));
    assert.throws(() => s.reopen().runs.insertPending(newRun(t)), (e: unknown) => e instanceof HarnessError && e.code === "thread_busy");
    s.runs.insertPending(newRun(s.newThread()));
    assert.ok(s.runs.finish(first.run_id, ["pending", "running"], "interrupted", { error: "x" }));
    s.runs.insertPending(newRun(t));
  });

  test(`${name}: status moves only forward through conditional transitions`, () => {
    const s = factory();
    const t = s.newThread();
    const r = s.runs.insertPending(newRun(t));
    assert.equal(s.runs.finish(r.run_id, ["running"], "success"), false, "pending is not running");
    assert.equal(s.runs.start(r.run_id, "owner-a", 30_000, 2000), true);
    assert.equal(s.runs.start(r.run_id, "owner-b", 30_000, 2000), false, "only one worker takes a run");
    const running = s.runs.get(r.run_id)!;
    assert.equal(running.status, "running");
    assert.equal(running.lease_owner, "owner-a");
    assert.equal(running.lease_expires_at, 32_000);
    assert.equal(running.started_at, 2000);
    assert.equal(s.runs.finish(r.run_id, ["running"], "success", { usage: { total_tokens: 3 } }), true);
    assert.equal(s.runs.finish(r.run_id, ["running"], "error"), false, "a final status is final");
    assert.equal(s.runs.finish(r.run_id, ["pending", "running"], "interrupted"), false);
    const done = s.runs.get(r.run_id)!;
    assert.equal(done.status, "success");
    assert.deepEqual(done.usage, { total_tokens: 3 });
    assert.equal(done.lease_expires_at, null, "a finished run holds no lease");
  });

  test(`${name}: leases renew only for their owner while running`, () => {
    const s = factory();
    const r = s.runs.insertPending(newRun(s.newThread()));
    assert.equal(s.runs.renewLease(r.run_id, "a", 10_000, 0), false, "no lease while pending");
    s.runs.start(r.run_id, "a", 10_000, 0);
    assert.equal(s.runs.renewLease(r.run_id, "b", 10_000, 5000), false, "not the owner");
    assert.equal(s.runs.renewLease(r.run_id, "a", 10_000, 5000), true);
    assert.equal(s.runs.get(r.run_id)!.lease_expires_at, 15_000);
    s.runs.finish(r.run_id, ["running"], "interrupted", { error: "cancelled" });
    assert.equal(s.runs.renewLease(r.run_id, "a", 10_000, 6000), false, "a cancelled run's lease cannot be renewed: its worker learns it must stop");
  });

  test(`${name}: idempotency keys are per thread and unique`, () => {
    const s = factory();
    const t = s.newThread();
    const r = s.runs.insertPending(newRun(t, { idempotency_key: "k" }));
    assert.equal(s.runs.byIdempotencyKey(t, "k")?.run_id, r.run_id);
    assert.equal(s.runs.byIdempotencyKey(s.newThread(), "k"), undefined);
    s.runs.finish(r.run_id, ["pending"], "interrupted");
    assert.throws(() => s.runs.insertPending(newRun(t, { idempotency_key: "k" })));
  });

  test(`${name}: listByThread is newest first and stable on ties; listActive spans threads`, () => {
    const s = factory();
    const t = s.newThread();
    const a = s.runs.insertPending(newRun(t, { run_id: "r-a" }), 10);
    s.runs.finish(a.run_id, ["pending"], "interrupted");
    const b = s.runs.insertPending(newRun(t, { run_id: "r-b" }), 10);
    s.runs.finish(b.run_id, ["pending"], "interrupted");
    const c = s.runs.insertPending(newRun(t, { run_id: "r-c" }), 20);
    assert.deepEqual(s.runs.listByThread(t).map((r) => r.run_id), ["r-c", "r-b", "r-a"]);
    const other = s.runs.insertPending(newRun(s.newThread()));
    const active = s.runs.listActive().map((r) => r.run_id);
    assert.ok(active.includes(c.run_id) && active.includes(other.run_id));
    assert.ok(!active.includes(a.run_id));
    assert.equal(s.runs.active(t)?.run_id, c.run_id);
  });

  test(`${name}: markEnded is set once`, () => {
    const s = factory();
    const r = s.runs.insertPending(newRun(s.newThread()));
    s.runs.markEnded(r.run_id, 50);
    s.runs.markEnded(r.run_id, 60);
    assert.equal(s.runs.get(r.run_id)!.ended_at, 50);
  });

  test(`${name}: journal seq starts at 1, is per thread, gap-free, and ordered`, () => {
    const s = factory();
    const t1 = s.newThread();
    const t2 = s.newThread();
    assert.equal(s.events.lastSeq(t1), 0);
    assert.equal(s.events.append(t1, "r1", "metadata", { a: 1 }).seq, 1);
    assert.equal(s.events.append(t2, "r2", "metadata", {}).seq, 1, "threads are independent");
    assert.equal(s.reopen().events.append(t1, "r1", "values", { b: [1, 2] }).seq, 2, "a second handle continues the same sequence");
    assert.equal(s.events.append(t1, "r1", "end", { status: "success" }).seq, 3);
    const all = s.events.list(t1);
    assert.deepEqual(all.map((e) => e.seq), [1, 2, 3]);
    assert.deepEqual(all[1]!.data, { b: [1, 2] }, "payloads round-trip");
    assert.equal(all[0]!.event, "metadata");
    assert.equal(s.events.lastSeq(t1), 3);
  });

  test(`${name}: journal replay after any seq, per run, with a limit`, () => {
    const s = factory();
    const t = s.newThread();
    for (let i = 0; i < 10; i++) s.events.append(t, i < 5 ? "ra" : "rb", "custom", { i });
    for (let k = 0; k <= 10; k++) {
      assert.deepEqual(s.events.list(t, { afterSeq: k }).map((e) => e.seq), Array.from({ length: 10 - k }, (_, j) => k + j + 1));
    }
    assert.deepEqual(s.events.list(t, { runId: "rb" }).map((e) => e.seq), [6, 7, 8, 9, 10]);
    assert.deepEqual(s.events.list(t, { afterSeq: 2, limit: 3 }).map((e) => e.seq), [3, 4, 5]);
    assert.equal(s.events.endOf("ra"), undefined);
    s.events.append(t, "ra", "end", { status: "interrupted" });
    assert.equal(s.events.endOf("ra")?.seq, 11);
  });

  test(`${name}: interleaved appends from two handles never collide or skip`, () => {
    const s = factory();
    const t = s.newThread();
    const other = s.reopen();
    for (let i = 0; i < 40; i++) (i % 2 ? s.events : other.events).append(t, "r", "custom", { i });
    assert.deepEqual(s.events.list(t).map((e) => e.seq), Array.from({ length: 40 }, (_, i) => i + 1));
    assert.deepEqual(s.events.list(t).map((e) => (e.data as { i: number }).i), Array.from({ length: 40 }, (_, i) => i));
  });
}
