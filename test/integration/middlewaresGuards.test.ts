// The tail guards through the real CLI (dist/cli.js): TerminalResponse, ModelLengthFinishReason,
// SafetyFinishReason. The scripted model server is the only fake; each test asserts what the
// model was sent (server.requests), the events, and what `deerflow state` shows afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ScriptedReply } from "../fixtures/modelServer.js";
import { chat, textOf } from "../fixtures/requests.js";
import { cliState, runCli, sandboxDirs, scriptedRun, scriptedRunArgs, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";

const server = useModelServer();

const baseArgs = (dirs: Dirs, prompt: string) => scriptedRunArgs(server, dirs, prompt);

const run = (dirs: Dirs, script: ScriptedReply[], prompt: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) =>
  scriptedRun(server, dirs, script, prompt, extra, env);

const state = cliState;

const RECOVERY =
  "<system_reminder>\nYour previous response after the tool execution was empty. Review the tool results already present in the conversation and provide a concise, user-visible final response. Do not call another tool unless it is strictly necessary.\n</system_reminder>";
const FALLBACK =
  "The model completed the tool run but returned no final response, including after one automatic retry. Please try again or use a different model.";
const ls = { name: "ls", args: { description: "look around", path: "/mnt/user-data/workspace" } };

test("TerminalResponse: an empty answer after a tool call gets one hidden retry; the retry's answer is the run's", async () => {
  const dirs = sandboxDirs();
  const r = await run(dirs, [{ toolCalls: [ls] }, { content: "" }, { content: "The folder is empty." }], "what is in my workspace?");
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  assert.equal(r.end!.data.status, "success");
  assert.equal(r.requests.length, 3);
  // The retry request: the history up to the tool result (the empty answer removed), then the hidden nudge.
  const retry = chat(r.requests[2]!);
  assert.equal(retry.at(-2)!.role, "tool");
  assert.equal(retry.at(-1)!.role, "user");
  assert.equal(textOf(retry.at(-1)), RECOVERY);
  assert.ok(!chat(r.requests[1]!).some((m) => textOf(m) === RECOVERY), "the first post-tool request has no nudge");
  const s = await state(dirs, r.threadId);
  const messages = s.messages as Array<{ type: string; content: unknown; name?: string }>;
  assert.deepEqual(messages.map((m) => m.type), ["human", "ai", "tool", "ai"], "no empty answer and no nudge in state");
  assert.equal(messages.at(-1)!.content, "The folder is empty.");
  assert.ok(!JSON.stringify(messages).includes("terminal_response_recovery"));
});

test("TerminalResponse: a second empty answer ends the run as an error with DeerFlow's fallback text, in state and on end", async () => {
  const dirs = sandboxDirs();
  const r = await run(dirs, [{ toolCalls: [ls] }, { content: "" }, { content: "  " }], "what is in my workspace?");
  assert.equal(r.code, 1, r.stdout.slice(-2000));
  assert.equal(r.end!.data.status, "error");
  assert.equal(r.end!.data.error, FALLBACK);
  assert.equal(r.requests.length, 3, "one retry, not two");
  assert.equal(textOf(chat(r.requests[2]!).at(-1)), RECOVERY);
  const s = await state(dirs, r.threadId);
  const last = (s.messages as Array<Record<string, any>>).at(-1)!;
  assert.equal(last.type, "ai");
  assert.equal(last.content, FALLBACK);
  assert.equal(last.additional_kwargs.deerflow_error_fallback, true);
  assert.equal(last.additional_kwargs.error_reason, "Model returned an empty terminal response after one retry");
  assert.equal((s.messages as unknown[]).length, 4);
});

test("TerminalResponse: an empty answer without tool use in this turn is left alone (not retried)", async () => {
  const dirs = sandboxDirs();
  const r = await run(dirs, [{ content: "" }], "hi");
  assert.equal(r.requests.length, 1);
  assert.equal(r.end!.data.status, "success");
});

test("ModelLength: finish_reason length on a final answer keeps the text and ends with stop_reason model_length_capped", async () => {
  const dirs = sandboxDirs();
  const r = await run(dirs, [{ content: "Here is the first half of the report", finishReason: "length" }], "write a long report");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end!.data.status, "success");
  assert.equal(r.end!.data.stop_reason, "model_length_capped");
  assert.equal(r.requests.length, 1);
  const last = ((await state(dirs, r.threadId)).messages as Array<Record<string, any>>).at(-1)!;
  assert.equal(last.content, "Here is the first half of the report");
  assert.equal(last.additional_kwargs.stop_reason, "model_length_capped");
});

