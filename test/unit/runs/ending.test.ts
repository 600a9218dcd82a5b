// The one run ending (runs/ending.ts) and the journal's post-commit fan-out: a subscriber that
// reads the run row when it receives `end` sees the final status (the event never reaches anyone
// before its transaction commits), a rolled-back event is never delivered, and every run gets
// exactly one receipt and one end however many times its end is recorded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { createRunStore } from "../../../extension/harness/store/runs.js";
import type { RunRecord } from "../../../extension/harness/store/runs.js";
import { createEventStore } from "../../../extension/harness/store/events.js";
import type { StoredEvent } from "../../../extension/harness/store/events.js";
import { createThreadStore } from "../../../extension/harness/store/threads.js";
import { Journal } from "../../../extension/harness/runs/journal.js";
import { RunManager } from "../../../extension/harness/runs/manager.js";
import { endRun } from "../../../extension/harness/runs/ending.js";
import { currentOwnerId } from "../../../extension/harness/runs/owner.js";

function setup() {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), "deerflow-end-")), "harness.db"));
  createThreadStore(db, { workspaceFolder: "/ws" }).create({ workspaceFolder: "/ws", threadId: "t" });
  const runs = createRunStore(db);
  const journal = new Journal(createEventStore(db), { inTransaction: () => db.inTransaction });
  const manager = new RunManager({ runs, journal, owner: currentOwnerId(), leaseTtlMs: 10_000 });
  const admit = () => manager.admit({ run_id: `r-${Math.random().toString(36).slice(2)}`, thread_id: "t", model: "m", input: {}, context: {} }).run;
  return { db, runs, journal, manager, admit };
}

/** Records, for each `end` it receives, the run row as a reader sees it at that moment. */
function rowAtEnd(s: ReturnType<typeof setup>) {
  const seen: Array<{ row: RunRecord | undefined; inTransaction: boolean }> = [];
  const stop = s.journal.subscribe("t", s.journal.events.lastSeq("t"), (e: StoredEvent) => {
    if (e.event === "end") seen.push({ row: s.runs.get(e.run_id), inTransaction: s.db.inTransaction });
  });
  return { seen, stop };
}

test("a subscriber that reads the run row on `end` sees the final status: the end of a running run", () => {
  const s = setup();
  const run = s.admit();
  assert.ok(s.runs.start(run.run_id, s.manager.owner, 10_000));
  const { seen, stop } = rowAtEnd(s);
  const ended = endRun(s.manager, { runId: run.run_id, from: ["running"], status: "success" });
  stop();
  assert.deepEqual(ended, { status: "success", recorded: true });
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.inTransaction, false, "delivered after COMMIT");
  assert.equal(seen[0]!.row!.status, "success");
  assert.notEqual(seen[0]!.row!.ended_at, null, "the row is marked ended when its end is seen");
  assert.equal(seen[0]!.row!.lease_expires_at, null, "the lease is released");
});

test("a subscriber that reads the run row on `end` sees the final status: cancel of a pending run and recovery", () => {
  const s = setup();
  const { seen, stop } = rowAtEnd(s);
  const pending = s.admit();
  assert.equal(s.manager.cancel(pending.run_id).outcome, "cancelled");
  stop();
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.inTransaction, false);
  assert.equal(seen[0]!.row!.status, "interrupted");
  assert.notEqual(seen[0]!.row!.ended_at, null);
});

test("events appended inside a transaction that rolls back are never delivered", () => {
  const s = setup();
  const run = s.admit();
  const got: StoredEvent[] = [];
  const stop = s.journal.subscribe("t", 0, (e) => got.push(e));
  assert.throws(() =>
    s.journal.transaction(
      (fn) => s.runs.transaction(fn),
      () => {
        s.journal.append({ run_id: run.run_id, thread_id: "t", event: "custom", data: { type: "doomed" } });
        throw new Error("rollback");
      },
    ),
  );
  s.journal.append({ run_id: run.run_id, thread_id: "t", event: "custom", data: { type: "kept" } });
  stop();
  assert.deepEqual(got.map((e) => (e.data as { type: string }).type), ["kept"]);
  assert.deepEqual(s.journal.events.list("t").map((e) => (e.data as { type: string }).type), ["kept"]);
});

test("an append inside a transaction opened elsewhere reaches subscribers once it has committed", async () => {
  const s = setup();
  const run = s.admit();
  const got: Array<{ seq: number; inTransaction: boolean }> = [];
  const stop = s.journal.subscribe("t", 0, (e) => got.push({ seq: e.seq, inTransaction: s.db.inTransaction }));
  s.runs.transaction(() => {
    s.journal.append({ run_id: run.run_id, thread_id: "t", event: "custom", data: { type: "x" } });
    assert.equal(got.length, 0, "not inside the transaction");
  });
  await Promise.resolve(); // the fan-out is a microtask after the synchronous COMMIT
  stop();
  assert.deepEqual(got, [{ seq: 1, inTransaction: false }]);
});

test("exactly one receipt and one end per run, however many times its end is recorded", () => {
  const s = setup();
  const run = s.admit();
  assert.ok(s.runs.start(run.run_id, s.manager.owner, 10_000));
  assert.equal(s.manager.cancel(run.run_id).outcome, "cancelled"); // no local worker: the manager records nothing yet for a live owner
  const first = endRun(s.manager, { runId: run.run_id, from: ["running"], status: "success" });
  const second = endRun(s.manager, { runId: run.run_id, from: ["running"], status: "error", error: "late" });
  assert.deepEqual(first, { status: "interrupted", error: "Cancelled by the user.", recorded: true }, "the cancel that got there first wins");
  assert.deepEqual(second, { status: "interrupted", error: "Cancelled by the user.", recorded: false });
  const events = s.journal.events.list("t", { runId: run.run_id });
  assert.deepEqual(events.map((e) => e.event), ["custom", "end"]);
  assert.deepEqual(events[0]!.data, { type: "run.delivery", presented: 0, paths: [], by_tool: {} });
  assert.equal((events[1]!.data as { status: string }).status, "interrupted");
});
