// Tokens and cost you can see, and the per-run token budget (issue 15), through the real CLI
// (dist/cli.js) against the scripted model server, which reports usage with OpenAI's cached and
// reasoning details. Prices come from the genai-prices table bundled with the pinned package
// (0.1.8): gpt-4o is $2.50 per million input tokens, $1.25 per million cached input tokens and
// $10 per million output tokens there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply, ScriptFn } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { cliState, runCli, sandboxDirs, scriptedRunArgs, type Dirs, useModelServer } from "./helpers/cli.js";
import { settings, startHarness } from "./helpers/server.js";
import type { JournalEvent } from "../../extension/protocol/rpc.js";

const server = useModelServer();

const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];
const ls = { name: "ls", args: { description: "look", path: "/mnt/user-data/workspace" } };

/**
 * The data dir's config. Long-term memory is off: its fact extraction after a run is a model call
 * of its own (memory.test.ts), not one of the run's, and would take a scripted reply.
 */
function config(d: Dirs, values: Record<string, unknown> = {}): void {
  writeFileSync(join(d.dataDir, "config.json"), JSON.stringify({ memory: { enabled: false }, ...values }));
}

/** A data dir whose config names gpt-4o on the scripted endpoint, priced as OpenAI's (pricing_provider). */
const pricedConfig = (d: Dirs) => config(d, { models: [{ name: "gpt4o", model: "gpt-4o", base_url: server.url, pricing_provider: "openai" }] });

/** A fresh workspace and data dir, memory off. */
function dirs(): Dirs {
  const d = sandboxDirs();
  config(d);
  return d;
}

async function run(d: Dirs, script: ScriptedReply[] | ScriptFn, args: string[]) {
  server.setScript(script);
  const first = server.requests.length;
  const r = await runCli(args);
  const end = r.lines.at(-1)!;
  assert.equal(end.event, "end", r.stderr + r.stdout.slice(-2000));
  return { ...r, end, requests: server.requests.slice(first), threadId: end.data.thread_id as string };
}

const pricedRun = (d: Dirs, script: ScriptedReply[], prompt: string, extra: string[] = []) =>
  run(d, script, ["run", ...base(d), "--model", "gpt4o", "--prompt", prompt, ...extra]);

/** gpt-4o's price in the bundled table, in dollars. */
const gpt4oCost = (input: number, cached: number, output: number) => ((input - cached) * 2.5 + cached * 1.25 + output * 10) / 1e6;

function assertCost(actual: { amount: number; currency: string } | null | undefined, expected: number): void {
  assert.ok(actual, "a known model has a cost");
  assert.equal(actual.currency, "USD");
  assert.ok(Math.abs(actual.amount - expected) < 1e-9, `cost ${actual.amount}, expected ${expected}`);
}

test("end.data.usage sums every model call of the run, cached and reasoning tokens included, with gpt-4o's estimated cost", async () => {
  const d = sandboxDirs();
  pricedConfig(d);
  const r = await pricedRun(
    d,
    [
      { toolCalls: [ls], usage: { prompt_tokens: 1000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 30 } } },
      { toolCalls: [ls], usage: { prompt_tokens: 1200, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 0 } } },
      { content: "Two looks, nothing there.", usage: { prompt_tokens: 1300, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 5 } } },
    ],
    "look twice",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.requests.length, 3);
  const { cost, by_model: byModel, ...tokens } = r.end.data.usage;
  assert.deepEqual(tokens, { input_tokens: 3500, output_tokens: 150, total_tokens: 3650, cached_tokens: 1400, reasoning_tokens: 35 });
  assertCost(cost, gpt4oCost(3500, 1400, 150));
  // One model spent it all: the split by model is that one entry, priced the same.
  assert.deepEqual(Object.keys(byModel), ["gpt4o"]);
  assert.deepEqual({ ...byModel.gpt4o, cost: undefined }, { ...tokens, cost: undefined });
  assert.deepEqual(byModel.gpt4o.cost, cost);
  // The run record keeps it: `deerflow runs` shows the same usage.
  const runs = await runCli(["runs", ...base(d), "--thread", r.threadId]);
  assert.equal(runs.code, 0, runs.stderr);
  assert.deepEqual(runs.lines.map((l) => l.usage), [r.end.data.usage]);
});

