// Issue 20 in the panel's model: a run that used its budget of model turns ends `success` with
// `stop_reason: "turn_capped"`, every tool call of its last turn answered, and a visible AI message
// stamped with that reason as the thread's last. The panel offers Continue exactly then: from the
// live journal, from a snapshot after a reload, never while a run is active, and no more once
// Continue was pressed or another run started. Synthetic journal events in the harness's shapes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { canContinue, initialState, isRunActive, markContinued, reduce, runPhase } from "../../../webview/store.js";
import type { PanelState } from "../../../webview/store.js";
import type { HostToWebview } from "../../../extension/protocol/webview.js";
import type { JournalEvent } from "../../../extension/protocol/rpc.js";
import { ai, chunk, end, events, human, metadata, resetSeq, stateMsg, toolMsg, update, values } from "./fixtures.js";
import { longRun } from "./longRun.js";

const CAPPED_TEXT = "I stopped here: this run used its budget of 3 model turns. Continue to go on.";
const cappedMsg = (id = "capped") => ({ ...ai(id, CAPPED_TEXT), additional_kwargs: { stop_reason: "turn_capped" } });

function run(...msgs: HostToWebview[]): PanelState {
  return msgs.reduce(reduce, initialState);
}

/** One tool turn as the harness journals it: streamed call, the complete message, the result. */
function toolTurn(i: number): JournalEvent[] {
  const args = { description: `read ${i}`, path: `/mnt/user-data/workspace/f${i}.txt` };
  return [
    chunk(`a${i}`, "", { tool_call_chunks: [{ index: 0, id: `c${i}`, name: "read_file", args: JSON.stringify(args) }] }),
    update("model_request", [ai(`a${i}`, "", [{ id: `c${i}`, name: "read_file", args }])]),
    values({ message_count: 2 * i + 2 }),
    update("tools", [toolMsg(`t${i}`, `c${i}`, "read_file", `contents of f${i}`)]),
    values({ message_count: 2 * i + 3 }),
  ];
}

function cappedEnd(): JournalEvent {
  const e = end("success");
  return { ...e, data: { ...e.data, stop_reason: "turn_capped" } } as JournalEvent;
}

/** A three-turn run stopped at its budget, as the live journal delivers it. */
function cappedRun(): JournalEvent[] {
  return [metadata(), update("before_agent", [human("h1", "Read every file.")]), ...toolTurn(0), ...toolTurn(1), ...toolTurn(2), update("after_model", [cappedMsg()])];
}

test("a turn-capped run: every call answered, its message last, Continue offered once it has ended", () => {
  resetSeq();
  const running = run(stateMsg(), events(...cappedRun()));
  assert.equal(isRunActive(running), true);
  assert.equal(canContinue(running), false, "not while the run is still going");
  const s = reduce(running, events(cappedEnd()));
  assert.equal(runPhase(s), "success");
  assert.equal(s.thread?.run.stopReason, "turn_capped");
  const calls = s.thread.messages.flatMap((m) => m.toolCalls);
  assert.deepEqual(calls.map((c) => [c.id, c.result?.status]), [["c0", "success"], ["c1", "success"], ["c2", "success"]]);
  const last = s.thread.messages.at(-1)!;
  assert.deepEqual([last.role, last.text, last.stopReason], ["ai", CAPPED_TEXT, "turn_capped"]);
  assert.equal(canContinue(s), true);
  // The host's status catching up (no run) changes nothing.
  assert.equal(canContinue(reduce(s, { type: "status", status: {} })), true);
});

test("after a reload the snapshot alone brings Continue back (the stamp is on the thread's last message)", () => {
  const wire = [human("h1", "Read every file."), ai("a0", "", [{ id: "c0", name: "ls", args: {} }]), toolMsg("t0", "c0", "ls", "f0.txt"), cappedMsg()] as never[];
  const s = run(stateMsg({ messages: wire, last_seq: 40 }), { type: "status", status: {} });
  assert.equal(canContinue(s), true);
  assert.equal(s.thread!.messages.at(-1)?.stopReason, "turn_capped");
  // Not when the snapshot says a run is in flight on the thread.
  assert.equal(canContinue(run(stateMsg({ messages: wire, last_seq: 40, active_run: { run_id: "r2", status: "running", after_seq: 40 } }))), false);
});

