import { test } from "node:test";
import assert from "node:assert/strict";
import { initialState, isRunActive, persisted, reduce, runPhase } from "../../../webview/store.js";
import type { PanelState } from "../../../webview/store.js";
import type { HostToWebview } from "../../../extension/protocol/webview.js";
import { T, ai, chunk, custom, end, errorEv, events, human, metadata, resetSeq, stateMsg, toolMsg, update, values } from "./fixtures.js";

function run(...msgs: HostToWebview[]): PanelState {
  return msgs.reduce(reduce, initialState);
}

function texts(s: PanelState): Array<[string, string]> {
  return (s.thread?.messages ?? []).map((m) => [m.role, m.text]);
}

test("state then events: the snapshot's messages, then streamed and updated ones after it", () => {
  resetSeq(10);
  const s = run(
    stateMsg({ title: "Old", last_seq: 10, messages: [human("h1", "hi") as never, ai("a1", "hello") as never] }),
    events(metadata(), update("ThreadDataMiddleware.before_agent", [human("h2", "again")]), chunk("a2", "Sure"), chunk("a2", ", done.")),
  );
  assert.deepEqual(texts(s), [["human", "hi"], ["ai", "hello"], ["human", "again"], ["ai", "Sure, done."]]);
  assert.equal(s.thread?.messages.at(-1)?.streaming, true);
  assert.equal(s.thread?.title, "Old");
  assert.equal(s.thread?.lastSeq, 14);
  assert.equal(runPhase(s), "running");
});

test("chunks coalesce by message id, and the complete message from updates replaces the streamed text", () => {
  resetSeq();
  let s = run(stateMsg(), events(chunk("a1", "Let "), chunk("a1", "me "), chunk("a2", "other"), chunk("a1", "look.")));
  assert.deepEqual(texts(s), [["ai", "Let me look."], ["ai", "other"]]);
  s = reduce(s, events(update("model_request", [ai("a1", "Let me look at it.")])));
  assert.deepEqual(texts(s), [["ai", "Let me look at it."], ["ai", "other"]]);
  assert.equal(s.thread?.messages.at(0)?.streaming, false);
  // A middleware re-sending the same message (TitleMiddleware, TokenUsage) does not duplicate it.
  s = reduce(s, events(update("TitleMiddleware.after_model", [ai("a1", "Let me look at it.")], { title: "x" })));
  assert.equal(s.thread?.messages.length, 2);
});

test("an unchanged message keeps its identity across unrelated chunks (the list re-renders only what changed)", () => {
  resetSeq();
  const a = run(stateMsg({ messages: [human("h1", "hi") as never] }), events(chunk("a1", "x")));
  const b = reduce(a, events(chunk("a1", "y")));
  assert.equal(a.thread?.messages.at(0), b.thread?.messages.at(0));
  assert.notEqual(a.thread?.messages.at(1), b.thread?.messages.at(1));
});

test("tool calls stream their arguments, then pair with results by tool_call_id", () => {
  resetSeq();
  let s = run(
    stateMsg(),
    events(
      chunk("a1", "Looking."),
      chunk("a1", "", { tool_call_chunks: [{ index: 0, id: "call_0", name: "ls" }] }),
      chunk("a1", "", { tool_call_chunks: [{ index: 0, args: '{"path":"/mnt/' }] }),
      chunk("a1", "", { tool_call_chunks: [{ index: 0, args: 'user-data"}' }] }),
    ),
  );
  let calls = s.thread?.messages.at(0)?.toolCalls ?? [];
  assert.equal(calls.length, 1);
  assert.equal(calls[0]?.name, "ls");
  assert.equal(calls[0]?.argsText, '{"path":"/mnt/user-data"}');
  s = reduce(s, events(
    update("model_request", [ai("a1", "Looking.", [{ id: "call_0", name: "ls", args: { path: "/mnt/user-data" } }, { id: "call_1", name: "read_file", args: { path: "/x" } }])]),
    update("tools", [toolMsg("t1", "call_0", "ls", "README.md")]),
    update("tools", [toolMsg("t2", "call_1", "read_file", "no such file", "error")]),
  ));
  calls = s.thread?.messages.at(0)?.toolCalls ?? [];
  assert.deepEqual(calls.map((c) => [c.name, c.args, c.result?.content, c.result?.status]), [
    ["ls", { path: "/mnt/user-data" }, "README.md", "success"],
    ["read_file", { path: "/x" }, "no such file", "error"],
  ]);
  // Results live on their call; no separate rows.
  assert.equal(s.thread?.messages.length, 1);
});

