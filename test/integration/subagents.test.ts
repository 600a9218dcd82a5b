// Subagents (issue 14) through the real CLI (dist/cli.js): `run --subagents`, the `task` tool, its
// limits and its journal namespace. The scripted model server answers the lead agent and each
// subagent by reading the request: a subagent's system prompt is its type's, and its only user
// message is the prompt it was given. Waits are on events (stdout lines, requests), never timers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply, ScriptFn } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { cliState, runCli, sandboxDirs, scriptedRunArgs, spawnCli, tempDir, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";

const server = useModelServer();

const SUBAGENT_PROMPT = "You are a general-purpose subagent";

function system(req: RecordedRequest): string {
  return (req.body?.messages ?? []).filter((m) => m.role === "system").map(textOf).join("\n");
}

/** The delegated prompt a subagent request carries (its one genuine user message), or undefined for the lead. */
function subagentTask(req: RecordedRequest): string | undefined {
  if (!system(req).includes(SUBAGENT_PROMPT)) return undefined;
  const user = (req.body?.messages ?? []).filter((m) => m.role === "user" && m.name !== "dynamic_context").map(textOf);
  const found = user.join("\n").match(/SUB-[A-Z0-9]+/);
  return found ? found[0] : "SUB-?";
}

function toolResults(req: RecordedRequest): number {
  return (req.body?.messages ?? []).filter((m) => m.role === "tool").length;
}

const task = (id: string, name = id) => ({
  name: "task",
  id,
  args: { description: `do ${name}`, prompt: `Please handle ${name} and report.`, subagent_type: "general-purpose" },
});

const runArgs = (dirs: Dirs, prompt: string, extra: string[] = []) => [...scriptedRunArgs(server, dirs, prompt), "--subagents", ...extra];
const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];

async function events(d: Dirs, threadId: string): Promise<Array<Record<string, any>>> {
  const r = await runCli(["events", ...base(d), "--thread", threadId]);
  assert.equal(r.code, 0, r.stderr);
  return r.lines;
}

function taskToolMessages(state: Record<string, any>): Array<Record<string, any>> {
  return (state.messages as Array<Record<string, any>>).filter((m) => m.type === "tool" && m.name === "task");
}

