// Non-destructive summarization, durable context and manual compaction (issue 15) through the
// real CLI (dist/cli.js) and a scripted model server. The server answers by reading the request:
// a summary request is one user message holding the summary prompt; a subagent's carries its
// system prompt; everything else is the lead agent. Waits are on processes and requests, never timers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, RequestMessage, ScriptedReply, ScriptFn } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { cliState, runCli, sandboxDirs, spawnCli, useModelServer } from "./helpers/cli.js";
import { errorOf, settings, startHarness, type HarnessProcess } from "./helpers/server.js";
import { MEMORY_UPDATE_PROMPT_HEAD } from "../../extension/harness/memory/extract.js";
import type { Dirs } from "./helpers/cli.js";

const server = useModelServer();

const SUMMARY_MARK = "Messages to summarize:";
const SUBAGENT_PROMPT = "You are a general-purpose subagent";

const isSummary = (req: RecordedRequest) => (req.body?.messages ?? []).length === 1 && textOf(req.body!.messages![0]).includes(SUMMARY_MARK);
const isSubagent = (req: RecordedRequest) => (req.body?.messages ?? []).some((m) => m.role === "system" && textOf(m).includes(SUBAGENT_PROMPT));
const all = (req: RecordedRequest) => (req.body?.messages ?? []).map(textOf).join("\n");

/** A config file in the data dir: two models on the scripted server, summarization as given. */
function configure(d: Dirs, summarization: Record<string, unknown>, memory = false): void {
  writeFileSync(
    join(d.dataDir, "config.json"),
    JSON.stringify({
      models: [
        { name: "main", model: "scripted-main", base_url: server.url },
        { name: "summarizer", model: "scripted-sum", base_url: server.url },
      ],
      default_model: "main",
      memory: { enabled: memory },
      summarization,
    }),
  );
}

const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];

async function run(d: Dirs, thread: string, prompt: string, extra: string[] = []) {
  const first = server.requests.length;
  const r = await runCli(["run", ...base(d), "--thread", thread, "--prompt", prompt, ...extra]);
  return { ...r, requests: server.requests.slice(first) };
}

/** Every assistant tool call in the request is answered by a tool message before the next assistant/user turn. */
function assertPairsIntact(messages: RequestMessage[]): void {
  messages.forEach((m, i) => {
    for (const call of m.tool_calls ?? []) {
      const rest = messages.slice(i + 1);
      const end = rest.findIndex((n) => n.role !== "tool");
      const results = (end < 0 ? rest : rest.slice(0, end)).map((n) => n.tool_call_id);
      assert.ok(results.includes(call.id), `tool call ${call.id} has its result right after it`);
    }
    if (m.role === "tool") {
      const calls = messages.slice(0, i).flatMap((n) => n.tool_calls ?? []).map((c) => c.id);
      assert.ok(calls.includes(m.tool_call_id), `tool result ${m.tool_call_id} has its call before it`);
    }
  });
}

const ls = (id: string): ScriptedReply => ({ toolCalls: [{ id, name: "ls", args: { description: "list the workspace", path: "/mnt/user-data/workspace" } }] });

/**
 * Two turns, each a tool call then an answer. Scripted per lead request count; summary requests
 * are answered by `summary(req)`.
 */
function twoTurnScript(summary: (req: RecordedRequest) => ScriptedReply): ScriptFn {
  let lead = 0;
  return (req) => {
    if (isSummary(req)) return summary(req);
    const turn = [ls("call_one"), { content: "Answer one." }, ls("call_two"), { content: "Answer two." }, { content: "Answer three." }];
    return turn[lead++];
  };
}

