// Long runs through the CLI (issue 20): a run is bounded by model turns, never by LangGraph steps.
// A 120-tool-turn run succeeds with every call answered; `--max-turns` ends a run `turn_capped`
// with its last calls answered and a visible message, and the next run on the thread is accepted
// by the scripted server, which validates histories like OpenAI (an unanswered call is a 400).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { cliState, runCli, sandboxDirs, scriptedRunArgs, useModelServer } from "./helpers/cli.js";
import type { RecordedRequest, ScriptedReply } from "../fixtures/modelServer.js";

const server = useModelServer();
const WS = "/mnt/user-data/workspace";

const toolResults = (req: RecordedRequest) => (req.body?.messages ?? []).filter((m) => m.role === "tool").length;

/** Turn n's call: a different tool and a different path every turn. */
function callFor(n: number) {
  switch (n % 4) {
    case 0:
      return { name: "read_file", args: { description: `read ${n}`, path: `${WS}/src/f${n}.txt` } };
    case 1:
      return { name: "ls", args: { description: `list ${n}`, path: `${WS}/dir${n}` } };
    case 2:
      return { name: "grep", args: { description: `grep ${n}`, pattern: `marker${n - 2}\\b`, path: `${WS}/src` } };
    default:
      return { name: "write_file", args: { description: `write ${n}`, path: `${WS}/out/w${n}.txt`, content: `written at turn ${n}\n` } };
  }
}