test("two parallel task calls run concurrently and both complete with DeerFlow's result text; events carry task_id", async () => {
  const d = sandboxDirs();
  // Each subagent's reply waits until both subagents asked the model: only concurrent runs get there.
  let arrived = 0;
  let bothArrived!: () => void;
  const both = new Promise<void>((res) => (bothArrived = res));
  const script: ScriptFn = async (req) => {
    const sub = subagentTask(req);
    if (sub) {
      if (++arrived === 2) bothArrived();
      const timedOut = await Promise.race([both.then(() => false), new Promise<boolean>((res) => setTimeout(() => res(true), 10_000).unref())]);
      return { content: timedOut ? "not concurrent" : `findings of ${sub}`, usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
    }
    if (toolResults(req) === 0) return { toolCalls: [task("call_a", "SUB-A"), task("call_b", "SUB-B")], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } };
    return { content: "Both reports are in.", usage: { prompt_tokens: 200, completion_tokens: 10, total_tokens: 210 } };
  };
  server.setScript(script);
  const r = await runCli([...runArgs(d, "research two things"), "--thread", "two-tasks"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-3000));
  const end = r.lines.at(-1)!;
  assert.equal(end.data.status, "success");

  const state = await cliState(d, "two-tasks");
  // The subagents wrote nothing into the lead's checkpoint: their answers are only in the task results.
  assert.ok(!(state.messages as Array<Record<string, any>>).some((m) => m.type !== "tool" && JSON.stringify(m.content).includes("findings of")), "a subagent message leaked into the lead's state");
  const results = taskToolMessages(state);
  assert.deepEqual(
    results.map((m) => [m.tool_call_id, m.content]),
    [
      ["call_a", "Task Succeeded. Result: findings of SUB-A"],
      ["call_b", "Task Succeeded. Result: findings of SUB-B"],
    ],
  );
  assert.equal(results[0]!.additional_kwargs.subagent_status, "completed");
  assert.equal(results[0]!.additional_kwargs.subagent_result_brief, "findings of SUB-A");
  assert.match(results[0]!.additional_kwargs.subagent_result_sha256, /^[0-9a-f]{64}$/);
  assert.deepEqual(results[0]!.additional_kwargs.subagent_token_usage, { input_tokens: 10, output_tokens: 5, total_tokens: 15 });

  // The journal: each subagent's lifecycle and its own stream, namespaced by task_id, in order.
  const lines = await events(d, "two-tasks");
  for (const id of ["call_a", "call_b"]) {
    const mine = lines.filter((l) => l.event === "custom" && l.data.task_id === id);
    const types = mine.map((l) => l.data.type);
    assert.equal(types[0], "task_started");
    assert.equal(types.at(-1), "task_completed");
    assert.ok(types.includes("task_running"), `task_running for ${id}: ${types.join(",")}`);
    assert.equal(mine[0]!.data.description, id === "call_a" ? "do SUB-A" : "do SUB-B");
    assert.equal(mine[0]!.data.model_name, "scripted");
    const streamed = mine.filter((l) => l.data.type === "task_event" && l.data.event === "messages").map((l) => l.data.data.map((c: { content: string }) => c.content).join("")).join("");
    assert.equal(streamed, `findings of ${id === "call_a" ? "SUB-A" : "SUB-B"}`, "the subagent's token chunks are journaled under its task_id");
    assert.ok(mine.some((l) => l.data.type === "task_event" && l.data.event === "updates"), "the subagent's updates are journaled under its task_id");
    assert.equal(mine.at(-1)!.data.result, `findings of ${id === "call_a" ? "SUB-A" : "SUB-B"}`);
  }
  // The lead's own stream has none of the subagents' tokens: the namespaces do not leak.
  const leadText = lines
    .filter((l) => l.event === "messages")
    .flatMap((l) => l.data.filter((c: { type: string }) => c.type === "ai").map((c: { content: string }) => c.content))
    .join("");
  assert.ok(!leadText.includes("findings of"), `lead messages carry subagent tokens: ${leadText}`);
  // Subagents never see the lead's conversation.
  const subRequests = server.requests.filter((q) => subagentTask(q) !== undefined && q.body?.messages?.some((m) => textOf(m).includes("SUB-A")));
  assert.ok(subRequests.length > 0);
  for (const q of subRequests) assert.ok(!q.body!.messages!.some((m) => textOf(m).includes("research two things")), "a subagent saw the lead's messages");
  // Usage: the lead's two calls plus both subagents, split per task.
  assert.deepEqual(end.data.usage.subagents, {
    call_a: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    call_b: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  });
  assert.equal(end.data.usage.total_tokens, 120 + 210 + 30);
  assert.equal(end.data.usage.input_tokens, 100 + 200 + 20);
  assert.equal(end.data.usage.output_tokens, 20 + 10 + 10);

  // Folding (DeerFlow's TokenUsageMiddleware): the subagents' usage is in the dispatching AI
  // message, and each task result is marked so the fold is never repeated.
  const dispatcher = (state.messages as Array<Record<string, any>>).find((m) => m.type === "ai" && m.tool_calls?.some((c: { id: string }) => c.id === "call_a"));
  assert.deepEqual(
    [dispatcher!.usage_metadata.input_tokens, dispatcher!.usage_metadata.output_tokens, dispatcher!.usage_metadata.total_tokens],
    [100 + 20, 20 + 10, 120 + 30],
    "the dispatching AI message carries its own usage plus both subagents'",
  );
  for (const m of results) assert.equal(m.additional_kwargs.subagent_token_usage_attributed, true, `${m.tool_call_id} marked as folded`);
  const finalAnswer = (state.messages as Array<Record<string, any>>).filter((m) => m.type === "ai").at(-1)!;
  assert.equal(finalAnswer.usage_metadata.total_tokens, 210, "the answer after the tasks keeps its own usage only");

  // A later run on the thread re-reads the folded history and folds nothing again: its usage is its own.
  const again = await runCli([...runArgs(d, "and now a summary"), "--thread", "two-tasks"]);
  assert.equal(again.code, 0, again.stderr);
  const againEnd = again.lines.at(-1)!;
  assert.equal(againEnd.data.status, "success");
  assert.equal(againEnd.data.usage.total_tokens, 210);
  assert.equal(againEnd.data.usage.subagents, undefined);
  const after = await cliState(d, "two-tasks");
  const dispatcherAfter = (after.messages as Array<Record<string, any>>).find((m) => m.type === "ai" && m.tool_calls?.some((c: { id: string }) => c.id === "call_a"));
  assert.equal(dispatcherAfter!.usage_metadata.total_tokens, 150, "the fold is idempotent across runs");
});