test("a crossed trigger: the next request holds the summary and the preserved tail, tool calls stay paired, state keeps every message", async () => {
  const d = sandboxDirs();
  configure(d, { trigger: [{ type: "tokens", value: 1_000_000 }, { type: "messages", value: 6 }], keep: { type: "messages", value: 1 } });
  server.setScript(twoTurnScript(() => ({ content: "SUMMARY-ALPHA: the user asked about the workspace listing.", usage: { prompt_tokens: 4321, completion_tokens: 21 } })));
  const r1 = await run(d, "t-auto", "first question about listing");
  assert.equal(r1.code, 0, r1.stderr);
  assert.equal(r1.requests.filter(isSummary).length, 0, "below the trigger: no summary");
  const r2 = await run(d, "t-auto", "second question please");
  assert.equal(r2.code, 0, r2.stderr);

  // Run 2: [h1, ai(ls), tool, ai, h2] < 6, then [.., ai(ls), tool] = 7 ≥ 6: summarized before the second call.
  const kinds = r2.requests.map((q) => (isSummary(q) ? "summary" : "lead"));
  assert.deepEqual(kinds, ["lead", "summary", "lead"]);
  const summaryReq = r2.requests[1]!;
  const prompt = textOf(summaryReq.body!.messages![0]);
  assert.match(prompt, /<new_messages>[\s\S]*first question about listing[\s\S]*<\/new_messages>/);
  assert.ok(!prompt.includes("second question please"), "the latest user message is preserved, not summarized");
  assert.equal(summaryReq.body!.model, "scripted-main", "without model_name the run's model summarizes");

  const after = r2.requests[2]!;
  const msgs = after.body!.messages!;
  assert.ok(!all(after).includes("first question about listing"), "the summarized turn left the request");
  assert.ok(!all(after).includes("Answer one."), "the summarized answer left the request");
  const durable = msgs.find((m) => m.role === "user" && textOf(m).includes("<durable_context_data>"));
  assert.ok(durable, "the summary reaches the model in the durable context block");
  assert.match(textOf(durable), /## Conversation summary so far\nSUMMARY-ALPHA: the user asked about the workspace listing\./);
  assert.match(textOf(msgs[0]), /Durable context authority contract/, "the authority contract joins the one system message");
  // The preserved tail: the current request (rescued, the cut fell after it), its tool call and result.
  const tail = msgs.filter((m) => m.role !== "system" && m.name !== "dynamic_context" && m !== durable);
  assert.deepEqual(tail.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.match(textOf(tail[0]), /second question please/);
  assert.equal(tail[1]!.tool_calls?.[0]?.id, "call_two");
  assertPairsIntact(msgs);
  // The summary call is not streamed into the run's messages (its result reaches the journal as a state update only).
  assert.ok(!r2.lines.some((l) => l.event === "messages" && JSON.stringify(l.data).includes("SUMMARY-ALPHA")), "the summary model's tokens are not the run's messages");
  const update = r2.lines.find((l) => l.event === "updates" && l.data?.["before_model"]?.summary_text);
  assert.equal(update?.data["before_model"].summary_text, "SUMMARY-ALPHA: the user asked about the workspace listing.");
  // The journal carries the summary once in values, where it appeared; later steps do not repeat it.
  const valuesWithSummary = r2.lines.filter((l) => l.event === "values" && typeof l.data?.summary_text === "string");
  assert.ok(r2.lines.filter((l) => l.event === "values").length > valuesWithSummary.length, "values events after the summary exist");
  assert.equal(valuesWithSummary.length, 1, "the summary is journaled in one values event");

  const s = await cliState(d, "t-auto");
  assert.equal(s.messages.length, 8, "state still lists every message");
  assert.equal(s.messages[0].content, "first question about listing");
  assert.equal(s.summary_text, "SUMMARY-ALPHA: the user asked about the workspace listing.");
  const h2 = s.messages[4];
  assert.equal(h2.content, "second question please");
  // The summary call's tokens are the run's: split under `summarization` and in the totals.
  const usage = r2.lines.find((l) => l.event === "end")?.data?.usage;
  assert.deepEqual(usage?.summarization, { input_tokens: 4321, output_tokens: 21, total_tokens: 4342 });
  const leadTotal = s.messages.slice(5).reduce((n: number, m: { usage_metadata?: { total_tokens: number } }) => n + (m.usage_metadata?.total_tokens ?? 0), 0);
  assert.ok(leadTotal > 0, JSON.stringify(s.messages.slice(5)));
  assert.equal(usage?.total_tokens, leadTotal + 4342);
  assert.deepEqual(s.summary_upto, { message_id: h2.id, message_count: 4, kept_ids: [h2.id] });

  // The next turn: the summary is not redone below the trigger, and the model still sees summary + tail.
  const r3 = await run(d, "t-auto", "third question");
  assert.equal(r3.code, 0, r3.stderr);
  // Counted as the model sees it: [summary, h2, ai(ls), tool, ai, h3] = 6 crosses 6 again; the new
  // summary folds the previous one in, and h2 (no longer the latest request) is summarized now.
  const again = r3.requests.filter(isSummary);
  assert.equal(again.length, 1);
  assert.match(textOf(again[0]!.body!.messages![0]), /<existing_summary>\nSUMMARY-ALPHA: the user asked about the workspace listing\.\n<\/existing_summary>[\s\S]*<new_messages>[\s\S]*second question please/);
  const s3 = await cliState(d, "t-auto");
  assert.equal(s3.messages.length, 10);
  assert.deepEqual(s3.summary_upto, { message_id: s3.messages[7].id, message_count: 8, kept_ids: [] });
});

test("the configured summary model fails: the run's model summarizes, the run succeeds, nothing is lost", async () => {
  const d = sandboxDirs();
  configure(d, { model_name: "summarizer", trigger: { type: "messages", value: 6 }, keep: { type: "messages", value: 2 } });
  server.setScript(twoTurnScript((req) => (req.body!.model === "scripted-sum" ? { error: { status: 500 } } : { content: "SUMMARY-FALLBACK" })));
  assert.equal((await run(d, "t-fallback", "first question")).code, 0);
  const r2 = await run(d, "t-fallback", "second question");
  assert.equal(r2.code, 0, r2.stderr);
  const summaries = r2.requests.filter(isSummary);
  assert.deepEqual(summaries.map((q) => [q.body!.model, q.status]), [["scripted-sum", 500], ["scripted-main", 200]]);
  assert.match(r2.stderr, /summarization: summarizer: .*falling back to the run's model/);
  const s = await cliState(d, "t-fallback");
  assert.equal(s.summary_text, "SUMMARY-FALLBACK");
  assert.equal(s.messages.length, 8);
});

test("every summary model fails: the run still succeeds, the failure is journaled, no message is lost or hidden", async () => {
  const d = sandboxDirs();
  configure(d, { model_name: "summarizer", trigger: { type: "messages", value: 6 }, keep: { type: "messages", value: 2 } });
  server.setScript(twoTurnScript(() => ({ error: { status: 500 } })));
  assert.equal((await run(d, "t-fail", "first question")).code, 0);
  const r2 = await run(d, "t-fail", "second question");
  assert.equal(r2.code, 0, r2.stderr);
  assert.equal(r2.lines.at(-1)?.data?.status, "success");
  assert.deepEqual(r2.requests.filter(isSummary).map((q) => [q.body!.model, q.status]), [["scripted-sum", 500], ["scripted-main", 500]]);
  const failed = r2.lines.find((l) => l.event === "custom" && l.data?.type === "summarization_failed");
  assert.ok(failed, "the failure is journaled");
  assert.equal(failed.data.attempts.length, 2);
  // The model request after the failure is the whole history, as without summarization.
  const last = r2.requests.filter((q) => !isSummary(q)).at(-1)!;
  assert.ok(all(last).includes("first question") && all(last).includes("Answer one."));
  assert.ok(!all(last).includes("<durable_context_data>"));
  const s = await cliState(d, "t-fail");
  assert.equal(s.messages.length, 8);
  assert.equal(s.summary_text, null);
});

test("compact fails visibly when the summary model fails, succeeds otherwise, and the next request uses the summary", async () => {
  const d = sandboxDirs();
  // No automatic trigger: only the manual compaction summarizes.
  configure(d, { model_name: "summarizer", trigger: [], keep: { type: "messages", value: 2 } });
  let summaryReply: (req: RecordedRequest) => ScriptedReply = () => ({ error: { status: 500 } });
  server.setScript(twoTurnScript((req) => summaryReply(req)));
  assert.equal((await run(d, "t-compact", "first question")).code, 0);
  assert.equal((await run(d, "t-compact", "second question")).code, 0);

  const failed = await runCli(["compact", ...base(d), "--thread", "t-compact"]);
  assert.equal(failed.code, 1, failed.stdout);
  assert.match(failed.stderr, /deerflow compact: Summary generation failed: summarizer: .*; main: /);
  let s = await cliState(d, "t-compact");
  assert.equal(s.summary_text, null, "a failed compaction writes nothing");
  assert.equal(s.messages.length, 8);
  const runs = await runCli(["runs", ...base(d), "--thread", "t-compact"]);
  assert.equal(runs.lines[0]?.status, "error", "the compaction is a run of the thread, ended error with the reason");

  summaryReply = (req) => (req.body!.model === "scripted-sum" ? { content: "SUMMARY-MANUAL", usage: { prompt_tokens: 1234, completion_tokens: 56 } } : { error: { status: 500 } });
  const first = server.requests.length;
  const ok = await runCli(["compact", ...base(d), "--thread", "t-compact"]);
  assert.equal(ok.code, 0, ok.stderr);
  const result = ok.lines[0]!;
  assert.equal(result.compacted, true);
  assert.equal(result.summary_text, "SUMMARY-MANUAL");
  assert.equal(result.model, "summarizer");
  // keep 2 would cut between ai(ls) and its result: the cut moves back before ai(ls); h2, the
  // latest request, is kept. Summarized: h1, ai(ls), tool, ai.
  assert.equal(result.summarized, 4);
  assert.equal(result.preserved, 4);
  const prompt = textOf(server.requests.slice(first).find(isSummary)!.body!.messages![0]);
  assert.ok(prompt.includes("first question") && !prompt.includes("second question"));
  s = await cliState(d, "t-compact");
  assert.equal(s.summary_text, "SUMMARY-MANUAL");
  assert.equal(s.messages.length, 8, "compaction removes no message");
  // The summary call's tokens are the compaction run's usage (split under `summarization`), so
  // the thread's usage counts them too.
  const compactRun = (await runCli(["runs", ...base(d), "--thread", "t-compact"])).lines.find((l) => l.run_id === result.run_id);
  const spent = { input_tokens: 1234, output_tokens: 56, total_tokens: 1290 };
  assert.deepEqual({ ...compactRun?.usage, cost: undefined }, { ...spent, summarization: spent, cost: undefined });
  assert.ok("cost" in (compactRun?.usage ?? {}), "priced like any run's usage");
  const compactEnd = (await runCli(["events", ...base(d), "--thread", "t-compact"])).lines.find((l) => l.event === "end" && l.run_id === result.run_id);
  assert.deepEqual(compactEnd?.data?.usage?.summarization, spent);
  assert.ok(s.usage.total.total_tokens >= 1290, JSON.stringify(s.usage));

  const r3 = await run(d, "t-compact", "third question");
  assert.equal(r3.code, 0, r3.stderr);
  const next = r3.requests[0]!;
  assert.match(all(next), /## Conversation summary so far\nSUMMARY-MANUAL/);
  assert.ok(!all(next).includes("first question") && !all(next).includes("Answer one."));
  assert.ok(all(next).includes("third question"));
  assertPairsIntact(next.body!.messages!);
});

test("compact: a thread within keep has nothing to compact; bad input is a usage error; an unknown thread exits 1", async () => {
  const d = sandboxDirs();
  configure(d, { trigger: [], keep: { type: "messages", value: 10 } });
  server.setScript([{ content: "Hello." }]);
  assert.equal((await run(d, "t-small", "hi")).code, 0);
  const before = server.requests.length;
  const r = await runCli(["compact", ...base(d), "--thread", "t-small"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.lines[0]?.compacted, false);
  assert.match(r.lines[0]?.reason, /Nothing to compact/);
  assert.equal(server.requests.length, before, "no model is asked");
  assert.equal((await runCli(["compact", ...base(d)])).code, 2);
  assert.equal((await runCli(["compact", ...base(d), "--thread", "t-small", "--model", "nope"])).code, 2);
  const missing = await runCli(["compact", ...base(d), "--thread", "no-such-thread"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /No thread no-such-thread/);
});

test("durable context after compaction: the todo list, presented artifacts and the summarized subagent result", async () => {
  const d = sandboxDirs();
  configure(d, { trigger: [], keep: { type: "messages", value: 2 } });
  let lead = 0;
  const leadTurns: ScriptedReply[] = [
    { toolCalls: [{ id: "todo1", name: "write_todos", args: { todos: [{ content: "Write the report", status: "completed" }, { content: "Review & <ship> it", status: "completed" }] } }] },
    { toolCalls: [{ id: "task1", name: "task", args: { description: "research the topic", prompt: "Find the answer SUB-ONE.", subagent_type: "general-purpose" } }] },
    { toolCalls: [{ id: "write1", name: "write_file", args: { description: "report", path: "/mnt/user-data/outputs/report.md", content: "# Report\n42\n" } }] },
    { toolCalls: [{ id: "present1", name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] },
    { content: "Report presented." },
    { content: "Next steps noted." },
  ];
  server.setScript((req) => {
    if (isSummary(req)) return { content: "SUMMARY-DURABLE" };
    if (isSubagent(req)) return { content: "The answer is forty-two." };
    return leadTurns[lead++];
  });
  const r1 = await run(d, "t-durable", "plan and write the report", ["--plan-mode", "--subagents"]);
  assert.equal(r1.code, 0, r1.stderr);
  const c = await runCli(["compact", ...base(d), "--thread", "t-durable"]);
  assert.equal(c.code, 0, c.stderr);
  assert.equal(c.lines[0]?.compacted, true);

  const r2 = await run(d, "t-durable", "what is next?", ["--plan-mode", "--subagents"]);
  assert.equal(r2.code, 0, r2.stderr);
  const req = r2.requests[0]!;
  const block = textOf(req.body!.messages!.find((m) => m.role === "user" && textOf(m).includes("<durable_context_data>")));
  assert.match(block, /## Conversation summary so far\nSUMMARY-DURABLE/);
  // Field values are escaped: data, never markup.
  assert.match(block, /## Todo list\n- \[completed\] Write the report\n- \[completed\] Review &amp; &lt;ship&gt; it/);
  assert.match(block, /## Presented artifacts\n- \/mnt\/user-data\/outputs\/report\.md/);
  assert.match(block, /## Work already delegated\n.*\n- \[completed\] research the topic \(via general-purpose; completed result; do NOT delegate again; reuse this result\) -> The answer is forty-two\./);
  // The subagent's result itself left the request with the summarized part; the tail is paired.
  assert.ok(!(req.body!.messages ?? []).some((m) => m.role === "tool" && m.tool_call_id === "task1"));
  assertPairsIntact(req.body!.messages!);
  const s = await cliState(d, "t-durable");
  assert.equal(s.messages.filter((m: { type: string }) => m.type === "tool").length, 4, "every tool result is still in the thread");
});

test("compact refuses while a run is active on the thread (the run system's lock) and the run finishes unharmed", async () => {
  const d = sandboxDirs();
  configure(d, { trigger: [], keep: { type: "messages", value: 1 } });
  const gate = server.gate("busy-compact");
  let lead = 0;
  server.setScript((req) => (isSummary(req) ? { content: "SUMMARY-BUSY" } : [{ content: "One." }, { content: "Held answer.", gate: { until: gate } }][lead++]));
  assert.equal((await run(d, "t-busy", "first question")).code, 0);
  const running = spawnCli(["run", ...base(d), "--thread", "t-busy", "--prompt", "second question"]);
  await server.waitForGate("busy-compact");
  const refused = await runCli(["compact", ...base(d), "--thread", "t-busy"]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /deerflow compact: .*(busy|active)/i);
  gate.open();
  const done = await running.done;
  assert.equal(done.code, 0, done.stderr);
  const s = await cliState(d, "t-busy");
  assert.equal(s.summary_text, null);
  assert.equal(s.messages.at(-1).content, "Held answer.");
  // Once the run has ended, the same compaction goes through.
  const ok = await runCli(["compact", ...base(d), "--thread", "t-busy"]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.lines[0]?.summary_text, "SUMMARY-BUSY");
});

test("deerflow cancel stops a compaction mid-summary: the run ends interrupted and no summary is written", async () => {
  const d = sandboxDirs();
  configure(d, { trigger: [], keep: { type: "messages", value: 1 } });
  const gate = server.gate("cancel-compact");
  let lead = 0;
  server.setScript((req) => (isSummary(req) ? { content: "SUMMARY-TOO-LATE", gate: { until: gate } } : { content: `Answer ${++lead}.` }));
  for (const prompt of ["first question", "second question"]) assert.equal((await run(d, "t-cancel", prompt)).code, 0);
  const compacting = spawnCli(["compact", ...base(d), "--thread", "t-cancel"]);
  const held = await server.waitForGate("cancel-compact");
  const compactRun = (await runCli(["runs", ...base(d), "--thread", "t-cancel"])).lines[0]!;
  assert.equal(compactRun.status, "running");
  const cancel = spawnCli(["cancel", ...base(d), "--run", compactRun.run_id]);
  // The compaction sees the cancel and aborts its summary call (no timer: the request settles).
  await server.waitForRequests(held + 1, { settled: true });
  assert.equal(server.requests[held]!.clientAborted, true, "the summary call was aborted");
  gate.open();
  assert.equal((await cancel.done).code, 0);
  const done = await compacting.done;
  assert.equal(done.code, 1, done.stdout);
  assert.match(done.stderr, /deerflow compact: The compaction was cancelled/);
  const s = await cliState(d, "t-cancel");
  assert.equal(s.summary_text, null, "a cancelled compaction writes nothing");
  assert.equal(s.summary_upto, null);
  const after = (await runCli(["runs", ...base(d), "--thread", "t-cancel"])).lines.find((l) => l.run_id === compactRun.run_id);
  assert.equal(after?.status, "interrupted");
  const ends = (await runCli(["events", ...base(d), "--thread", "t-cancel"])).lines.filter((l) => l.event === "end" && l.run_id === compactRun.run_id);
  assert.deepEqual(ends.map((e) => e.data.status), ["interrupted"], "one end, interrupted");
});

/** Over RPC: a new thread, subscribed from its start, with two finished turns ("first question", "second question"). */
async function twoRpcTurns(h: HarnessProcess, workspaceFolder: string, model?: string) {
  const thread = await h.request("threads/create", { workspaceFolder });
  const sub = await h.request("events/subscribe", { workspaceFolder, threadId: thread.thread_id, afterSeq: 0 });
  for (const prompt of ["first question", "second question"]) {
    const started = await h.request("runs/start", { workspaceFolder, threadId: thread.thread_id, prompt, ...(model ? { model } : {}) });
    await h.waitEvent(sub.subscriptionId, (e) => e.run_id === started.run_id && e.event === "end");
  }
  return { thread, sub };
}

test("threads/compact over RPC: summary_failed when the model fails, the summary otherwise; the summarization settings travel", async () => {
  const d = sandboxDirs();
  const h = startHarness();
  try {
    let fail = true;
    let lead = 0;
    server.setScript((req) => (isSummary(req) ? (fail ? { error: { status: 500 } } : { content: "SUMMARY-RPC" }) : { content: `Answer ${++lead}.` }));
    // triggerTokens 0: no automatic summary; keep 1 message in full.
    await h.request("harness/initialize", { dataDir: d.dataDir, settings: settings(server.url, { summarization: { enabled: true, trigger_tokens: 0, keep_messages: 1 } }) });
    const workspaceFolder = d.workspace;
    const { thread } = await twoRpcTurns(h, workspaceFolder);
    assert.equal(server.requests.slice(-2).filter(isSummary).length, 0, "no automatic summary with triggerTokens 0");
    const err = await errorOf(h.request("threads/compact", { workspaceFolder, threadId: thread.thread_id }));
    assert.equal(err.data?.code, "summary_failed");
    assert.match(err.message, /Summary generation failed: scripted: /);
    fail = false;
    const ok = await h.request("threads/compact", { workspaceFolder, threadId: thread.thread_id });
    assert.equal(ok.compacted, true);
    assert.equal(ok.summary_text, "SUMMARY-RPC");
    // keep 1: [h1, a1, h2, a2] is cut before a2; h2, the latest request, is kept.
    assert.deepEqual([ok.summarized, ok.preserved], [2, 2]);
    const state = await h.request("threads/state", { workspaceFolder, threadId: thread.thread_id });
    assert.equal(state.messages.length, 4, "the panel's view still has every message");
  } finally {
    await h.close();
  }
});

test("threads/compact without a model summarizes with the model of the thread's latest run, not the default one", async () => {
  const d = sandboxDirs();
  const h = startHarness();
  try {
    server.setScript((req) => (isSummary(req) ? { content: "SUMMARY-THREAD-MODEL" } : { content: "An answer." }));
    const s = settings(server.url, {
      models: [
        { name: "scripted", model: "scripted", base_url: server.url },
        { name: "other", model: "other-id", base_url: server.url },
      ],
      memory: { enabled: false },
      summarization: { enabled: true, trigger_tokens: 0, keep_messages: 1 },
    });
    await h.request("harness/initialize", { dataDir: d.dataDir, settings: s });
    const workspaceFolder = d.workspace;
    const { thread } = await twoRpcTurns(h, workspaceFolder, "other");
    const first = server.requests.length;
    const ok = await h.request("threads/compact", { workspaceFolder, threadId: thread.thread_id });
    assert.equal(ok.compacted, true);
    assert.equal(ok.model, "other");
    assert.deepEqual(server.requests.slice(first).filter(isSummary).map((q) => q.body?.model), ["other-id"]);
    const runs = await h.request("runs/list", { workspaceFolder, threadId: thread.thread_id });
    assert.equal(runs[0]!.model, "other", "the compaction ran as a run of the thread's model");
  } finally {
    await h.close();
  }
});

test("runs/cancel stops a threads/compact mid-summary in the same process: error cancelled, run interrupted, nothing written", async () => {
  const d = sandboxDirs();
  const h = startHarness();
  try {
    const gate = server.gate("rpc-cancel-compact");
    server.setScript((req) => (isSummary(req) ? { content: "SUMMARY-TOO-LATE", gate: { until: gate } } : { content: "An answer." }));
    await h.request("harness/initialize", { dataDir: d.dataDir, settings: settings(server.url, { memory: { enabled: false }, summarization: { enabled: true, trigger_tokens: 0, keep_messages: 1 } }) });
    const workspaceFolder = d.workspace;
    const { thread, sub } = await twoRpcTurns(h, workspaceFolder);
    const compacting = errorOf(h.request("threads/compact", { workspaceFolder, threadId: thread.thread_id }));
    const held = await server.waitForGate("rpc-cancel-compact");
    const compactRun = (await h.request("runs/list", { workspaceFolder, threadId: thread.thread_id }))[0]!;
    assert.equal(compactRun.status, "running");
    await h.request("runs/cancel", { workspaceFolder, runId: compactRun.run_id });
    await server.waitForRequests(held + 1, { settled: true });
    assert.equal(server.requests[held]!.clientAborted, true, "the summary call was aborted at once");
    gate.open();
    const err = await compacting;
    assert.equal(err.data?.code, "cancelled");
    const end = await h.waitEvent(sub.subscriptionId, (e) => e.run_id === compactRun.run_id && e.event === "end");
    assert.equal((end.data as { status: string }).status, "interrupted");
    assert.equal((await h.request("runs/list", { workspaceFolder, threadId: thread.thread_id }))[0]!.status, "interrupted");
    // No summary was written: the next run's model still sees the whole conversation.
    const first = server.requests.length;
    const next = await h.request("runs/start", { workspaceFolder, threadId: thread.thread_id, prompt: "third question" });
    await h.waitEvent(sub.subscriptionId, (e) => e.run_id === next.run_id && e.event === "end");
    const sent = all(server.requests[first]!);
    assert.ok(sent.includes("first question") && !sent.includes("SUMMARY-TOO-LATE"), sent);
  } finally {
    await h.close();
  }
});

test("deerflow compact without --model summarizes with the model of the thread's latest run, as the panel's command does", async () => {
  const d = sandboxDirs();
  configure(d, { trigger: [], keep: { type: "messages", value: 1 } });
  server.setScript((req) => (isSummary(req) ? { content: "SUMMARY-CLI-THREAD-MODEL" } : { content: "An answer." }));
  for (const prompt of ["first question", "second question"]) assert.equal((await run(d, "t-cli-model", prompt, ["--model", "summarizer"])).code, 0);
  const first = server.requests.length;
  const r = await runCli(["compact", ...base(d), "--thread", "t-cli-model"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.lines[0]?.model, "summarizer");
  assert.deepEqual(server.requests.slice(first).filter(isSummary).map((q) => q.body?.model), ["scripted-sum"], "the thread's model, not the default scripted-main");
});

test("compact with memory on flushes what it summarizes into memory first (DeerFlow's memory_flush_hook)", async () => {
  const d = sandboxDirs();
  configure(d, { trigger: [], keep: { type: "messages", value: 2 } }, true);
  const isExtraction = (req: RecordedRequest) => (req.body?.messages ?? []).some((m) => m.role === "system" && textOf(m).startsWith(MEMORY_UPDATE_PROMPT_HEAD));
  const fact = "The user keeps a pet tortoise named Leo.";
  let lead = 0;
  server.setScript((req) => {
    if (isExtraction(req)) return { content: JSON.stringify({ newFacts: [{ content: fact, category: "personal", confidence: 0.9 }], factsToRemove: [] }) };
    if (isSummary(req)) return { content: "SUMMARY-MEMORY" };
    return { content: `Answer ${++lead}.` };
  });
  // The runs themselves queue nothing (--no-memory): only the compaction's flush reaches memory.
  assert.equal((await run(d, "t-mem", "my tortoise is called Leo", ["--no-memory"])).code, 0);
  assert.equal((await run(d, "t-mem", "second question", ["--no-memory"])).code, 0);
  const first = server.requests.length;
  const c = await runCli(["compact", ...base(d), "--thread", "t-mem"]);
  assert.equal(c.code, 0, c.stderr);
  const requests = server.requests.slice(first);
  assert.deepEqual(requests.map((q) => (isSummary(q) ? "summary" : isExtraction(q) ? "extraction" : "lead")), ["summary", "extraction"]);
  const extraction = all(requests[1]!);
  assert.ok(extraction.includes("my tortoise is called Leo"), "the summarized turn is what memory gets");
  assert.ok(!extraction.includes("second question"), "the preserved request is not flushed");
  const show = await runCli(["memory", "show", "--data-dir", d.dataDir]);
  assert.equal(show.code, 0, show.stderr);
  assert.deepEqual(show.lines[0]!.facts.map((f: { content: string }) => f.content), [fact]);
});
