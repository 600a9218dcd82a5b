// Issue 21 item 3 (a consent covers one call the user saw, once) and issue 22's malformed and
// denied tool calls, through the CLI against the scripted model server (which refuses any history
// a provider would: an unanswered call, a result without its call, an empty tool name). Every
// CLI invocation is its own process: what a decision relies on lives in the checkpoint.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AIMessage } from "@langchain/core/messages";
import { cliState, runCli, sandboxDirs, scriptedRun, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { writeChannels } from "../../extension/harness/threads/checkpointUpdate.js";
import { EMPTY_NAME_RESULT } from "../../extension/harness/middlewares/danglingToolCall.js";
import { DECISION_LIMITS } from "../../extension/protocol/approvalLimits.js";

const server = useModelServer();

const ws = (name: string) => `/mnt/user-data/workspace/${name}`;
const bash = (id: string, command: string) => ({ id, name: "bash", args: { description: `run ${id}`, command } });
const write = (id: string, path: string, content = "x\n") => ({ id, name: "write_file", args: { description: `write ${id}`, path, content } });
const HOST_SHELL = ["--allow-host-commands", "--approval", "shell=ask"];

async function approve(d: Dirs, threadId: string, script: Parameters<typeof server.setScript>[0], decision: string[]) {
  server.setScript(script);
  const first = server.requests.length;
  const r = await runCli(["approve", "--workspace", d.workspace, "--data-dir", d.dataDir, "--thread", threadId, ...decision]);
  return { ...r, requests: server.requests.slice(first), end: r.lines.at(-1) };
}

type Pending = Array<{ tool_call_id: string; name: string; args: Record<string, any>; class: string; reason: string; sandbox?: string; always_allow?: { label: string } }>;
const pendingOf = (end: Record<string, any> | undefined): Pending => (end?.data?.pending_approvals ?? []) as Pending;

/** The tool messages of a recorded request, by tool_call_id. */
function toolResults(request: { body?: { messages?: Array<Record<string, any>> } | null } | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of request?.body?.messages ?? []) if (m.role === "tool") out.set(m.tool_call_id as string, String(m.content));
  return out;
}

test("a later turn that reuses an approved id (host bash `echo PWNED`) asks again and never runs; nor does a later run's; the thread goes on", async () => {
  const d = sandboxDirs();
  const pwned = join(d.workspace, "pwned.txt");
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("call_a", `echo ok > ${ws("ok.txt")}`)] }], "Run it.", HOST_SHELL);
  assert.deepEqual(pendingOf(paused.end).map((p) => p.tool_call_id), ["call_a"]);

  // The decision run: call_a runs, then the model's next turn uses call_a again for another command.
  const reused = await approve(d, paused.threadId, [{ toolCalls: [bash("call_a", `echo PWNED > ${ws("pwned.txt")}`)] }], ["--approve", "call_a"]);
  assert.equal(reused.code, 0, reused.stderr + reused.stdout.slice(-800));
  assert.equal(readFileSync(join(d.workspace, "ok.txt"), "utf8").trim(), "ok", "the approved call ran");
  assert.equal(reused.end?.data.stop_reason, "approval", "the reused id asks");
  const again = pendingOf(reused.end);
  assert.equal(again.length, 1);
  assert.notEqual(again[0]!.tool_call_id, "call_a", "renamed: no decision can name both calls");
  assert.match(again[0]!.args.command, /echo PWNED/);
  assert.equal(existsSync(pwned), false, "nothing unapproved ran");
  assert.equal(reused.requests[0]?.status, 200);

  // `--approve call_a` again names nothing pending: a usage error, nothing runs.
  const stale = await approve(d, paused.threadId, [], ["--approve", "call_a"]);
  assert.equal(stale.code, 2);
  assert.match(stale.stderr, /No pending tool call call_a/);
  assert.equal(existsSync(pwned), false);

  const rejected = await approve(d, paused.threadId, [{ content: "Understood." }], ["--reject", again[0]!.tool_call_id, "--reason", "no"]);
  assert.equal(rejected.code, 0, rejected.stderr);
  assert.equal(rejected.end?.data.stop_reason, undefined);
  assert.equal(rejected.requests[0]?.status, 200, "the provider accepts the history with the renamed id");
  assert.equal(toolResults(rejected.requests[0]).get(again[0]!.tool_call_id), "Rejected by the user: no");

  // A later run reusing the approved id: asks again as well.
  const later = await scriptedRun(server, d, [{ toolCalls: [bash("call_a", `echo PWNED > ${ws("pwned.txt")}`)] }], "Again.", [...HOST_SHELL, "--thread", paused.threadId]);
  assert.equal(later.end?.data.stop_reason, "approval");
  assert.notEqual(pendingOf(later.end)[0]!.tool_call_id, "call_a");
  assert.equal(existsSync(pwned), false);
});