test("a thread's usage sums its runs (deerflow state), and the last run is named", async () => {
  const d = sandboxDirs();
  pricedConfig(d);
  const first = await pricedRun(d, [{ content: "One.", usage: { prompt_tokens: 500, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 100 } } }], "first");
  assert.equal(first.code, 0, first.stderr);
  const second = await pricedRun(
    d,
    [{ content: "Two.", usage: { prompt_tokens: 700, completion_tokens: 30, completion_tokens_details: { reasoning_tokens: 12 } } }],
    "second",
    ["--thread", first.threadId],
  );
  assert.equal(second.code, 0, second.stderr);
  const state = await cliState(d, first.threadId);
  assert.equal(state.usage.runs, 2);
  const { cost, ...tokens } = state.usage.total;
  assert.deepEqual(tokens, { input_tokens: 1200, output_tokens: 50, total_tokens: 1250, cached_tokens: 100, reasoning_tokens: 12 });
  assertCost(cost, gpt4oCost(500, 100, 20) + gpt4oCost(700, 0, 30));
  assert.equal(state.usage.last_run.run_id, second.end.data.run_id);
  // The thread's view keeps each run's totals; the split by model is the run's own (its end, `deerflow runs`).
  const { by_model: _split, ...lastRun } = second.end.data.usage;
  assert.deepEqual(state.usage.last_run.usage, lastRun);
  // `state` still lists the thread's messages beside it.
  assert.equal(state.messages.filter((m: { type: string }) => m.type === "ai").length, 2);
});

test("a provider that cannot be known prices nothing: cost null (not a guess from the model name), and the thread's total cost is unknown", async () => {
  const d = dirs();
  // An ad-hoc endpoint on 127.0.0.1 serving a model called gpt-4o: not OpenAI's price list.
  const r = await run(d, [{ content: "Hi.", usage: { prompt_tokens: 50, completion_tokens: 5 } }], ["run", ...base(d), "--base-url", server.url, "--model", "gpt-4o", "--prompt", "hi"]);
  assert.equal(r.code, 0, r.stderr);
  const unpriced = { input_tokens: 50, output_tokens: 5, total_tokens: 55, cost: null };
  assert.deepEqual(r.end.data.usage, { ...unpriced, by_model: { "gpt-4o": unpriced } });
  // A known provider with a model its list does not have: unknown too.
  const d2 = sandboxDirs();
  config(d2, { models: [{ name: "mine", model: "my-own-model", base_url: server.url, pricing_provider: "openai" }] });
  const r2 = await run(d2, [{ content: "Hi.", usage: { prompt_tokens: 50, completion_tokens: 5 } }], ["run", ...base(d2), "--prompt", "hi"]);
  assert.equal(r2.code, 0, r2.stderr);
  assert.equal(r2.end.data.usage.cost, null);
  const state = await cliState(d2, r2.threadId);
  assert.equal(state.usage.total.cost, null);
  assert.equal(state.usage.total.total_tokens, 55);
});

test("--max-tokens caps the run with token_capped and DeerFlow's wording; the thread's next run is accepted", async () => {
  const d = dirs();
  // 150 tokens: under the budget, the tool runs; 150 + 100 reaches 200: the second call is stripped.
  const r = await run(
    d,
    [
      { toolCalls: [ls], usage: { prompt_tokens: 120, completion_tokens: 30 } },
      { content: "Looking again.", toolCalls: [ls], usage: { prompt_tokens: 80, completion_tokens: 20 } },
    ],
    [...scriptedRunArgs(server, d, "look until stopped"), "--max-tokens", "200"],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end.data.status, "success");
  assert.equal(r.end.data.stop_reason, "token_capped");
  assert.equal(r.requests.length, 2, "no model call after the cap");
  const state = await cliState(d, r.threadId);
  const last = state.messages.at(-1);
  assert.equal(last.type, "ai");
  assert.deepEqual(last.tool_calls ?? [], []);
  assert.equal(
    last.content,
    "Looking again.\n\n[TOKEN BUDGET EXCEEDED] The total token usage (250) has exceeded the safety limit (200). Producing final answer with results collected so far.",
  );
  assert.equal(state.messages.filter((m: { type: string }) => m.type === "tool").length, 1, "only the first call ran");
  // The provider (which validates every history) accepts the thread's next request.
  const next = await run(d, [{ content: "Still here." }], [...scriptedRunArgs(server, d, "and now?"), "--thread", r.threadId]);
  assert.equal(next.code, 0, next.stderr + JSON.stringify(next.end));
  assert.equal(next.end.data.status, "success");
  assert.equal(next.end.data.stop_reason, undefined);
});

