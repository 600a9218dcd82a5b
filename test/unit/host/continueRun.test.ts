// The host's check before Continue starts a run (extension/host/panel/continueRun.ts): only a
// thread whose last visible message is the harness's turn-capped message, with no run active.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CONTINUE_PROMPT, continueCheck } from "../../../extension/host/panel/continueRun.js";
import type { ThreadStateView } from "../../../extension/protocol/rpc.js";
import type { WireMessage } from "../../../extension/protocol/events.js";

const state = (messages: WireMessage[], over: Partial<ThreadStateView> = {}): ThreadStateView => ({
  thread_id: "t", title: null, messages, artifacts: [], todos: null, viewed_images: [], uploaded_files: [], last_seq: 9, ...over,
});
const capped: WireMessage = { type: "ai", id: "a9", content: "I stopped at this run's turn budget.", additional_kwargs: { stop_reason: "turn_capped" } };
const history: WireMessage[] = [
  { type: "human", id: "h1", content: "Read every file." },
  { type: "ai", id: "a1", content: "", tool_calls: [{ id: "c1", name: "ls", args: { path: "/mnt/user-data/workspace" } }] },
  { type: "tool", id: "t1", tool_call_id: "c1", name: "ls", content: "a.txt" },
];

test("a thread whose last run stopped at its turn budget may be continued, with the prompt Continue", () => {
  assert.deepEqual(continueCheck(state([...history, capped])), { ok: true });
  // A hidden injection after it (a reminder the UI never shows) does not hide the ending.
  assert.deepEqual(continueCheck(state([...history, capped, { type: "human", id: "r", content: "todo reminder", additional_kwargs: { hide_from_ui: true } }])), { ok: true });
  assert.equal(CONTINUE_PROMPT, "Continue");
});

test("anything else is refused with a reason a person can act on", () => {
  const refused = (s: ThreadStateView): string => {
    const r = continueCheck(s);
    assert.equal(r.ok, false);
    return r.ok ? "" : r.reason;
  };
  assert.match(refused(state(history)), /did not stop at its turn budget/);
  assert.match(refused(state([])), /Nothing to continue/);
  // Continue was already used: its prompt (and the next run's answer) came after the capped message.
  assert.match(refused(state([...history, capped, { type: "human", id: "h2", content: "Continue" }])), /Nothing to continue/);
  assert.match(refused(state([...history, { ...capped, additional_kwargs: { stop_reason: "token_capped" } }])), /turn budget/);
  assert.match(refused(state([...history, capped], { active_run: { run_id: "r2", status: "running", after_seq: 9 } })), /already active/);
  assert.match(refused(state([...history, capped], { active_run: { run_id: "r2", status: "pending", after_seq: 9 } })), /already active/);
});
