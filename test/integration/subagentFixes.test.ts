// Issue 22's subagent fixes through the real CLI, each asserting what the provider was sent and
// the state it leaves: the capped message carries no `tool_calls` key and the thread's next run is
// accepted by a strict provider; a cancelled or timed-out run keeps its subagents' tokens; usage
// and cost per model; `model: inherit`; a subagent's tools follow its own model's vision flag.
// The scripted model server validates every history as OpenAI does (an empty `tool_calls` array, an
// unanswered call: 400). Waits are on events (stdout lines, requests), never timers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { cliState, runCli, sandboxDirs, scriptedRunArgs, spawnCli, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";

const server = useModelServer();

function system(req: RecordedRequest): string {
  return (req.body?.messages ?? []).filter((m) => m.role === "system").map(textOf).join("\n");
}
const isLead = (req: RecordedRequest) => system(req).includes("<subagent_system>");
const isSubagent = (req: RecordedRequest) => system(req).includes("subagent") && !isLead(req);
const toolResults = (req: RecordedRequest) => (req.body?.messages ?? []).filter((m) => m.role === "tool").length;
const toolNames = (req: RecordedRequest) => (req.body?.tools ?? []).map((t) => t.function.name).sort();

const ls = { name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } };
const task = (id: string, type = "general-purpose") => ({ name: "task", id, args: { description: `do ${id}`, prompt: `Please handle ${id}.`, subagent_type: type } });
const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];

function config(d: Dirs, value: Record<string, unknown>): void {
  writeFileSync(join(d.dataDir, "config.json"), JSON.stringify(value));
}

async function events(d: Dirs, threadId: string): Promise<Array<Record<string, any>>> {
  const r = await runCli(["events", ...base(d), "--thread", threadId]);
  assert.equal(r.code, 0, r.stderr);
  return r.lines;
}