test("at 80 % of the budget the next request carries DeerFlow's warning, once and request-only", async () => {
  const d = dirs();
  const r = await run(
    d,
    [
      { toolCalls: [ls], usage: { prompt_tokens: 800, completion_tokens: 50 } },
      { toolCalls: [ls], usage: { prompt_tokens: 30, completion_tokens: 10 } },
      { content: "Wrapping up.", usage: { prompt_tokens: 40, completion_tokens: 10 } },
    ],
    [...scriptedRunArgs(server, d, "look, then look again"), "--max-tokens", "1000"],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end.data.stop_reason, undefined, "940 of 1,000: warned, not capped");
  const warning =
    "[TOKEN BUDGET WARNING] You have used 850 of your 1,000 total token budget (85%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.";
  const warnings = r.requests.map((q) => (q.body?.messages ?? []).filter((m) => m.role === "user" && m.name === "budget_warning").map(textOf));
  assert.deepEqual(warnings, [[], [warning], []], "the request after the 80 % reply carries it at its end, no other");
  assert.equal(r.requests[1]!.body!.messages!.at(-1)!.name, "budget_warning");
  const state = await cliState(d, r.threadId);
  assert.ok(!JSON.stringify(state.messages).includes("TOKEN BUDGET WARNING"), "never stored in the thread");
});

test("the budget counts this run only, not the thread's earlier runs; the config key sets it too", async () => {
  const d = sandboxDirs();
  config(d, { token_budget: { max_tokens_per_run: 500 } });
  const first = await run(d, [{ content: "A long answer.", usage: { prompt_tokens: 300, completion_tokens: 100 } }], scriptedRunArgs(server, d, "first"));
  assert.equal(first.end.data.stop_reason, undefined, JSON.stringify(first.end));
  // 400 + 300 would cross 500: counted per run, this run's 300 does not.
  const second = await run(d, [{ content: "Short.", usage: { prompt_tokens: 250, completion_tokens: 50 } }], [...scriptedRunArgs(server, d, "second"), "--thread", first.threadId]);
  assert.equal(second.end.data.status, "success");
  assert.equal(second.end.data.stop_reason, undefined, JSON.stringify(second.end));
  // The config's budget applies: one answer of 600 tokens is capped (its text kept, the note appended).
  const third = await run(d, [{ content: "Very long.", usage: { prompt_tokens: 550, completion_tokens: 50 } }], [...scriptedRunArgs(server, d, "third"), "--thread", first.threadId]);
  assert.equal(third.end.data.stop_reason, "token_capped");
  const state = await cliState(d, first.threadId);
  assert.match(state.messages.at(-1).content, /^Very long\.\n\n\[TOKEN BUDGET EXCEEDED\] The total token usage \(600\) has exceeded the safety limit \(500\)\./);
  // --max-tokens 0 switches the config's budget off for one run.
  const fourth = await run(d, [{ content: "Long again.", usage: { prompt_tokens: 550, completion_tokens: 50 } }], [...scriptedRunArgs(server, d, "fourth"), "--thread", first.threadId, "--max-tokens", "0"]);
  assert.equal(fourth.end.data.stop_reason, undefined);
});

test("subagents' tokens count toward the lead run's budget", async () => {
  const d = dirs();
  const isSubagent = (req: RecordedRequest) => (req.body?.messages ?? []).some((m) => m.role === "system" && textOf(m).includes("You are a general-purpose subagent"));
  const toolResults = (req: RecordedRequest) => (req.body?.messages ?? []).filter((m) => m.role === "tool").length;
  const script: ScriptFn = (req) => {
    if (isSubagent(req)) return { content: "sub findings", usage: { prompt_tokens: 120, completion_tokens: 30 } };
    if (toolResults(req) === 0) {
      return { toolCalls: [{ name: "task", args: { description: "dig", prompt: "Please dig.", subagent_type: "general-purpose" } }], usage: { prompt_tokens: 80, completion_tokens: 20 } };
    }
    return { content: "Digging more.", toolCalls: [ls], usage: { prompt_tokens: 40, completion_tokens: 10 } };
  };
  // Lead 100 + subagent 150 + lead 50 = 300 reaches 280; the lead alone (150) would not.
  const r = await run(d, script, [...scriptedRunArgs(server, d, "delegate"), "--subagents", "--max-tokens", "280"]);
  assert.equal(r.end.data.status, "success", JSON.stringify(r.end));
  assert.equal(r.end.data.stop_reason, "token_capped");
  assert.equal(r.end.data.usage.total_tokens, 300, JSON.stringify(r.end.data.usage) + r.requests.length);
  const state = await cliState(d, r.threadId);
  assert.match(state.messages.at(-1).content, /The total token usage \(300\) has exceeded the safety limit \(280\)/);
});

test("--max-tokens takes a whole number of tokens; anything else is a usage error that runs nothing", async () => {
  const d = dirs();
  const before = server.requests.length;
  for (const bad of ["abc", "-5", "1.5", ""]) {
    const r = await runCli([...scriptedRunArgs(server, d, "hi"), `--max-tokens=${bad}`]);
    assert.equal(r.code, 2, `--max-tokens ${bad}: ${r.stderr}`);
    assert.match(r.stderr, /--max-tokens takes a whole number of tokens/);
  }
  assert.equal(server.requests.length, before);
});