test("two calls sharing one id in one turn: two cards with their own ids; one --approve runs only its call; the thread is decided and goes on", async () => {
  const d = sandboxDirs();
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("dup", `echo 1 > ${ws("one.txt")}`), bash("dup", `echo 2 > ${ws("two.txt")}`)] }], "Both.", HOST_SHELL);
  const pending = pendingOf(paused.end);
  assert.equal(pending.length, 2);
  assert.equal(pending[0]!.tool_call_id, "dup", "the first use keeps its id");
  const second = pending[1]!.tool_call_id;
  assert.notEqual(second, "dup");
  assert.match(pending[1]!.args.command, /two\.txt/);
  // The journal's messages carry the renamed id too (the panel pairs results by it).
  const state = await cliState(d, paused.threadId);
  const ai = state.messages.at(-1);
  assert.deepEqual(ai.tool_calls.map((c: { id: string }) => c.id), ["dup", second]);

  const partial = await approve(d, paused.threadId, [], ["--approve", "dup"]);
  assert.equal(partial.code, 2, "one id decides one call");
  assert.match(partial.stderr, new RegExp(`undecided: ${second} \\(bash\\)`));
  assert.equal(existsSync(join(d.workspace, "one.txt")) || existsSync(join(d.workspace, "two.txt")), false);

  const done = await approve(d, paused.threadId, [{ content: "One of two." }], ["--approve", "dup", "--reject", second]);
  assert.equal(done.code, 0, done.stderr + done.stdout.slice(-800));
  assert.equal(done.end?.data.stop_reason, undefined);
  assert.equal(readFileSync(join(d.workspace, "one.txt"), "utf8").trim(), "1");
  assert.equal(existsSync(join(d.workspace, "two.txt")), false, "the rejected call did not run");
  assert.equal(done.requests[0]?.status, 200);
  assert.equal(toolResults(done.requests[0]).get(second), "Rejected by the user: no reason given");
  const next = await scriptedRun(server, d, [{ content: "Fine." }], "Anything else?", ["--thread", paused.threadId]);
  assert.equal(next.code, 0, next.stderr);
  assert.equal(next.requests[0]?.status, 200);
});

test("always allow write_file: later ordinary writes run without asking; a protected write still asks and nothing is written", async () => {
  const d = sandboxDirs();
  mkdirSync(join(d.workspace, ".git", "hooks"), { recursive: true });
  const hook = join(d.workspace, ".git", "hooks", "pre-commit");
  const policy = ["--approval", "write=ask"];
  const paused = await scriptedRun(server, d, [{ toolCalls: [write("call_w1", ws("a.txt"))] }], "Write a.", policy);
  const card = pendingOf(paused.end)[0]!;
  assert.equal(card.class, "write");
  assert.equal(card.always_allow?.label, "Always allow write_file (not protected paths) in this thread");
  const allowed = await approve(d, paused.threadId, [{ content: "Wrote a." }], ["--approve", "call_w1", "--always-allow", "write_file"]);
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.ok(existsSync(join(d.workspace, "a.txt")));

  const next = await scriptedRun(
    server,
    d,
    [{ toolCalls: [write("call_w2", ws("b.txt")), write("call_p", ws(".git/hooks/pre-commit"), "#!/bin/sh\necho PWNED\n")] }],
    "Write b and a hook.",
    [...policy, "--thread", paused.threadId],
  );
  assert.equal(next.end?.data.stop_reason, "approval");
  const pending = pendingOf(next.end);
  assert.deepEqual(pending.map((p) => [p.tool_call_id, p.class]), [["call_p", "protected"]], "the ordinary write is covered; the protected one asks");
  assert.equal(pending[0]!.always_allow, undefined, "no rule is offered for a protected write");
  assert.equal(existsSync(hook), false);
  assert.equal(existsSync(join(d.workspace, "b.txt")), false, "nothing of a paused turn runs before the decision");

  // --always-allow on the protected card: approved once, and stderr says so.
  const once = await approve(d, paused.threadId, [{ toolCalls: [write("call_p2", ws(".git/hooks/pre-push"), "#!/bin/sh\n")] }], ["--approve", "call_p", "--always-allow", "write_file"]);
  assert.equal(once.code, 0, once.stderr);
  assert.match(once.stderr, /--always-allow write_file: call_p is approved once; a protected write is asked every time/);
  assert.ok(existsSync(join(d.workspace, "b.txt")) && existsSync(hook));
  assert.equal(once.end?.data.stop_reason, "approval", "the next protected write asks again");
  assert.equal(existsSync(join(d.workspace, ".git", "hooks", "pre-push")), false);
  const state = await cliState(d, paused.threadId);
  assert.deepEqual(state.approval_always_allow, [{ tool: "write_file", class: "write", sandbox: "local" }]);
});

