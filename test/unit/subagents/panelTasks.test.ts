// The panel's subagent cards as a model (webview/model/tasks.ts through the store's reducer): the
// `task_*` events of the journal, in the shapes the harness journals them, fold into the `task`
// call's TaskView; a replay after a reload rebuilds the same view; the result's status fields
// stand in when the events are not in view.
import { test } from "node:test";
import assert from "node:assert/strict";
import { initialState, reduce } from "../../../webview/store.js";
import type { PanelState } from "../../../webview/store.js";
import type { HostToWebview } from "../../../extension/protocol/webview.js";
import type { ToolCallView } from "../../../webview/model/types.js";
import { cardStatus } from "../../../webview/components/taskCard.js";
import { ai, custom, events, human, metadata, resetSeq, stateMsg, toolMsg, update } from "../webview/fixtures.js";

const call = (id: string, description: string) => ({ id, name: "task", args: { description, prompt: "p", subagent_type: "general-purpose" } });
const dispatch = ai("a1", "", [call("call_a", "Survey alpha"), call("call_b", "Survey beta")]);

function taskCall(s: PanelState, id: string): ToolCallView {
  const c = s.thread?.messages.flatMap((m) => m.toolCalls).find((x) => x.id === id);
  assert.ok(c, `call ${id} in view`);
  return c;
}

/** A run that dispatched two tasks; `call_a` ran an ls and streams its answer, `call_b` just started. */
function journal(): HostToWebview[] {
  resetSeq();
  return [
    stateMsg(),
    events(metadata(), update("ThreadDataMiddleware.before_agent", [human("h1", "go")]), update("model_request", [dispatch])),
    events(
      custom({ type: "task_started", task_id: "call_a", description: "Survey alpha", model_name: "m", subagent_type: "general-purpose" }),
      custom({ type: "task_started", task_id: "call_b", description: "Survey beta", model_name: "m", subagent_type: "general-purpose" }),
      custom({ type: "task_event", task_id: "call_a", event: "messages", data: [{ type: "ai", id: "s1", content: "", tool_call_chunks: [{ index: 0, id: "ls_1", name: "ls", args: '{"path":' }] }] }),
      custom({ type: "task_event", task_id: "call_a", event: "updates", data: { model_request: { messages: [ai("s1", "", [{ id: "ls_1", name: "ls", args: { path: "/w" } }])] } } }),
      custom({ type: "task_running", task_id: "call_a", message: ai("s1", ""), message_index: 1, total_messages: 1, usage: { input_tokens: 30, output_tokens: 4, total_tokens: 34 }, model_name: "m" }),
      custom({ type: "task_event", task_id: "call_a", event: "updates", data: { tools: { messages: [toolMsg("t1", "ls_1", "ls", "a.ts\nb.ts")] } } }),
      custom({ type: "task_event", task_id: "call_a", event: "messages", data: [{ type: "ai", id: "s2", content: "Alpha is " }] }),
    ),
  ];
}

test("two tasks of one turn: each card gets its own description, steps, live words and tokens", () => {
  const s = journal().reduce(reduce, initialState);
  const a = taskCall(s, "call_a").task!;
  const b = taskCall(s, "call_b").task!;
  assert.equal(a.status, "running");
  assert.equal(b.status, "running");
  assert.equal(a.description, "Survey alpha");
  assert.equal(b.subagentType, "general-purpose");
  const steps = a.steps.messages.flatMap((m) => m.toolCalls);
  assert.deepEqual(steps.map((c) => [c.id, c.name, c.result?.content]), [["ls_1", "ls", "a.ts\nb.ts"]]);
  assert.equal(a.steps.messages.at(-1)?.text, "Alpha is ");
  assert.equal(a.steps.messages.at(-1)?.streaming, true);
  assert.deepEqual(a.usage, { input_tokens: 30, output_tokens: 4, total_tokens: 34 });
  assert.equal(b.steps.messages.length, 0, "one subagent's stream never lands in the other's card");
  // The lead's own message list has none of the subagents' messages.
  assert.deepEqual(s.thread!.messages.map((m) => m.key), ["h1", "a1"]);
});