test("a tool result streamed as a `messages` chunk pairs too, and its later update is not a second row", () => {
  resetSeq(1);
  const s = run(
    stateMsg({ messages: [ai("a1", "", [{ id: "c", name: "ls", args: {} }]) as never] }),
    events(
      { run_id: "run-1", thread_id: T, seq: 1, event: "messages", data: [{ type: "tool", id: "t1", content: "out", name: "ls", tool_call_id: "c", node: "tools" }] },
      update("tools", [toolMsg("t1", "c", "ls", "out")]),
    ),
  );
  assert.equal(s.thread?.messages.length, 1);
  assert.equal(s.thread?.messages.at(0)?.toolCalls[0]?.result?.content, "out");
});

test("a result whose call is unknown shows as a tool row, adopted when the call appears", () => {
  resetSeq();
  let s = run(stateMsg(), events(update("tools", [toolMsg("t1", "c9", "bash", "ok")])));
  assert.deepEqual(texts(s), [["tool", "ok"]]);
  s = reduce(s, events(update("model_request", [ai("a1", "", [{ id: "c9", name: "bash", args: { command: "true" } }])])));
  assert.deepEqual(texts(s), [["ai", ""]]);
  assert.equal(s.thread?.messages.at(0)?.toolCalls[0]?.result?.content, "ok");
});

test("replay after reload: events at or below lastSeq are ignored, later ones apply once", () => {
  resetSeq();
  const evs = [metadata(), chunk("a1", "Hel"), chunk("a1", "lo"), update("model_request", [ai("a1", "Hello")]), values({ title: "T1" })];
  const live = run(stateMsg(), events(...evs));
  assert.equal(live.thread?.lastSeq, 5);
  // The reloaded panel gets the snapshot at seq 3 (chunks of a1 checkpointed nowhere yet), then a replay from 1.
  const reloaded = run(stateMsg({ last_seq: 3 }), events(...evs), events(...evs));
  assert.deepEqual(texts(reloaded), [["ai", "Hello"]]);
  assert.equal(reloaded.thread?.title, "T1");
  assert.equal(reloaded.thread?.lastSeq, 5);
  // Sending the whole batch twice changes nothing the second time.
  const twice = reduce(live, events(...evs));
  assert.equal(twice, live);
});

test("chunks replayed for a message already known complete are ignored", () => {
  resetSeq(5);
  const s = run(stateMsg({ last_seq: 0, messages: [ai("a1", "Hello") as never] }), events(chunk("a1", "Hel"), chunk("a1", "lo")));
  assert.deepEqual(texts(s), [["ai", "Hello"]]);
});

test("end sets the final status and stops streaming; error events become one error row per run", () => {
  resetSeq();
  let s = run(stateMsg(), { type: "status", status: { run: { run_id: "run-1", status: "running" } } }, events(metadata(), chunk("a1", "partial")));
  assert.equal(isRunActive(s), true);
  s = reduce(s, events(errorEv("Model said no"), end("error", "Model said no")));
  s = reduce(s, { type: "status", status: {} });
  assert.equal(runPhase(s), "error");
  assert.equal(isRunActive(s), false);
  assert.equal(s.thread?.messages.at(0)?.streaming, false);
  assert.deepEqual(texts(s), [["ai", "partial"], ["error", "Model said no"]]);
  assert.equal(s.thread?.run.error, "Model said no");

  resetSeq();
  const c = run(stateMsg(), events(metadata(), end("interrupted", "Run cancelled.")));
  assert.equal(runPhase(c), "interrupted");
  assert.equal(c.thread?.messages.length, 0);
});

test("status: a host-reported run wins; with none reported, a journal status still running is stale", () => {
  resetSeq();
  let s = run(stateMsg(), events(metadata()));
  assert.equal(runPhase(s), "running"); // no status message yet: trust the journal
  s = reduce(s, { type: "status", status: {} });
  assert.equal(runPhase(s), "idle");
  s = reduce(s, { type: "status", status: { run: { run_id: "r2", status: "pending" } } });
  assert.equal(runPhase(s), "pending");
});