test("always allow bash covers the command prefix the card showed, on this machine only; other commands ask", async () => {
  const d = sandboxDirs();
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("call_1", `mkdir -p ${ws("d1")}`)] }], "One.", HOST_SHELL);
  const card = pendingOf(paused.end)[0]!;
  assert.equal(card.always_allow?.label, 'Always allow commands starting with "mkdir" on this machine in this thread');
  assert.equal(card.sandbox, "local");
  const done = await approve(d, paused.threadId, [{ content: "ok" }], ["--approve", "call_1", "--always-allow", "bash"]);
  assert.equal(done.code, 0, done.stderr);
  const covered = await scriptedRun(server, d, [{ toolCalls: [bash("call_2", `mkdir -p ${ws("d2")} && mkdir ${ws("d3")}`)] }, { content: "made" }], "Two.", [...HOST_SHELL, "--thread", paused.threadId]);
  assert.equal(covered.end?.data.stop_reason, undefined, "covered: no card");
  assert.ok(existsSync(join(d.workspace, "d2")) && existsSync(join(d.workspace, "d3")));
  for (const command of [`mkdir ${ws("d4")}; touch ${ws("pwned")}`, `echo PWNED > ${ws("pwned")}`, `mkdir $(touch ${ws("pwned")})`]) {
    const asks = await scriptedRun(server, d, [{ toolCalls: [bash("call_x", command)] }], "Three.", [...HOST_SHELL, "--thread", paused.threadId]);
    assert.equal(asks.end?.data.stop_reason, "approval", command);
    await approve(d, paused.threadId, [{ content: "skipped" }], ["--all", "reject"]);
  }
  assert.equal(existsSync(join(d.workspace, "pwned")), false);
});

test("a yes for a call in the dev container never runs it on the host: decided in another sandbox kind, it is asked again", async () => {
  const d = sandboxDirs();
  mkdirSync(join(d.workspace, ".devcontainer"));
  writeFileSync(join(d.workspace, ".devcontainer", "devcontainer.json"), JSON.stringify({ image: "local/none:never-pulled" }));
  // Approving the configuration reads files only; the container would be brought up at the first command.
  const ok = await runCli(["devcontainer", "approve", "--workspace", d.workspace, "--data-dir", d.dataDir]);
  assert.equal(ok.code, 0, ok.stderr);
  const marker = join(d.workspace, "ran-on-host.txt");
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("call_c", `echo host > ${ws("ran-on-host.txt")}`)] }], "Run it.", ["--sandbox", "devcontainer", "--approval", "shell=ask"]);
  assert.equal(paused.code, 0, paused.stderr);
  const card = pendingOf(paused.end)[0]!;
  assert.equal(card.sandbox, "devcontainer");
  assert.match(card.reason, /in the dev container/);

  const moved = await approve(d, paused.threadId, [], ["--approve", "call_c", "--sandbox", "local", "--allow-host-commands", "--approval", "shell=ask"]);
  assert.equal(moved.code, 0, moved.stderr + moved.stdout.slice(-800));
  assert.equal(moved.end?.data.stop_reason, "approval", "asked again, for the host");
  const again = pendingOf(moved.end)[0]!;
  assert.equal(again.sandbox, "local");
  assert.match(again.reason, /on this machine/);
  assert.equal(moved.requests.length, 0, "the turn was not continued");
  assert.equal(existsSync(marker), false, "nothing ran on the host");

  const now = await approve(d, paused.threadId, [{ content: "Ran on the host." }], ["--approve", again.tool_call_id, "--sandbox", "local", "--allow-host-commands", "--approval", "shell=ask"]);
  assert.equal(now.code, 0, now.stderr);
  assert.equal(readFileSync(marker, "utf8").trim(), "host", "a yes given for the host runs it there");
});

