// Which prompt the failure alert's Retry sends (extension/host/panel/retryRun.ts, issue 30 item 2).
import { test } from "node:test";
import assert from "node:assert/strict";
import { retryPrompt } from "../../../extension/host/panel/retryRun.js";
import type { ThreadStateView } from "../../../extension/protocol/rpc.js";
import type { WireMessage } from "../../../extension/protocol/events.js";

const state = (messages: WireMessage[], over: Partial<ThreadStateView> = {}): ThreadStateView => ({
  thread_id: "t", title: null, messages, artifacts: [], todos: null, viewed_images: [], uploaded_files: [], last_seq: 9, ...over,
});

test("the prompt this window sent wins; otherwise the thread's last visible human message", () => {
  const messages: WireMessage[] = [
    { type: "human", id: "h1", content: "first" },
    { type: "ai", id: "a1", content: "ok" },
    { type: "human", id: "h2", content: [{ type: "text", text: "second" }] },
    { type: "human", id: "r", content: "reminder", additional_kwargs: { hide_from_ui: true } },
  ];
  assert.deepEqual(retryPrompt(state(messages), "typed here"), { ok: true, prompt: "typed here" });
  assert.deepEqual(retryPrompt(state(messages), undefined), { ok: true, prompt: "second" });
});

test("refused while a run is active, and on a thread without a prompt", () => {
  const active = retryPrompt(state([{ type: "human", id: "h", content: "x" }], { active_run: { run_id: "r", status: "running", after_seq: 1 } }), "x");
  assert.equal(active.ok, false);
  const empty = retryPrompt(state([]), undefined);
  assert.equal(empty.ok, false);
  assert.match(empty.ok ? "" : empty.reason, /no message yet/);
});