test("an unknown subagent type fails with DeerFlow's error listing the available types", async () => {
  const d = sandboxDirs();
  server.setScript((req) => {
    if (toolResults(req) === 0) return { toolCalls: [{ name: "task", id: "call_x", args: { description: "d", prompt: "p", subagent_type: "researcher" } }] };
    return { content: "ok" };
  });
  const r = await runCli([...runArgs(d, "go"), "--thread", "unknown-type"]);
  assert.equal(r.code, 0, r.stderr);
  const [msg] = taskToolMessages(await cliState(d, "unknown-type"));
  assert.equal(msg!.content, "Task failed. Error: Unknown subagent type 'researcher'. Available: general-purpose, bash");
  assert.equal(msg!.additional_kwargs.subagent_status, "failed");
});

test("a bash subagent where host bash is off fails with DeerFlow's 'Bash subagent is disabled' error", async () => {
  const d = sandboxDirs();
  server.setScript((req) => {
    if (toolResults(req) === 0) return { toolCalls: [{ name: "task", id: "call_b", args: { description: "d", prompt: "p", subagent_type: "bash" } }] };
    return { content: "ok" };
  });
  const r = await runCli([...runArgs(d, "go"), "--thread", "bash-off", "--sandbox", "local"]);
  assert.equal(r.code, 0, r.stderr);
  const [msg] = taskToolMessages(await cliState(d, "bash-off"));
  assert.match(msg!.content, /^Task failed\. Error: Bash subagent is disabled for LocalSandboxProvider/);
});