test("llm_retry shows until the next output", () => {
  resetSeq();
  let s = run(stateMsg(), events(metadata(), custom({ type: "llm_retry", attempt: 1, message: "Retrying in 1s (1/3)" })));
  assert.equal(s.thread?.run.retry, "Retrying in 1s (1/3)");
  s = reduce(s, events(chunk("a", "x")));
  assert.equal(s.thread?.run.retry, null);
});

test("a retried model call drops the failed attempt's partial answer; the retry streams the real one", () => {
  resetSeq();
  let s = run(stateMsg(), events(metadata(), chunk("attempt-1", "Half an ans")));
  assert.deepEqual(s.thread?.messages.map((m) => m.key), ["attempt-1"]);
  s = reduce(s, events(custom({ type: "llm_retry", attempt: 1, message: "Retrying (1/3)" })));
  assert.deepEqual(s.thread?.messages.map((m) => m.key), [], "the partial text of the failed attempt is gone");
  s = reduce(s, events(chunk("attempt-2", "The whole answer."), update("model_request", [ai("attempt-2", "The whole answer.")])));
  assert.deepEqual(s.thread?.messages.map((m) => [m.key, m.text]), [["attempt-2", "The whole answer."]]);
});

test("artifacts, todos, title and viewed_images come from values; {} clears the image cache", () => {
  resetSeq();
  let s = run(
    stateMsg({ artifacts: [{ path: "/mnt/user-data/outputs/a.md", host_path: "/w/a.md", exists: false }] }),
    events(values({
      title: "Summary",
      artifacts: ["/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.png"],
      todos: [{ content: "Read", status: "completed" }, { content: "Write", status: "in_progress" }, { bad: 1 }],
      viewed_images: { "/mnt/user-data/workspace/p.png": { mime_type: "image/png", size: 10, sha256: "abc" } },
    })),
  );
  const t = s.thread!;
  assert.equal(t.title, "Summary");
  assert.deepEqual(t.artifacts, [{ path: "/mnt/user-data/outputs/a.md", exists: false }, { path: "/mnt/user-data/outputs/b.png", exists: true }]);
  assert.deepEqual(t.todos, [{ content: "Read", status: "completed" }, { content: "Write", status: "in_progress" }]);
  assert.deepEqual(t.viewedImages, [{ path: "/mnt/user-data/workspace/p.png", mime_type: "image/png", size: 10, sha256: "abc" }]);
  // The same values again keep the arrays' identity (no re-render of the side lists).
  const again = reduce(s, events(values({ artifacts: ["/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.png"], viewed_images: { "/mnt/user-data/workspace/p.png": { mime_type: "image/png", size: 10, sha256: "abc" } } })));
  assert.equal(again.thread?.artifacts, t.artifacts);
  assert.equal(again.thread?.viewedImages, t.viewedImages);
  s = reduce(again, events(values({ viewed_images: {} })));
  assert.deepEqual(s.thread?.viewedImages, []);
});

test("hidden messages stay hidden: system, hide_from_ui, and the empty human a RemoveMessage becomes", () => {
  resetSeq();
  let s = run(stateMsg({ messages: [
    { type: "system", content: "You are…" } as never,
    human("h1", "question") as never,
    human("ctx", "images…", { additional_kwargs: { hide_from_ui: true } }) as never,
  ] }));
  assert.deepEqual(texts(s), [["human", "question"]]);
  // The user's typed text wins over the uploads block the middleware prepended.
  s = reduce(s, events(update("UploadsMiddleware.before_agent", [human("h1", "<uploaded_files>…</uploaded_files>\nquestion", { additional_kwargs: { original_user_content: "question", files: [{ filename: "a.pdf" }] } })])));
  assert.deepEqual(texts(s), [["human", "question"]]);
  assert.deepEqual(s.thread?.messages.at(0)?.files, ["a.pdf"]);
  s = reduce(s, events(update("x", [human("h1", "")])));
  assert.deepEqual(texts(s), []);
});

test("events for another thread, and before any state, are ignored", () => {
  resetSeq();
  const s = run(stateMsg(), { type: "events", threadId: "other", events: [chunk("a", "x")] });
  assert.deepEqual(texts(s), []);
  const none = run(events(chunk("a", "x")));
  assert.equal(none.thread, null);
});