test("a thread from before issue 21: its tool-name 'always allow' is asked again, and a stuck batch sharing one id is asked again with its own ids, then runs", async () => {
  const d = sandboxDirs();
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("one", `echo 1 > ${ws("one.txt")}`), bash("two", `echo 2 > ${ws("two.txt")}`)] }], "Both.", HOST_SHELL);
  const threadId = paused.threadId;
  // Rewrite the pause as the old harness left it: both calls under one id, cards without fingerprints, rules as tool names.
  const store = openWorkspaceStore({ dataDir: d.dataDir, workspaceFolder: d.workspace });
  const legacy = [
    { tool_call_id: "dup", name: "bash", args: { command: `echo 1 > ${ws("one.txt")}` }, class: "shell", reason: "r" },
    { tool_call_id: "dup", name: "bash", args: { command: `echo 2 > ${ws("two.txt")}` }, class: "shell", reason: "r" },
  ];
  try {
    const tuple = (await store.checkpointer.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } }))!;
    const messages = tuple.checkpoint.channel_values.messages as AIMessage[];
    const last = messages.at(-1)!;
    const dupAi = new AIMessage({ id: last.id!, content: last.content, tool_calls: (last.tool_calls ?? []).map((c) => ({ ...c, id: "dup" })), response_metadata: last.response_metadata });
    await writeChannels(store.checkpointer, tuple, { messages: [...messages.slice(0, -1), dupAi], pending_approvals: legacy, approval_always_allow: ["bash"] });
    store.threads.setMetadata(threadId, "pending_approvals", legacy);
  } finally {
    store.close();
  }
  const asked = await approve(d, threadId, [], ["--all", "approve"]);
  assert.equal(asked.code, 0, asked.stderr + asked.stdout.slice(-800));
  assert.equal(asked.end?.data.stop_reason, "approval", "a decision that cannot say which call it meant is asked again");
  const fresh = pendingOf(asked.end);
  assert.equal(new Set(fresh.map((p) => p.tool_call_id)).size, 2, fresh.map((p) => p.tool_call_id).join(","));
  assert.equal(existsSync(join(d.workspace, "one.txt")) || existsSync(join(d.workspace, "two.txt")), false);
  const done = await approve(d, threadId, [{ content: "Both ran." }], ["--all", "approve"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.requests[0]?.status, 200);
  assert.ok(existsSync(join(d.workspace, "one.txt")) && existsSync(join(d.workspace, "two.txt")));
  // The tool-name rule "bash" covered every command; it is not kept, so bash asks.
  const next = await scriptedRun(server, d, [{ toolCalls: [bash("three", "echo 3")] }], "Three.", [...HOST_SHELL, "--thread", threadId]);
  assert.equal(next.end?.data.stop_reason, "approval");
  assert.deepEqual((await cliState(d, threadId)).approval_always_allow, [], "the legacy names are gone after the first decision");
});

test("a call with no name or to an unknown tool gets DeerFlow's error result and never an approval card (default policy: other=ask)", async () => {
  const d = sandboxDirs();
  const r = await scriptedRun(server, d, [{ toolCalls: [{ id: "call_empty", name: "", args: {} }, { id: "call_unknown", name: "rm_everything", args: { path: "/" } }] }, { content: "Sorry." }], "Go.");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end?.data.stop_reason, undefined, "no pause");
  assert.ok(!r.lines.some((l) => l.event === "custom" && l.data.type === "approval_requested"));
  assert.equal(r.requests[1]?.status, 200, "a history the provider accepts");
  const results = toolResults(r.requests[1]);
  assert.equal(results.get("call_empty"), EMPTY_NAME_RESULT);
  assert.match(results.get("call_unknown") ?? "", /^Error: rm_everything is not a valid tool, try one of \[[^\]]*\bread_file\b[^\]]*\]\.$/);

  // Beside a call that asks: only that call waits; the malformed ones are answered at the pause.
  const mixed = await scriptedRun(server, sandboxDirs(), [{ toolCalls: [{ id: "call_nope", name: "nope", args: {} }, bash("call_sh", "echo hi")] }], "Go.", HOST_SHELL);
  assert.deepEqual(pendingOf(mixed.end).map((p) => p.tool_call_id), ["call_sh"]);
});