test("inside a subagent, a call the policy would ask about is refused, not paused; the subagent reports it", async () => {
  const d = sandboxDirs();
  let refusal = "";
  server.setScript((req) => {
    if (system(req).includes("runs shell commands")) {
      const tool = (req.body?.messages ?? []).find((m) => m.role === "tool");
      if (!tool) return { toolCalls: [{ name: "bash", id: "call_sh", args: { description: "list", command: "echo hi" } }] };
      refusal = textOf(tool);
      return { content: "I could not run it." };
    }
    if (toolResults(req) === 0) return { toolCalls: [{ name: "task", id: "call_bash", args: { description: "d", prompt: "run echo", subagent_type: "bash" } }] };
    return { content: "ok" };
  });
  const r = await runCli([...runArgs(d, "go"), "--thread", "sub-ask", "--sandbox", "local", "--allow-host-commands"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  assert.equal(r.lines.at(-1)!.data.stop_reason, undefined, "the run did not pause on approval");
  assert.match(refusal, /^Error: bash was not run: it needs the user's approval \(.*\), and a subagent cannot ask for it\./);
  const [msg] = taskToolMessages(await cliState(d, "sub-ask"));
  assert.equal(msg!.content, "Task Succeeded. Result: I could not run it.");
});

test("a subagent past its wall clock is timed out with DeerFlow's text and a task_timed_out event", async () => {
  const d = sandboxDirs();
  const config = join(tempDir("config"), "config.json");
  writeFileSync(config, JSON.stringify({ subagents: { timeout_seconds: 1 } }));
  server.setScript((req): ScriptedReply => {
    if (subagentTask(req)) return { hang: true };
    if (toolResults(req) === 0) return { toolCalls: [task("call_slow", "SUB-SLOW")] };
    return { content: "It timed out." };
  });
  const r = await runCli([...runArgs(d, "go"), "--thread", "sub-timeout"], { DEERFLOW_CONFIG: config });
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const [msg] = taskToolMessages(await cliState(d, "sub-timeout"));
  assert.equal(msg!.content, "Task timed out. Error: Execution timed out after 1 seconds");
  assert.equal(msg!.additional_kwargs.subagent_status, "timed_out");
  const last = r.lines.filter((l) => l.event === "custom" && l.data.task_id === "call_slow" && l.data.type !== "task_event").at(-1)!;
  assert.equal(last.data.type, "task_timed_out");
  assert.equal(last.data.error, "Execution timed out after 1 seconds");
});

test("a subagent over its token budget stops with DeerFlow's hard stop and reports token_capped", async () => {
  const d = sandboxDirs();
  const config = join(tempDir("config"), "config.json");
  writeFileSync(config, JSON.stringify({ subagents: { token_budget: 100 } }));
  server.setScript((req) => {
    if (subagentTask(req)) {
      return { content: "Found a lot.", toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }], usage: { prompt_tokens: 90, completion_tokens: 30, total_tokens: 120 } };
    }
    if (toolResults(req) === 0) return { toolCalls: [task("call_tok", "SUB-TOK")] };
    return { content: "ok" };
  });
  const r = await runCli([...runArgs(d, "go"), "--thread", "sub-tokens"], { DEERFLOW_CONFIG: config });
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const [msg] = taskToolMessages(await cliState(d, "sub-tokens"));
  assert.equal(
    msg!.content,
    "Task Succeeded (capped: token budget). Result: Found a lot.\n\n[TOKEN BUDGET EXCEEDED] The total token usage (120) has exceeded the safety limit (100). Producing final answer with results collected so far.",
  );
  assert.equal(msg!.additional_kwargs.subagent_stop_reason, "token_capped");
});

test("SubagentLimit: a 4th concurrent task call is dropped, and a 7th in the run is capped with subagent_limit_capped", async () => {
  const d = sandboxDirs();
  const script: ScriptFn = (req) => {
    const sub = subagentTask(req);
    if (sub) return { content: `done ${sub}` };
    const n = toolResults(req);
    if (n === 0) return { toolCalls: [task("c1", "SUB-1"), task("c2", "SUB-2"), task("c3", "SUB-3"), task("c4", "SUB-4")] };
    if (n === 3) return { toolCalls: [task("c5", "SUB-5"), task("c6", "SUB-6"), task("c7", "SUB-7")] };
    if (n === 6) return { content: "One more.", toolCalls: [task("c8", "SUB-8")] };
    return { content: `unexpected: ${n} tool results` };
  };
  server.setScript(script);
  const first = server.requests.length;
  const r = await runCli([...runArgs(d, "fan out"), "--thread", "limits"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-3000));
  const end = r.lines.at(-1)!;
  assert.equal(end.data.status, "success");
  assert.equal(end.data.stop_reason, "subagent_limit_capped");

  const state = await cliState(d, "limits");
  assert.deepEqual(taskToolMessages(state).map((m) => m.tool_call_id), ["c1", "c2", "c3", "c5", "c6", "c7"]);
  const ai = (state.messages as Array<Record<string, any>>).filter((m) => m.type === "ai");
  assert.deepEqual(ai[0]!.tool_calls.map((c: { id: string }) => c.id), ["c1", "c2", "c3"], "the 4th call is truncated from the response");
  const last = ai.at(-1)!;
  assert.equal(last.tool_calls, undefined);
  assert.equal(
    last.content,
    "One more.\n\n[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has been reached. Continue using the subagent results already collected, execute remaining simple work directly, or summarize the remaining work instead of launching more subagents.",
  );
  const started = r.lines.filter((l) => l.event === "custom" && l.data.type === "task_started").map((l) => l.data.task_id);
  assert.deepEqual(started.sort(), ["c1", "c2", "c3", "c5", "c6", "c7"]);
  // The model saw exactly the kept calls answered: the history it was sent stays valid.
  // The lead's model calls (not the subagents', nor the memory updater's after the run).
  const lead = server.requests.slice(first).filter((q) => system(q).includes("<subagent_system>"));
  assert.ok(lead.every((q) => q.status === 200), lead.map((q) => q.error).join(" | "));
  assert.equal(lead.length, 3);
});

test("a subagent that reaches max_turns reports turn_capped", async () => {
  const d = sandboxDirs();
  const configDir = tempDir("config");
  const config = join(configDir, "config.json");
  writeFileSync(config, JSON.stringify({ subagents: { agents: { "general-purpose": { max_turns: 2 } } } }));
  let subCalls = 0;
  server.setScript((req) => {
    if (subagentTask(req)) {
      subCalls++;
      return { content: `partial findings ${subCalls}`, toolCalls: [{ name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } }] };
    }
    if (toolResults(req) === 0) return { toolCalls: [task("call_t", "SUB-T")] };
    return { content: "Got a partial report." };
  });
  const r = await runCli([...runArgs(d, "dig"), "--thread", "turn-cap"], { DEERFLOW_CONFIG: config });
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-3000));
  assert.equal(subCalls, 2, "the subagent's model is called max_turns times");
  const [msg] = taskToolMessages(await cliState(d, "turn-cap"));
  assert.equal(msg!.content, "Task Succeeded (capped: turn budget). Result: partial findings 2");
  assert.equal(msg!.additional_kwargs.subagent_status, "completed");
  assert.equal(msg!.additional_kwargs.subagent_stop_reason, "turn_capped");
});