test("switching threads drops the old view until its state arrives; persisted() is what ready carries", () => {
  resetSeq();
  let s = run(
    { type: "init", threads: [], threadId: T, models: [{ name: "m", label: "M", supports_vision: false }], model: "m", modelChosen: true, planMode: false },
    stateMsg({ last_seq: 7 }),
  );
  assert.deepEqual(persisted(s), { threadId: T, lastSeq: 7 });
  s = reduce(s, { type: "threads", threads: [], threadId: "t2" });
  assert.equal(s.thread, null);
  assert.deepEqual(persisted(s), { threadId: "t2" });
});

test("images and host errors are kept; model changes apply", () => {
  let s = run({ type: "image", sha256: "abc", dataUrl: "data:image/png;base64,AA==" }, { type: "error", message: "No API key" }, { type: "model", model: "m2", modelChosen: true, planMode: true });
  assert.equal(s.images.get("abc"), "data:image/png;base64,AA==");
  assert.equal(s.notice, "No API key");
  assert.equal(s.model, "m2");
  assert.equal(s.planMode, true);
  s = reduce(s, { type: "attachments", files: [{ name: "a.txt", size: 3 }] });
  assert.deepEqual(s.attachments, [{ name: "a.txt", size: 3 }]);
});

test("a snapshot builds the same view as upserting its messages one by one", () => {
  const wire = [
    human("h1", "q") as never,
    { type: "system", content: "sys" } as never,
    ai("a1", "looking", [{ id: "c1", name: "ls", args: { path: "/" } }, { id: "c2", name: "cat", args: {} }]) as never,
    toolMsg("t1", "c1", "ls", "a b") as never,
    toolMsg("t2", "c2", "cat", "nope", "error") as never,
    toolMsg("t3", "zz", "bash", "orphan") as never,
    human("ctx", "hidden", { additional_kwargs: { hide_from_ui: true } }) as never,
    ai("a2", "done") as never,
  ];
  const bulk = run(stateMsg({ messages: wire }));
  let one = run(stateMsg());
  one = reduce(one, { type: "events", threadId: T, events: [{ seq: 1, event: "updates", run_id: "r", thread_id: T, data: { n: { messages: wire } } }] });
  assert.deepEqual(bulk.thread?.messages, one.thread?.messages);
  assert.deepEqual([...bulk.thread!.callOwner], [...one.thread!.callOwner]);
});

test("a 10,000-message snapshot is built with every message and every tool call's owner", () => {
  const messages = Array.from({ length: 10_000 }, (_, i) =>
    (i % 2 ? ai(`a${i}`, "answer", i % 4 === 1 ? [{ id: `c${i}`, name: "bash", args: {} }] : undefined) : human(`h${i}`, "question")) as never);
  const s = run(stateMsg({ messages }));
  assert.equal(s.thread?.messages.length, 10_000);
  assert.equal(s.thread?.callOwner.size, 2_500);
  // Its cost per message at 1,000 vs 10,000 messages (linear or not) is measured in
  // test/bench/webviewModel.bench.ts, not asserted here.
});

test("reload mid-run: the snapshot plus a replay from before the active run rebuilds the streaming message once", () => {
  resetSeq();
  const evs = [
    metadata(),
    update("ThreadDataMiddleware.before_agent", [human("h1", "go")]),
    chunk("a1", "Working "),
    chunk("a1", "on "),
    values({ title: "Go" }),
    chunk("a1", "it"),
  ];
  // The snapshot was read at seq 6: the human message is checkpointed, a1 is only in the journal.
  const s = run(
    stateMsg({ last_seq: 6, title: "Go", messages: [human("h1", "go") as never], active_run: { run_id: "run-1", status: "running", after_seq: 0 } }),
    events(...evs),
    events(...evs),
  );
  assert.deepEqual(texts(s), [["human", "go"], ["ai", "Working on it"]]);
  assert.equal(s.thread?.messages.at(1)?.streaming, true);
  assert.equal(runPhase(s), "running");
  assert.equal(s.thread?.lastSeq, 6);
  // …and the stream continues live after the replay.
  const live = reduce(s, events(chunk("a1", "."), update("model_request", [ai("a1", "Working on it.")])));
  assert.deepEqual(texts(live), [["human", "go"], ["ai", "Working on it."]]);
});

