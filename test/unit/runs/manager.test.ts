// RunManager and Journal against a real SQLite file: recovery of dead runs (owner provably gone,
// lease expired, never started), cancel outcomes, admission strategies, and the journal's seam.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir, hostname } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { createRunStore } from "../../../extension/harness/store/runs.js";
import { createEventStore } from "../../../extension/harness/store/events.js";
import type { StoredEvent } from "../../../extension/harness/store/events.js";
import { createThreadStore } from "../../../extension/harness/store/threads.js";
import { Journal } from "../../../extension/harness/runs/journal.js";
import { RunManager } from "../../../extension/harness/runs/manager.js";
import { currentOwnerId, isOwnerGone } from "../../../extension/harness/runs/owner.js";
import { HarnessError } from "../../../extension/harness/errors.js";

function setup(clock = { now: 1_000_000 }) {
  const file = join(mkdtempSync(join(tmpdir(), "deerflow-mgr-")), "harness.db");
  const db = openDatabase(file);
  const threads = createThreadStore(db, { workspaceFolder: "/ws" });
  threads.create({ workspaceFolder: "/ws", threadId: "t" });
  threads.create({ workspaceFolder: "/ws", threadId: "u" });
  const runs = createRunStore(db, () => clock.now);
  const journal = new Journal(createEventStore(db, () => clock.now));
  const manager = new RunManager({ runs, journal, owner: currentOwnerId(), leaseTtlMs: 10_000, clock: () => clock.now });
  return { manager, runs, journal, clock };
}

const admit = (m: RunManager, thread = "t", extra = {}) =>
  m.admit({ run_id: `r-${Math.random().toString(36).slice(2)}`, thread_id: thread, model: "m", input: {}, context: {}, ...extra });

/** The owner id of a process that has exited: provably gone. */
function deadOwner(): string {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return `${hostname()}:${r.stdout.toString()}:1`;
}

test("owner ids: this process is alive, an exited one is provably gone, another host is never provable", () => {
  assert.equal(isOwnerGone(currentOwnerId()), false);
  assert.equal(isOwnerGone(deadOwner()), true);
  assert.equal(isOwnerGone(`some-other-host:1:1`), false);
  const [h, pid] = currentOwnerId().split(":");
  assert.equal(isOwnerGone(`${h}:${pid}:not-my-start-time`), true, "a recycled pid is not the owner");
});

test("recover: a running run whose owner died is interrupted at once, with its end journaled", () => {
  const { manager, runs, journal } = setup();
  const { run } = admit(manager);
  assert.ok(runs.start(run.run_id, deadOwner(), 10_000));
  journal.append({ run_id: run.run_id, thread_id: "t", event: "metadata", data: { run_id: run.run_id, thread_id: "t", model: "m", sandbox: "local" } });
  const recovered = manager.recover();
  assert.deepEqual(recovered.map((r) => r.run_id), [run.run_id]);
  const after = runs.get(run.run_id)!;
  assert.equal(after.status, "interrupted");
  assert.match(after.error!, /stopped before it finished/);
  assert.notEqual(after.ended_at, null);
  const events = journal.events.list("t");
  // Recovery back-fills the run's one delivery receipt (DeerFlow), then its end.
  assert.deepEqual(events.map((e) => [e.seq, e.event]), [[1, "metadata"], [2, "custom"], [3, "end"]]);
  assert.deepEqual(events[1]!.data, { type: "run.delivery", presented: 0, paths: [], by_tool: {} });
  assert.deepEqual((events[2]!.data as { status: string }).status, "interrupted");
  assert.deepEqual(manager.recover(), [], "recovery is idempotent");
});

test("recover: on another host only the lease decides; a live lease is left alone", () => {
  const { manager, runs, clock } = setup();
  const { run } = admit(manager);
  runs.start(run.run_id, "remote-host:42:7", 10_000);
  clock.now += 9_000;
  assert.deepEqual(manager.recover(), []);
  assert.equal(runs.get(run.run_id)!.status, "running");
  clock.now += 2_000;
  assert.equal(manager.recover().length, 1);
  assert.match(runs.get(run.run_id)!.error!, /lease expired/);
});

test("recover: a pending run never started within a lease is interrupted; a fresh one is not", () => {
  const { manager, runs, clock } = setup();
  const { run } = admit(manager);
  assert.deepEqual(manager.recover(), []);
  clock.now += 10_001;
  assert.equal(manager.recover().length, 1);
  assert.equal(runs.get(run.run_id)!.status, "interrupted");
});