test("cancel (SIGINT) mid-subagent ends the run interrupted and both subagents task_cancelled", async () => {
  const d = sandboxDirs();
  const first = server.requests.length;
  server.setScript((req): ScriptedReply => {
    if (subagentTask(req)) return { hang: true };
    return { toolCalls: [task("call_c1", "SUB-C1"), task("call_c2", "SUB-C2")] };
  });
  const p = spawnCli([...runArgs(d, "slow work"), "--thread", "cancel-sub"]);
  // Both subagents are asking the model (and hanging there).
  await server.waitForRequests(first + 3);
  p.child.kill("SIGINT");
  const r = await p.done;
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.lines.at(-1)!.data.status, "interrupted");
  const lines = await events(d, "cancel-sub");
  for (const id of ["call_c1", "call_c2"]) {
    const mine = lines.filter((l) => l.event === "custom" && l.data.task_id === id && l.data.type !== "task_event").map((l) => l.data.type);
    assert.equal(mine[0], "task_started", id);
    assert.equal(mine.at(-1), "task_cancelled", `${id}: ${mine.join(",")}`);
    assert.equal(mine.filter((t) => t === "task_cancelled").length, 1, `${id} cancelled once: ${mine.join(",")}`);
  }
  const subs = (await server.waitForRequests(first + 3, { settled: true })).slice(first).filter((q) => subagentTask(q));
  assert.ok(subs.every((q) => q.clientAborted), "the subagents' model requests were aborted");
});