test("Safety: a content-filtered reply's tool calls are stripped, never run; the answer says why; stop_reason safety_capped", async () => {
  const dirs = sandboxDirs();
  const r = await run(
    dirs,
    [{ content: "Writing it now", toolCalls: [{ name: "write_file", id: "call_filtered", args: { description: "save", path: "/mnt/user-data/workspace/half.md", content: "half a sent" } }], finishReason: "content_filter" }],
    "write the file",
  );
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  assert.equal(r.end!.data.status, "success");
  assert.equal(r.end!.data.stop_reason, "safety_capped");
  assert.equal(r.requests.length, 1, "nothing was sent back to the model: the run ended on the filtered reply");
  assert.ok(!r.lines.some((l) => l.event === "updates" && l.data.tools), "no tool node ran");
  const event = r.lines.find((l) => l.event === "custom" && l.data.type === "safety_termination");
  assert.ok(event, "safety_termination custom event");
  assert.deepEqual([event.data.detector, event.data.suppressed_tool_call_count, event.data.suppressed_tool_call_names], ["openai_compatible_content_filter", 1, ["write_file"]]);
  const s = await state(dirs, r.threadId);
  const last = (s.messages as Array<Record<string, any>>).at(-1)!;
  assert.equal(last.type, "ai");
  assert.deepEqual(last.tool_calls ?? [], []);
  assert.equal(
    last.content,
    "Writing it now\n\nThe model provider stopped this response with a safety-related signal (finish_reason='content_filter', detector='openai_compatible_content_filter'). Any tool calls produced in this turn were suppressed because their arguments may be truncated and unsafe to execute. Please rephrase the request or ask for a narrower output.",
  );
  assert.equal(last.additional_kwargs.safety_termination.suppressed_tool_call_count, 1);
  assert.ok(!JSON.stringify(last.additional_kwargs).includes("half a sent"), "the filtered arguments are not kept");
});

test("DynamicContext: the date is a hidden message of each request, not in the system prompt (byte-identical across dates) nor in state", async () => {
  const dirs = sandboxDirs();
  // Two time zones 26 hours apart: whatever the clock says, the harness's local dates differ.
  server.setScript([{ content: "Morning." }, { content: "Evening." }]);
  const first = server.requests.length;
  const r1 = await runCli(baseArgs(dirs, "what day is it?"), { TZ: "Pacific/Kiritimati" });
  assert.equal(r1.code, 0, r1.stderr);
  const threadId = r1.lines.at(-1)!.data.thread_id as string;
  const r2 = await runCli([...baseArgs(dirs, "and now?"), "--thread", threadId], { TZ: "Etc/GMT+12" });
  assert.equal(r2.code, 0, r2.stderr);
  const [a, b] = server.requests.slice(first);
  const system = (req: typeof a) => req!.body!.messages!.filter((m) => m.role === "system").map((m) => JSON.stringify(m.content));
  assert.equal(system(a).length, 1);
  assert.deepEqual(system(b), system(a), "the system message is byte-identical");
  assert.ok(!system(a)[0]!.includes("current_date"));
  const reminder = /^<system-reminder>\n<current_date>(\d{4}-\d{2}-\d{2}), (Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)<\/current_date>\n<\/system-reminder>$/;
  const dates = [a, b].map((req) => {
    const sent = req!.body!.messages!.filter((m) => m.role !== "system");
    assert.equal(sent[0]!.name, "dynamic_context");
    // Before the first user message: the history after it is a stable prefix within a day.
    assert.match(textOf(sent[0]), reminder);
    assert.equal(sent.filter((m) => reminder.test(textOf(m))).length, 1, "one reminder per request");
    return reminder.exec(textOf(sent[0]))![1];
  });
  assert.notEqual(dates[0], dates[1], "each request carries the harness's current local date");
  assert.equal(textOf(chat(b!).at(-1)), "--- BEGIN USER INPUT ---\nand now?\n--- END USER INPUT ---");
  const s = await state(dirs, threadId);
  assert.deepEqual((s.messages as Array<{ type: string }>).map((m) => m.type), ["human", "ai", "human", "ai"]);
  assert.ok(!JSON.stringify(s.messages).includes("current_date"), "the reminder is never stored");
});

test("LoopDetection counts per thread: repeats in a second CLI run continue the first run's count, warn, then force-stop with stop_reason loop_capped", async () => {
  const dirs = sandboxDirs();
  const same = { name: "ls", args: { description: "look again", path: "/mnt/user-data/workspace" } };
  const r1 = await run(dirs, [{ toolCalls: [same] }, { toolCalls: [same] }, { content: "Nothing there yet." }], "check the workspace");
  assert.equal(r1.code, 0, r1.stderr);
  assert.ok(!r1.requests.some((req) => chat(req).some((m) => m.name === "loop_warning")), "two repeats: no warning yet");

  const r2 = await run(dirs, [{ toolCalls: [same] }, { toolCalls: [same] }, { content: "still looking", toolCalls: [same] }], "continue", ["--thread", r1.threadId]);
  assert.equal(r2.code, 0, r2.stderr + r2.stdout.slice(-2000));
  // 3rd identical set overall (1st of this run) → the warning rides on this run's next request.
  const warned = r2.requests.map((req) => chat(req).filter((m) => m.name === "loop_warning").length);
  assert.deepEqual(warned, [0, 1, 0]);
  assert.match(textOf(chat(r2.requests[1]!).at(-1)), /^\[LOOP DETECTED\] You are repeating the same tool calls/);
  // 5th overall (3rd of this run) → forced stop: no tool runs, the answer ends the run.
  assert.equal(r2.requests.length, 3);
  assert.equal(r2.end!.data.status, "success");
  assert.equal(r2.end!.data.stop_reason, "loop_capped");
  const s2 = await state(dirs, r1.threadId);
  const last = (s2.messages as Array<Record<string, any>>).at(-1)!;
  assert.equal(last.type, "ai");
  assert.deepEqual(last.tool_calls ?? [], []);
  assert.equal(last.content, "still looking\n\n[FORCED STOP] Repeated tool calls exceeded the safety limit. Producing final answer with results collected so far.");
  assert.ok(!JSON.stringify(s2.messages).includes("loop_warning"), "the warning is request-only");
});