test("over RPC (the panel's harness): end carries usage and the thread's total, threads/state has it, and the settings' token budget caps a run", async () => {
  const { workspace, dataDir } = sandboxDirs();
  const h = startHarness();
  try {
    await h.request("harness/initialize", {
      dataDir,
      settings: settings(server.url, {
        models: [{ name: "gpt-4o", model: "gpt-4o", base_url: server.url, pricing_provider: "openai" }],
        default_model: "gpt-4o",
        token_budget: { max_tokens_per_run: 2000 },
      }),
    });
    // Replies by the prompt; a request without tools is not the lead's (memory's extraction, when on).
    server.setScript((req) => {
      if (!req.body?.tools?.length) return { content: "{}" };
      const last = [...(req.body.messages ?? [])].reverse().find((m) => m.role === "user");
      const prompt = last ? textOf(last) : "";
      if (prompt.includes("RPC-ONE")) return { content: "One.", usage: { prompt_tokens: 1000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 30 } } };
      return { content: "Two, and long.", toolCalls: [ls], usage: { prompt_tokens: 1900, completion_tokens: 100 } };
    });
    const { thread_id: threadId } = await h.request("threads/create", { workspaceFolder: workspace });
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId, afterSeq: 0 });
    const one = await h.request("runs/start", { workspaceFolder: workspace, threadId, prompt: "RPC-ONE" });
    const end1 = (await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === one.run_id)) as JournalEvent & { event: "end" };
    assert.equal(end1.data.status, "success");
    const usage1 = { input_tokens: 1000, output_tokens: 100, total_tokens: 1100, cached_tokens: 400, reasoning_tokens: 30, cost: { amount: gpt4oCost(1000, 400, 100), currency: "USD" } };
    assert.deepEqual(end1.data.usage, { ...usage1, by_model: { "gpt-4o": usage1 } });
    assert.equal(end1.data.thread_usage?.runs, 1);

    const two = await h.request("runs/start", { workspaceFolder: workspace, threadId, prompt: "RPC-TWO" });
    const end2 = (await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === two.run_id)) as JournalEvent & { event: "end" };
    assert.equal(end2.data.status, "success");
    assert.equal(end2.data.stop_reason, "token_capped", "2,000 tokens reached by the settings' budget");
    const total = end2.data.thread_usage!.total;
    assert.deepEqual({ ...total, cost: undefined }, { input_tokens: 2900, output_tokens: 200, total_tokens: 3100, cached_tokens: 400, reasoning_tokens: 30, cost: undefined });
    assertCost(total.cost, gpt4oCost(1000, 400, 100) + gpt4oCost(1900, 0, 100));

    const state = await h.request("threads/state", { workspaceFolder: workspace, threadId });
    assert.deepEqual(state.usage, end2.data.thread_usage);
    assert.equal(state.usage?.last_run?.run_id, two.run_id);
    const answer = state.messages.at(-1)!;
    assert.equal(answer.type, "ai");
    assert.match(JSON.stringify(answer.content), /\[TOKEN BUDGET EXCEEDED\] The total token usage \(2,000\) has exceeded the safety limit \(2,000\)/);
  } finally {
    await h.close();
  }
});

test("the run's automatic summary calls count toward its token budget, as they count in its usage", async () => {
  const d = sandboxDirs();
  config(d, { summarization: { enabled: true, trigger: { type: "messages", value: 3 }, keep: { type: "messages", value: 1 } } });
  const isSummary = (req: RecordedRequest) => (req.body?.messages ?? []).length === 1 && textOf(req.body!.messages![0]).includes("Messages to summarize:");
  const first = await run(d, [{ content: "One.", usage: { prompt_tokens: 10, completion_tokens: 5 } }], scriptedRunArgs(server, d, "first"));
  // Run 2 starts with [h1, a1, h2]: the trigger is crossed, the summary call spends 950 tokens, the
  // answer 60. The messages alone (60) are far under 1,000; with the summary call the run is over.
  const answers: ScriptFn = (req) => (isSummary(req) ? { content: "SUMMARY", usage: { prompt_tokens: 900, completion_tokens: 50 } } : { content: "Two.", usage: { prompt_tokens: 40, completion_tokens: 20 } });
  const r = await run(d, answers, [...scriptedRunArgs(server, d, "second"), "--thread", first.threadId, "--max-tokens", "1000"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.requests.map((q) => (isSummary(q) ? "summary" : "lead")), ["summary", "lead"]);
  assert.equal(r.end.data.usage.total_tokens, 1010);
  assert.equal(r.end.data.status, "success");
  assert.equal(r.end.data.stop_reason, "token_capped");
  const state = await cliState(d, first.threadId);
  assert.match(state.messages.at(-1).content, /^Two\.\n\n\[TOKEN BUDGET EXCEEDED\] The total token usage \(1,010\) has exceeded the safety limit \(1,000\)/);
});