test("terminal events finish the cards; a late duplicate close is ignored", () => {
  const s = [
    ...journal(),
    events(
      custom({ type: "task_completed", task_id: "call_a", result: "Alpha is fine.", usage: { input_tokens: 60, output_tokens: 9, total_tokens: 69 }, model_name: "m" }),
      custom({ type: "task_cancelled", task_id: "call_b", error: "Cancelled by user" }),
      custom({ type: "task_failed", task_id: "call_a", error: "late" }),
    ),
  ].reduce(reduce, initialState);
  const a = taskCall(s, "call_a").task!;
  assert.equal(a.status, "completed");
  assert.equal(a.result, "Alpha is fine.");
  assert.equal(a.usage?.total_tokens, 69);
  assert.equal(a.steps.messages.some((m) => m.streaming), false, "nothing of a finished subagent streams");
  assert.equal(taskCall(s, "call_b").task!.status, "cancelled");
  assert.equal(taskCall(s, "call_b").task!.error, "Cancelled by user");
});

test("after a reload mid-run the snapshot plus the replayed journal rebuild the same cards", () => {
  const live = journal().reduce(reduce, initialState);
  // The host sends the snapshot (the dispatching message is in the checkpoint) with the run active,
  // then replays the journal from the run's start.
  const replay = journal().slice(1).map((m) => m as Extract<HostToWebview, { type: "events" }>);
  const reloaded = [
    stateMsg({ messages: [human("h1", "go") as never, dispatch as never], last_seq: 12, active_run: { run_id: "run-1", status: "running", after_seq: 0 } } as never),
    ...replay,
  ].reduce(reduce, initialState);
  for (const id of ["call_a", "call_b"]) {
    const was = taskCall(live, id).task!;
    const now = taskCall(reloaded, id).task!;
    assert.deepEqual([now.status, now.description, now.usage, now.steps.messages.map((m) => [m.key, m.text, m.toolCalls.map((c) => c.result?.content)])],
      [was.status, was.description, was.usage, was.steps.messages.map((m) => [m.key, m.text, m.toolCalls.map((c) => c.result?.content)])]);
  }
  // Replaying the same batch again changes nothing (the seq guard).
  const twice = replay.reduce(reduce, reloaded);
  assert.equal(twice.thread, reloaded.thread);
});

test("a lead update re-emitting the dispatching message (usage folded into it) keeps the cards", () => {
  const s = [
    ...journal(),
    events(update("TokenUsageMiddleware.after_model", [{ ...dispatch, usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }])),
  ].reduce(reduce, initialState);
  assert.equal(taskCall(s, "call_a").task?.status, "running");
  assert.equal(taskCall(s, "call_a").task?.description, "Survey alpha");
});

test("without the task's events (a finished run after a reload) the result's status fields are read", () => {
  resetSeq();
  const result = { ...toolMsg("t9", "call_a", "task", "Task failed. Error: boom"), additional_kwargs: { subagent_status: "failed", subagent_error: "boom", subagent_token_usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } } };
  const s = [stateMsg({ messages: [human("h1", "go") as never, dispatch as never, result as never], last_seq: 3 })].reduce(reduce, initialState);
  const c = taskCall(s, "call_a");
  assert.equal(c.task, undefined);
  assert.deepEqual(c.result?.subagent, { status: "failed", usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } });
  // A streamed chunk of the same result (no status fields) does not erase them.
  const after = reduce(s, events({ seq: 4, run_id: "r", thread_id: "thread-1", event: "messages", data: [{ type: "tool", id: "t9", tool_call_id: "call_a", name: "task", content: "Task failed. Error: boom" }] }));
  assert.deepEqual(taskCall(after, "call_a").result?.subagent?.status, "failed");
});

test("a card whose events stopped at running shows the result's outcome once the run has ended, never a spinner", () => {
  const running = { id: "call_x", name: "task", args: {}, argsText: "", result: undefined, task: { status: "running" } } as unknown as ToolCallView;
  assert.equal(cardStatus(running, false), "running");
  assert.equal(cardStatus(running, true), "unanswered");
  const answered = { ...running, result: { status: "success", content: "Task Succeeded. Result: done" } } as unknown as ToolCallView;
  assert.equal(cardStatus(answered, true), "completed");
  const failed = { ...running, result: { status: "error", content: "Task failed. Error: boom" } } as unknown as ToolCallView;
  assert.equal(cardStatus(failed, true), "failed");
});