test("after the per-run subagent cap the capped message has no tool_calls key, and the thread's next run is accepted by a strict provider", async () => {
  const d = sandboxDirs();
  config(d, { subagents: { max_total_per_run: 1 } });
  server.setScript((req): ScriptedReply => {
    if (isSubagent(req)) return { content: "sub done" };
    if (toolResults(req) === 0) return { toolCalls: [task("call_a")] };
    return { content: "One more.", toolCalls: [task("call_b")] };
  });
  const r = await runCli([...scriptedRunArgs(server, d, "fan out"), "--subagents", "--thread", "capped"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  assert.equal(r.lines.at(-1)!.data.stop_reason, "subagent_limit_capped");
  const state = await cliState(d, "capped");
  const capped = (state.messages as Array<Record<string, any>>).filter((m) => m.type === "ai").at(-1)!;
  assert.match(capped.content, /\[SUBAGENT LIMIT REACHED\]/);
  assert.ok(!("tool_calls" in (capped.additional_kwargs ?? {})), `additional_kwargs: ${JSON.stringify(capped.additional_kwargs)}`);

  server.setScript([{ content: "Continuing with what I have." }]);
  const first = server.requests.length;
  const next = await runCli([...scriptedRunArgs(server, d, "go on"), "--subagents", "--thread", "capped"]);
  assert.equal(next.code, 0, next.stderr + next.stdout.slice(-2000));
  assert.equal(next.lines.at(-1)!.data.status, "success");
  const sent = server.requests.slice(first);
  assert.ok(sent.every((q) => q.status === 200), `the provider refused: ${sent.map((q) => q.error).join(" | ")}`);
  const history = sent[0]!.body!.messages!;
  const onWire = history.filter((m) => m.role === "assistant" && textOf(m).includes("[SUBAGENT LIMIT REACHED]"));
  assert.equal(onWire.length, 1);
  assert.ok(!("tool_calls" in onWire[0]!), `sent: ${JSON.stringify(onWire[0])}`);
});

/** A lead that delegates one task whose subagent makes one call (330 tokens), then hangs on its second. */
function hangingSubagent(): ScriptedReply[] | ((req: RecordedRequest) => ScriptedReply) {
  return (req) => {
    if (isSubagent(req)) return toolResults(req) === 0 ? { toolCalls: [ls], usage: { prompt_tokens: 300, completion_tokens: 30 } } : { hang: true };
    return { toolCalls: [task("call_u")], usage: { prompt_tokens: 100, completion_tokens: 10 } };
  };
}

for (const how of ["cancelled", "timed out"] as const) {
  test(`a ${how} run keeps what its subagent spent: end.data.usage counts it, task_cancelled carries it`, async () => {
    const d = sandboxDirs();
    server.setScript(hangingSubagent());
    const first = server.requests.length;
    const threadId = how === "cancelled" ? "cancel-usage" : "timeout-usage";
    const p = spawnCli([...scriptedRunArgs(server, d, "slow work"), "--subagents", "--thread", threadId, ...(how === "timed out" ? ["--timeout", "3"] : [])]);
    // The lead's call, the subagent's first, and its second (hanging).
    await server.waitForRequests(first + 3);
    if (how === "cancelled") p.child.kill("SIGINT");
    const r = await p.done;
    assert.equal(r.code, 1, r.stderr);
    const end = r.lines.at(-1)!;
    assert.equal(end.data.status, how === "cancelled" ? "interrupted" : "timeout");
    const sub = { input_tokens: 300, output_tokens: 30, total_tokens: 330 };
    assert.deepEqual(end.data.usage.subagents, { call_u: sub });
    assert.equal(end.data.usage.total_tokens, 110 + 330, "the lead's call and the subagent's");
    assert.deepEqual(end.data.usage.by_model, { scripted: { input_tokens: 400, output_tokens: 40, total_tokens: 440, cost: null } });
    const closing = (await events(d, threadId)).filter((l) => l.event === "custom" && l.data.task_id === "call_u" && l.data.type === "task_cancelled");
    assert.equal(closing.length, 1);
    assert.deepEqual(closing[0]!.data.usage, sub);
  });
}

test("usage and cost per model: the lead's and a subagent's tokens are each priced at their own model's rate (end.data.usage.by_model)", async () => {
  const d = sandboxDirs();
  const priced = (name: string, input: number, output: number) => ({ name, model: `${name}-id`, base_url: server.url, pricing: { currency: "USD", input_per_million: input, output_per_million: output } });
  config(d, {
    models: [priced("lead", 1000, 2000), priced("cheap", 10, 20)],
    subagents: { custom_agents: { helper: { description: "Helps.", system_prompt: "You are the HELPER subagent.", model: "cheap" } } },
  });
  server.setScript((req): ScriptedReply => {
    if (system(req).includes("HELPER")) return { content: "helped", usage: { prompt_tokens: 1000, completion_tokens: 100 } };
    if (toolResults(req) === 0) return { toolCalls: [task("call_h", "helper")], usage: { prompt_tokens: 200, completion_tokens: 20 } };
    return { content: "Done.", usage: { prompt_tokens: 500, completion_tokens: 50 } };
  });
  const first = server.requests.length;
  const r = await runCli(["run", ...base(d), "--model", "lead", "--prompt", "delegate", "--subagents", "--thread", "by-model"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const sent = server.requests.slice(first);
  assert.deepEqual(sent.map((q) => q.body!.model), ["lead-id", "cheap-id", "lead-id"]);
  const usage = r.lines.at(-1)!.data.usage;
  assert.equal(usage.total_tokens, 220 + 1100 + 550);
  assert.deepEqual(usage.by_model, {
    lead: { input_tokens: 700, output_tokens: 70, total_tokens: 770, cost: { amount: (700 * 1000 + 70 * 2000) / 1e6, currency: "USD" } },
    cheap: { input_tokens: 1000, output_tokens: 100, total_tokens: 1100, cost: { amount: (1000 * 10 + 100 * 20) / 1e6, currency: "USD" } },
  });
  assert.deepEqual(usage.cost, { amount: 0.84 + 0.012, currency: "USD" }, "the sum of each model's own price, not all at the lead's");
  // The run record keeps the same split.
  const runs = await runCli(["runs", ...base(d), "--thread", "by-model"]);
  assert.deepEqual(runs.lines[0]!.usage.by_model, usage.by_model);
});

test("model: inherit runs a custom subagent on the lead's model; its tools follow that model's vision flag, and a text-only model gets no view_image", async () => {
  const d = sandboxDirs();
  config(d, {
    models: [
      { name: "seeing", model: "seeing-id", base_url: server.url, supports_vision: true },
      { name: "blind", model: "blind-id", base_url: server.url, supports_vision: false },
    ],
    subagents: {
      custom_agents: {
        heir: { description: "Inherits.", system_prompt: "You are the HEIR subagent.", model: "inherit" },
        reader: { description: "Reads.", system_prompt: "You are the READER subagent.", model: "blind" },
      },
    },
  });
  server.setScript((req): ScriptedReply => {
    if (system(req).includes("HEIR")) return { content: "heir done" };
    if (system(req).includes("READER")) return { content: "reader done" };
    if (toolResults(req) === 0) return { toolCalls: [task("call_heir", "heir"), task("call_reader", "reader")] };
    return { content: "Both done." };
  });
  const first = server.requests.length;
  const r = await runCli(["run", ...base(d), "--model", "seeing", "--prompt", "delegate", "--subagents", "--thread", "inherit"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const sent = server.requests.slice(first);
  const heir = sent.find((q) => system(q).includes("HEIR"))!;
  const reader = sent.find((q) => system(q).includes("READER"))!;
  assert.equal(heir.body!.model, "seeing-id", "inherit: the lead's model");
  assert.ok(toolNames(heir).includes("view_image"), `heir on a vision model: ${toolNames(heir).join(", ")}`);
  assert.equal(reader.body!.model, "blind-id");
  assert.ok(!toolNames(reader).includes("view_image"), `reader on a text-only model: ${toolNames(reader).join(", ")}`);
  const results = Object.fromEntries(
    ((await cliState(d, "inherit")).messages as Array<Record<string, any>>).filter((m) => m.type === "tool" && m.name === "task").map((m) => [m.tool_call_id, m]),
  );
  assert.equal(results.call_heir!.content, "Task Succeeded. Result: heir done");
  assert.equal(results.call_heir!.additional_kwargs.subagent_model_name, "seeing");
  assert.equal(results.call_reader!.additional_kwargs.subagent_model_name, "blind");

  // The other way round: a text-only lead, and a custom subagent on a vision model gets view_image.
  const d2 = sandboxDirs();
  config(d2, {
    models: [
      { name: "blind", model: "blind-id", base_url: server.url },
      { name: "seeing", model: "seeing-id", base_url: server.url, supports_vision: true },
    ],
    subagents: { custom_agents: { seer: { description: "Sees.", system_prompt: "You are the SEER subagent.", model: "seeing" } } },
  });
  server.setScript((req): ScriptedReply => {
    if (system(req).includes("SEER")) return { content: "seen" };
    return toolResults(req) === 0 ? { toolCalls: [task("call_seer", "seer")] } : { content: "Done." };
  });
  const next = server.requests.length;
  const r2 = await runCli(["run", ...base(d2), "--model", "blind", "--prompt", "look", "--subagents", "--thread", "seer"]);
  assert.equal(r2.code, 0, r2.stderr);
  const lead = server.requests.slice(next).find(isLead)!;
  assert.ok(!toolNames(lead).includes("view_image"), "the text-only lead has none");
  const seer = server.requests.slice(next).find((q) => system(q).includes("SEER"))!;
  assert.ok(toolNames(seer).includes("view_image"), `seer on a vision model: ${toolNames(seer).join(", ")}`);
});