test("recover: a run executing in this process is never touched; one this process owns but no longer executes (its worker gave up) is settled", () => {
  const { manager, runs, clock } = setup();
  const { run } = admit(manager);
  const unregister = manager.registerLocal(run.run_id, new AbortController());
  runs.start(run.run_id, manager.owner, 10_000);
  clock.now += 60_000;
  assert.deepEqual(manager.recover(), [], "lease renewal is the worker's job; its own process is alive");
  // The worker ended without writing the end (the database was gone when it tried).
  unregister();
  assert.deepEqual(manager.recover().map((r) => r.run_id), [run.run_id]);
  assert.equal(runs.get(run.run_id)!.status, "interrupted");
  assert.match(runs.get(run.run_id)!.error ?? "", /lost the database/);
});

test("admit: reject refuses a second active run; interrupt replaces it; idempotency returns the same run", () => {
  const { manager, runs } = setup();
  const a = admit(manager, "t", { idempotency_key: "k" });
  assert.throws(() => admit(manager), (e: unknown) => e instanceof HarnessError && e.code === "thread_busy");
  assert.equal(admit(manager, "u").existing, false, "other threads are free");
  const again = admit(manager, "t", { idempotency_key: "k" });
  assert.equal(again.existing, true);
  assert.equal(again.run.run_id, a.run.run_id);
  const b = admit(manager, "t", { multitask_strategy: "interrupt" });
  assert.equal(b.interrupted, a.run.run_id);
  assert.equal(runs.get(a.run.run_id)!.status, "interrupted");
  assert.equal(runs.get(b.run.run_id)!.status, "pending");
});

test("cancel: typed outcomes, idempotent; a local run is aborted with the reason", () => {
  const { manager, runs } = setup();
  assert.equal(manager.cancel("missing").outcome, "not_found");
  const { run } = admit(manager);
  runs.start(run.run_id, manager.owner, 10_000);
  const controller = new AbortController();
  const unregister = manager.registerLocal(run.run_id, controller);
  assert.equal(manager.cancel(run.run_id).outcome, "cancelled");
  assert.equal(controller.signal.aborted, true);
  assert.equal((controller.signal.reason as { status: string }).status, "interrupted");
  assert.equal(manager.cancel(run.run_id).outcome, "cancelled", "cancel again: still cancelled");
  unregister();
  const done = admit(manager, "u");
  runs.start(done.run.run_id, manager.owner, 10_000);
  runs.finish(done.run.run_id, ["running"], "success");
  assert.equal(manager.cancel(done.run.run_id).outcome, "already_finished");
});

test("cancel of a pending run journals its end itself: no worker will", () => {
  const { manager, journal } = setup();
  const { run } = admit(manager);
  assert.equal(manager.cancel(run.run_id).outcome, "cancelled");
  const end = journal.events.endOf(run.run_id);
  assert.equal((end?.data as { status: string }).status, "interrupted");
});

test("journal: subscribe replays then follows with no gap and no duplicate at the seam", () => {
  const { journal } = setup();
  const ev = (i: number) => ({ run_id: "r", thread_id: "t", event: "custom" as const, data: { type: "tick", i } });
  for (let i = 1; i <= 5; i++) journal.append(ev(i));
  const seen: StoredEvent[] = [];
  const stop = journal.subscribe("t", 2, (e) => {
    seen.push(e);
    // An append from inside a listener (a reaction to an event) must not be lost or doubled.
    if (e.seq === 4) journal.append(ev(100));
  });
  for (let i = 6; i <= 8; i++) journal.append(ev(i));
  stop();
  journal.append(ev(9));
  assert.deepEqual(seen.map((e) => e.seq), [3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(journal.events.list("t").map((e) => e.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
});

test("waitForEnd resolves on the run's end event and recovers a dead owner's run on the way", async () => {
  const { manager, runs } = setup();
  const { run } = admit(manager);
  runs.start(run.run_id, manager.owner, 10_000);
  const controller = new AbortController();
  manager.registerLocal(run.run_id, controller);
  const waiting = manager.waitForEnd(run);
  manager.journalEnd(runs.get(run.run_id)!, "success");
  assert.notEqual((await waiting).ended_at, null);

  const other = admit(manager, "u");
  runs.start(other.run.run_id, deadOwner(), 10_000);
  const ended = await manager.waitForEnd(other.run);
  assert.equal(ended.status, "interrupted");
});