test("denied tools are not offered to the model; a call to one anyway is refused by the policy", async () => {
  const d = sandboxDirs();
  const r = await scriptedRun(server, d, [{ toolCalls: [write("call_w", ws("a.txt"))] }, { content: "Could not." }], "Write.", ["--allow-host-commands", "--approval", "shell=deny,write=deny"]);
  assert.equal(r.code, 0, r.stderr);
  const offered = (r.requests[0]?.body?.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
  assert.ok(offered.includes("read_file") && offered.includes("ls"), offered.join(","));
  for (const denied of ["bash", "write_file", "str_replace"]) assert.ok(!offered.includes(denied), `${denied} is not offered: ${offered.join(",")}`);
  // Nor does the system prompt offer the shell it does not bind.
  const system = JSON.stringify(r.requests[0]?.body?.messages?.[0]?.content ?? "");
  assert.doesNotMatch(system, /bash runs in|bash is disabled/);
  assert.match(toolResults(r.requests[1]).get("call_w") ?? "", /was not run: the approval policy denies write calls/);
  assert.equal(existsSync(join(d.workspace, "a.txt")), false);
  const open = await scriptedRun(server, sandboxDirs(), [{ content: "hi" }], "Hi.", ["--allow-host-commands"]);
  const all = (open.requests[0]?.body?.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
  assert.ok(all.includes("bash") && all.includes("write_file"), all.join(","));
  assert.match(JSON.stringify(open.requests[0]?.body?.messages?.[0]?.content ?? ""), /bash runs in \/mnt\/user-data\/workspace/);
});

test("a turn never waits on more calls than one decision carries: the excess gets an error result, the rest is decided in one go", async () => {
  const d = sandboxDirs();
  const max = DECISION_LIMITS.maxPending;
  const calls = Array.from({ length: max + 2 }, (_, i) => bash(`c${i}`, `echo ${i}`));
  const paused = await scriptedRun(server, d, [{ toolCalls: calls }], "Many.", HOST_SHELL);
  const pending = pendingOf(paused.end);
  assert.equal(pending.length, max);
  const done = await approve(d, paused.threadId, [{ content: "None ran." }], ["--all", "reject"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.requests[0]?.status, 200, "every call has its result");
  const results = toolResults(done.requests[0]);
  assert.match(results.get(`c${max}`) ?? "", new RegExp(`more than ${max} calls of this turn need the user's approval`));
  assert.match(results.get(`c${max + 1}`) ?? "", /was not run/);
  assert.equal(results.get("c0"), "Rejected by the user: no reason given");
});

test("inside a subagent too: denied tools are not offered, and a call to an unknown tool gets DeerFlow's error result", async () => {
  const d = sandboxDirs();
  let subTools: string[] = [];
  let subResult = "";
  server.setScript((req) => {
    const names = (req.body?.tools ?? []).map((t) => t.function.name);
    const tool = (req.body?.messages ?? []).find((m) => m.role === "tool");
    if (!names.includes("task")) {
      subTools = names;
      if (!tool) return { toolCalls: [{ name: "no_such_tool", id: "call_sub", args: {} }] };
      subResult = typeof tool.content === "string" ? tool.content : JSON.stringify(tool.content);
      return { content: "That tool does not exist." };
    }
    if (!tool) return { toolCalls: [{ name: "task", id: "call_task", args: { description: "d", prompt: "try it", subagent_type: "general-purpose" } }] };
    return { content: "done" };
  });
  const r = await runCli(["run", "--workspace", d.workspace, "--data-dir", d.dataDir, "--base-url", server.url, "--model", "scripted", "--prompt", "go", "--subagents", "--approval", "write=deny"]);
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-1500));
  assert.equal(r.lines.at(-1)!.data.stop_reason, undefined);
  assert.ok(subTools.includes("read_file") && !subTools.includes("write_file") && !subTools.includes("str_replace"), subTools.join(","));
  assert.match(subResult, /^Error: no_such_tool is not a valid tool, try one of \[[^\]]*read_file[^\]]*\]\.$/);
  assert.doesNotMatch(subResult, /write_file/, "the list is what the subagent was offered");
});