test("kill -9 mid-subagent, then a new run on the thread: the history the provider gets is valid", async () => {
  const d = sandboxDirs();
  const first = server.requests.length;
  server.setScript((req): ScriptedReply => {
    if (subagentTask(req)) return { hang: true };
    return { toolCalls: [task("call_k1", "SUB-K1"), task("call_k2", "SUB-K2")] };
  });
  const p = spawnCli([...runArgs(d, "slow work"), "--thread", "kill-sub"]);
  await server.waitForRequests(first + 3);
  p.child.kill("SIGKILL");
  assert.equal((await p.done).signal, "SIGKILL");

  server.setScript((req) => (subagentTask(req) ? { content: "late" } : { content: "Recovered." }));
  const next = server.requests.length;
  const again = await runCli([...runArgs(d, "what happened?"), "--thread", "kill-sub"]);
  assert.equal(again.code, 0, again.stderr + again.stdout.slice(-2000));
  assert.equal(again.lines.at(-1)!.data.status, "success");
  const sent = server.requests.slice(next);
  assert.ok(sent.every((q) => q.status === 200), `the provider refused: ${sent.map((q) => q.error).join(" | ")}`);
  const msgs = sent[0]!.body!.messages!;
  const call = msgs.findIndex((m) => m.role === "assistant" && m.tool_calls?.some((c) => c.id === "call_k1"));
  assert.ok(call >= 0, "the killed run's task calls are in the history");
  assert.deepEqual(msgs.slice(call + 1, call + 3).map((m) => m.tool_call_id), ["call_k1", "call_k2"], "each answered");
  // Recovery ended the killed run: no subagent of it is left "running" in the journal.
  const lines = await events(d, "kill-sub");
  const killedRun = lines.find((l) => l.event === "custom" && l.data.task_id === "call_k1")!.run_id;
  for (const id of ["call_k1", "call_k2"]) {
    const mine = lines.filter((l) => l.run_id === killedRun && l.event === "custom" && l.data.task_id === id && l.data.type !== "task_event").map((l) => l.data.type);
    assert.deepEqual([mine[0], mine.at(-1)], ["task_started", "task_cancelled"], `${id}: ${mine.join(",")}`);
  }
  const endIdx = lines.findIndex((l) => l.run_id === killedRun && l.event === "end");
  assert.equal(lines[endIdx]!.data.status, "interrupted");
  assert.ok(lines.slice(0, endIdx).some((l) => l.data?.type === "task_cancelled" && l.data.task_id === "call_k2"), "closed before the run's end");
});

test("without --subagents there is no task tool", async () => {
  const d = sandboxDirs();
  server.setScript([{ content: "hi" }]);
  const first = server.requests.length;
  const r = await runCli([...scriptedRunArgs(server, d, "hello"), "--thread", "no-subagents"]);
  assert.equal(r.code, 0, r.stderr);
  const tools = server.requests[first]!.body!.tools ?? [];
  assert.ok(!tools.some((t) => t.function.name === "task"));
  assert.ok(!system(server.requests[first]!).includes("<subagent_system>"));
});