test("the end's stop_reason alone is enough while the stamped message is not in view", () => {
  resetSeq();
  const s = run(stateMsg(), events(metadata(), update("before_agent", [human("h1", "go")]), ...toolTurn(0), cappedEnd()));
  assert.equal(canContinue(s), true);
});

test("pressing Continue hides it at once; a refusal from the host brings it back; the run it starts ends it", () => {
  resetSeq();
  let s = run(stateMsg(), events(...cappedRun(), cappedEnd()));
  assert.equal(canContinue(s), true);
  s = markContinued(s);
  assert.equal(canContinue(s), false, "no second run from a double click");
  assert.equal(markContinued(s), s);
  assert.equal(canContinue(reduce(s, { type: "error", message: "Nothing to continue." })), true, "refused: offered again");
  // Accepted: the host reports the pending run, then its journal arrives.
  s = reduce(s, { type: "status", status: { run: { run_id: "run-2", status: "pending" } } });
  assert.equal(canContinue(s), false);
  s = reduce(s, events({ ...metadata(), run_id: "run-2" }, update("before_agent", [human("h2", "Continue")])));
  assert.equal(s.thread?.run.stopReason, null, "the new run's metadata resets the stop reason");
  assert.equal(canContinue(reduce(s, { type: "status", status: {} })), false, "the prompt Continue is now the last message");
  const answer = update("model_request", [ai("a9", "All files read.")]);
  s = reduce(reduce(s, events(answer, { ...end("success"), run_id: "run-2" })), { type: "status", status: {} });
  assert.equal(runPhase(s), "success");
  assert.equal(canContinue(s), false);
});

test("another run started instead (a typed message) ends the offer too; other endings never offer it", () => {
  resetSeq();
  let s = run(stateMsg(), events(...cappedRun(), cappedEnd()), { type: "status", status: {} });
  s = reduce(s, events({ ...metadata(), run_id: "run-2" }, update("before_agent", [human("h2", "Something else instead.")])));
  assert.equal(canContinue(reduce(s, { type: "status", status: {} })), false);

  for (const stop_reason of ["token_capped", "loop_capped", "approval", "clarification"]) {
    resetSeq();
    const e = end("success");
    const other = run(stateMsg(), events(metadata(), update("before_agent", [human("h1", "go")]), update("model_request", [ai("a1", "stopped")]), { ...e, data: { ...e.data, stop_reason } } as JournalEvent));
    assert.equal(canContinue(other), false, stop_reason);
  }
  // A failed run after the capped message (its error row is last) is not a turn-capped ending.
  resetSeq();
  const failed = run(stateMsg(), events(...cappedRun(), cappedEnd(), { ...metadata(), run_id: "run-3" }, { ...end("error", "boom"), run_id: "run-3" }));
  assert.equal(canContinue(failed), false);
});

test("a new snapshot (thread switch or reload) forgets a pressed Continue", () => {
  resetSeq();
  const pressed = markContinued(run(stateMsg(), events(...cappedRun(), cappedEnd())));
  assert.equal(canContinue(pressed), false);
  const wire = [human("h1", "Read every file."), cappedMsg()] as never[];
  assert.equal(canContinue(reduce(pressed, stateMsg({ messages: wire, last_seq: 50 }))), true);
});

test("a 300-turn run: 300 tool-call cards, each with its result, in 301 rows; one event replaces one row and shares the rest", () => {
  let s = run(stateMsg());
  const turns = longRun(300);
  let sharedRows = 0;
  for (const evs of turns) {
    for (const e of evs) {
      const before = s.thread!;
      s = reduce(s, events(e));
      const after = s.thread!;
      // Rows the event did not touch are the same objects (what the list's per-row check relies on).
      if (before.messages.length > 1 && after.messages.at(0) === before.messages.at(0)) sharedRows++;
      assert.equal(after.rowsShape, before.rowsShape, "a long run only appends and replaces rows: the list never rebuilds its geometry");
    }
  }
  const t = s.thread!;
  assert.equal(t.messages.length, 301);
  const calls = t.messages.flatMap((m) => m.toolCalls);
  assert.equal(calls.length, 300);
  assert.ok(calls.every((c, i) => c.id === `call_${i}` && c.result?.status === "success" && c.args !== undefined), "every call answered, in order");
  assert.equal(t.callOwner.size, 300);
  assert.equal(t.live.length, 0, "nothing streams once every message is complete");
  assert.ok(sharedRows > 2000, "untouched rows are shared, event after event");
});