test("one run of 120 distinct sequential tool turns succeeds: 121 model requests, every call answered", async () => {
  const d = sandboxDirs();
  const TURNS = 120;
  mkdirSync(join(d.workspace, "src"), { recursive: true });
  for (let n = 0; n < TURNS; n++) {
    if (n % 4 === 0) writeFileSync(join(d.workspace, "src", `f${n}.txt`), `file ${n}\nmarker${n}\n`);
    if (n % 4 === 1) mkdirSync(join(d.workspace, `dir${n}`));
  }
  server.setScript((req): ScriptedReply => {
    const n = toolResults(req);
    return n < TURNS ? { toolCalls: [callFor(n)] } : { content: `Done after ${n} tool calls.` };
  });
  const first = server.requests.length;
  const r = await runCli([...scriptedRunArgs(server, d, "do the long task"), "--thread", "long-120"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const end = r.lines.at(-1)!;
  assert.equal(end.event, "end");
  assert.equal(end.data.status, "success");
  assert.equal(end.data.stop_reason, undefined);
  assert.equal(server.requests.length - first, TURNS + 1);

  const state = await cliState(d, "long-120");
  const messages = state.messages as Array<Record<string, any>>;
  const calls = messages.filter((m) => m.type === "ai").flatMap((m) => (m.tool_calls ?? []) as Array<{ id: string; name: string }>);
  const answered = new Set(messages.filter((m) => m.type === "tool").map((m) => m.tool_call_id as string));
  assert.equal(calls.length, TURNS);
  assert.deepEqual(calls.filter((c) => !answered.has(c.id)), [], "every call has its result");
  assert.equal(messages.at(-1)!.content, `Done after ${TURNS} tool calls.`);
  // The calls really ran: the writes landed, the reads returned the files.
  assert.equal(readFileSync(join(d.workspace, "out", "w119.txt"), "utf8"), "written at turn 119\n");
  const read116 = messages.find((m) => m.type === "tool" && m.name === "read_file" && String(m.content).includes("file 116"));
  assert.ok(read116, "read_file of f116.txt returned its content");
});

test("--max-turns 5 on a 12-turn script ends success / turn_capped after 5 requests; the next run continues and a strict provider accepts it", async () => {
  const d = sandboxDirs();
  mkdirSync(join(d.workspace, "src"), { recursive: true });
  for (let n = 0; n < 12; n++) writeFileSync(join(d.workspace, "src", `f${n}.txt`), `file ${n}\nmarker${n}\n`);
  const script = (req: RecordedRequest): ScriptedReply => {
    const n = toolResults(req);
    return n < 12 ? { toolCalls: [{ name: "read_file", args: { description: `read ${n}`, path: `${WS}/src/f${n}.txt` } }] } : { content: "All twelve read." };
  };
  server.setScript(script);
  const first = server.requests.length;
  const r = await runCli([...scriptedRunArgs(server, d, "read all twelve"), "--thread", "capped", "--max-turns", "5"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const end = r.lines.at(-1)!;
  assert.equal(end.data.status, "success");
  assert.equal(end.data.stop_reason, "turn_capped");
  assert.equal(server.requests.length - first, 5, "the budget is in model requests");
  assert.match(r.stderr, /stopped at its turn budget \(5 model turns/);
  assert.match(r.stderr, /--thread capped --prompt "Continue"/);
  // Never LangGraph's own words.
  assert.doesNotMatch(r.stdout + r.stderr, /Recursion limit|recursionLimit/);

  const state = await cliState(d, "capped");
  const messages = state.messages as Array<Record<string, any>>;
  const last = messages.at(-1)!;
  assert.equal(last.type, "ai");
  assert.equal(last.additional_kwargs.stop_reason, "turn_capped");
  assert.match(String(last.content), /budget of 5 model turns/);
  assert.deepEqual(last.tool_calls ?? [], []);
  const answered = new Set(messages.filter((m) => m.type === "tool").map((m) => m.tool_call_id as string));
  const calls = messages.filter((m) => m.type === "ai").flatMap((m) => (m.tool_calls ?? []) as Array<{ id: string }>);
  assert.equal(calls.length, 5);
  assert.ok(calls.every((c) => answered.has(c.id)), "the last turn's calls were answered before the cap");

  // Continue: the same script picks up at the 6th file; the provider validates the whole history.
  const before = server.requests.length;
  const next = await runCli([...scriptedRunArgs(server, d, "Continue"), "--thread", "capped"]);
  assert.equal(next.code, 0, next.stderr + next.stdout.slice(-2000));
  assert.equal(next.lines.at(-1)!.data.status, "success");
  assert.equal(next.lines.at(-1)!.data.stop_reason, undefined);
  assert.equal(server.requests.length - before, 8, "reads 5..11, then the answer");
  const sent = server.requests[before]!.body!.messages!;
  assert.ok(sent.some((m) => m.role === "assistant" && /budget of 5 model turns/.test(typeof m.content === "string" ? m.content : "")), "the model sees where it stopped");
  assert.ok(server.requests.slice(before).every((q) => q.status === 200), "no request was refused");
  assert.equal((await cliState(d, "capped")).messages.at(-1).content, "All twelve read.");
});

test("--max-turns is validated; max_turns in the config sets the budget, the flag overrides it", async () => {
  const d = sandboxDirs();
  for (const bad of ["0", "-3", "two", "1.5", ""]) {
    const r = await runCli([...scriptedRunArgs(server, d, "x"), `--max-turns=${bad}`]);
    assert.equal(r.code, 2, `--max-turns ${bad}: ${r.stderr}`);
    assert.match(r.stderr, /--max-turns takes a whole number of model turns, at least 1/);
  }
  const configFile = join(d.dataDir, "config.json");
  writeFileSync(configFile, JSON.stringify({ max_turns: 2 }));
  // Different paths every turn: the same call repeated would be loop detection's to stop.
  let n = 0;
  server.setScript(() => ({ toolCalls: [{ name: "ls", args: { description: "ls", path: `${WS}/missing-${n++}` } }] }));
  let first = server.requests.length;
  const fromConfig = await runCli([...scriptedRunArgs(server, d, "loop"), "--thread", "cfg"]);
  assert.equal(fromConfig.lines.at(-1)!.data.stop_reason, "turn_capped", fromConfig.stderr);
  assert.equal(server.requests.length - first, 2);
  first = server.requests.length;
  const fromFlag = await runCli([...scriptedRunArgs(server, d, "loop"), "--thread", "cfg", "--max-turns", "3"]);
  assert.equal(fromFlag.lines.at(-1)!.data.stop_reason, "turn_capped", fromFlag.stderr);
  assert.equal(server.requests.length - first, 3);
  assert.ok(existsSync(configFile));
});