test("custom subagent types from subagents.custom_agents: own prompt, tools, model, max_turns and timeout; the unknown-type error lists them", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.md"), "custom notes\n");
  const config = join(tempDir("config"), "config.json");
  const model = (name: string) => ({ name, model: `${name}-id`, base_url: server.url });
  writeFileSync(config, JSON.stringify({
    models: [model("lead"), model("cheap")],
    subagents: {
      max_concurrent: 4,
      custom_agents: {
        researcher: { description: "Reads files and reports what they say.", system_prompt: "You are the RESEARCHER subagent. Read, never write.", tools: ["ls", "read_file"], model: "cheap", max_turns: 1 },
        slow: { system_prompt: "You are the SLOW subagent.", timeout_seconds: 1 },
        ghost: { system_prompt: "You are the GHOST subagent.", model: "no-such-model" },
      },
    },
  }));
  const call = (id: string, type: string) => ({ name: "task", id, args: { description: `try ${type}`, prompt: `Work as ${type}.`, subagent_type: type } });
  server.setScript((req): ScriptedReply => {
    const sys = system(req);
    if (sys.includes("RESEARCHER")) return { content: "notes.md says: custom notes.", toolCalls: [{ name: "read_file", args: { description: "read", path: "/mnt/user-data/workspace/notes.md" } }] };
    if (sys.includes("SLOW")) return { hang: true };
    if (toolResults(req) === 0) return { toolCalls: [call("call_r", "researcher"), call("call_s", "slow"), call("call_g", "ghost"), call("call_x", "nope")] };
    return { content: "Done." };
  });
  const first = server.requests.length;
  const r = await runCli(["run", ...base(d), "--model", "lead", "--prompt", "delegate", "--thread", "custom-types", "--subagents"], { DEERFLOW_CONFIG: config });
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const sent = server.requests.slice(first);

  // The lead learns the custom types from the task tool's description and its prompt section.
  const lead = sent.find((q) => system(q).includes("<subagent_system>"))!;
  const taskTool = lead.body!.tools!.find((t) => t.function.name === "task")!;
  assert.match(taskTool.function.description!, /- researcher: Reads files and reports what they say\./);
  assert.match(system(lead), /Types: `general-purpose`, `researcher`, `slow`, `ghost`/);

  // The researcher ran on its own model, with its prompt and exactly its tools.
  const researcher = sent.filter((q) => system(q).includes("RESEARCHER"));
  assert.equal(researcher.length, 1, "max_turns: 1 stops it after one model call");
  assert.equal(researcher[0]!.body!.model, "cheap-id");
  assert.deepEqual(researcher[0]!.body!.tools!.map((t) => t.function.name).sort(), ["ls", "read_file"]);
  assert.ok(!researcher[0]!.body!.messages!.some((m) => textOf(m).includes("delegate")), "a custom subagent never sees the lead's messages");
  assert.equal(sent.find((q) => system(q).includes("SLOW"))!.body!.model, "lead-id", "a type without a model runs on the lead's");

  const results = Object.fromEntries(taskToolMessages(await cliState(d, "custom-types")).map((m) => [m.tool_call_id, m]));
  assert.equal(results.call_r!.content, "Task Succeeded (capped: turn budget). Result: notes.md says: custom notes.");
  assert.equal(results.call_r!.additional_kwargs.subagent_stop_reason, "turn_capped");
  assert.equal(results.call_r!.additional_kwargs.subagent_model_name, "cheap");
  assert.equal(results.call_s!.content, "Task timed out. Error: Execution timed out after 1 seconds");
  assert.equal(results.call_g!.content, `Task failed. Error: Subagent type 'ghost' uses a model that is not available: Unknown model "no-such-model". Configured models: lead, cheap.`);
  assert.equal(results.call_x!.content, "Task failed. Error: Unknown subagent type 'nope'. Available: general-purpose, bash, researcher, slow, ghost");
});

test("a custom subagent type the config gets wrong is refused with the reason, before any run", async () => {
  const d = sandboxDirs();
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ sneaky: { system_prompt: "x", tools: ["ls", "task"] } }, /subagents\.custom_agents\.sneaky\.tools: a subagent cannot have task, ask_clarification, present_files/],
    [{ "Bad Name": { system_prompt: "x" } }, /subagents\.custom_agents.*a custom subagent's name is lowercase letters/],
    [{ empty: { system_prompt: "  " } }, /subagents\.custom_agents\.empty\.system_prompt: a custom subagent needs a system_prompt/],
  ];
  for (const [customAgents, error] of cases) {
    const config = join(tempDir("config"), "config.json");
    writeFileSync(config, JSON.stringify({ subagents: { custom_agents: customAgents } }));
    const asked = server.requests.length;
    const r = await runCli([...runArgs(d, "go")], { DEERFLOW_CONFIG: config });
    assert.notEqual(r.code, 0, `${JSON.stringify(customAgents)} was accepted`);
    assert.match(r.stderr + r.stdout, error);
    assert.equal(server.requests.length, asked, "no model was asked");
  }
});