test("run status follows the latest word, whatever order host status, snapshot and journal arrive in", () => {
  resetSeq();
  // Reload mid-run: the host's status (sent before it read the thread) says no run; the snapshot says one is active.
  let s = run({ type: "status", status: {} }, stateMsg({ last_seq: 0, active_run: { run_id: "run-1", status: "running", after_seq: 0 } }));
  assert.equal(runPhase(s), "running");
  // The run ends in the journal before the host's status catches up.
  s = reduce(reduce(s, { type: "status", status: { run: { run_id: "run-1", status: "running" } } }), events(metadata(), end("success")));
  assert.equal(runPhase(s), "success");
  assert.equal(isRunActive(s), false);
  // A new run: the host says pending first, then the journal's metadata says running.
  s = reduce(s, { type: "status", status: { run: { run_id: "run-2", status: "pending" } } });
  assert.equal(runPhase(s), "pending");
  s = reduce(s, events({ ...metadata(), run_id: "run-2" }));
  assert.equal(runPhase(s), "running");
});

test("an update that repeats the history unchanged keeps the thread as it was (no copy per message)", () => {
  const wire = [
    human("h1", "q") as never,
    ai("a1", "looking", [{ id: "c1", name: "ls", args: { path: "/" } }]) as never,
    toolMsg("t1", "c1", "ls", "a b") as never,
    ai("a2", "done") as never,
  ];
  const shown = run(stateMsg({ messages: wire }));
  const again = reduce(shown, { type: "events", threadId: T, events: [{ seq: 1, event: "updates", run_id: "r", thread_id: T, data: { n: { messages: wire } } }] });
  assert.equal(again.thread!.messages, shown.thread!.messages, "the same list: nothing re-renders");
  const changed = reduce(again, { type: "events", threadId: T, events: [{ seq: 2, event: "updates", run_id: "r", thread_id: T, data: { n: { messages: [toolMsg("t1", "c1", "ls", "a b c")] } } }] });
  assert.notEqual(changed.thread!.messages, shown.thread!.messages);
  assert.equal(changed.thread!.messages.at(1)!.toolCalls[0]!.result?.content, "a b c", "a changed result still applies");
  assert.equal(changed.thread!.messages.at(0), shown.thread!.messages.at(0), "untouched rows keep their identity");
});

test("a run paused on approval leaves the thread waiting for the user's approval, from the journal and from a snapshot; the next run clears it", () => {
  resetSeq();
  const pending = [{ tool_call_id: "c1", name: "bash", args: { command: "make" }, class: "shell" as const, reason: "runs a command on this machine: make" }];
  const started = metadata();
  const asked = update("model_request", [ai("a1", "", [{ id: "c1", name: "bash", args: { command: "make" } }])]);
  const ended = end("success");
  const paused = { ...ended, data: { ...ended.data, stop_reason: "approval", pending_approvals: pending } } as typeof ended;
  let s = run(stateMsg(), events(started, asked, paused));
  assert.equal(s.thread?.run.awaitingApproval, true);
  assert.equal(runPhase(s), "success");
  s = reduce(s, events(metadata()));
  assert.equal(s.thread?.run.awaitingApproval, false, "the decision run (or any new run) is under way");
  assert.equal(run(stateMsg({ pending_approvals: pending })).thread?.run.awaitingApproval, true, "after a reload, from threads/state");
  assert.equal(run(stateMsg({ pending_approvals: [] })).thread?.run.awaitingApproval, false);
  assert.equal(run(stateMsg(), events(metadata(), end("success"))).thread?.run.awaitingApproval, false);
});

test("before the host's init the panel has not heard of models yet: no 'choose a model' start state, and init says it is ready", async () => {
  const { setupMode } = await import("../../../webview/components/modelSetup.js");
  assert.equal(initialState.hostReady, false);
  assert.equal(setupMode(initialState), "hidden");
  const none = reduce(initialState, { type: "init", threads: [], threadId: null, models: [], model: null, modelChosen: false, planMode: false });
  assert.equal(none.hostReady, true);
  assert.equal(setupMode(none), "none");
});
