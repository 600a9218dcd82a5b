// Issue 13: tool calls approved by policy, through the CLI against the scripted model server
// (which validates every history the way the provider does). Each CLI invocation is a separate
// process, so a pause that survives between them lives in the database, not in memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliState, runCli, sandboxDirs, scriptedRun, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";

const server = useModelServer();

const bash = (id: string, command: string) => ({ id, name: "bash", args: { description: `run ${id}`, command } });
const HOST_SHELL = ["--allow-host-commands", "--approval", "shell=ask"];

async function approve(d: Dirs, threadId: string, script: Parameters<typeof server.setScript>[0], decision: string[]) {
  server.setScript(script);
  const first = server.requests.length;
  const r = await runCli(["approve", "--workspace", d.workspace, "--data-dir", d.dataDir, "--thread", threadId, ...decision]);
  return { ...r, requests: server.requests.slice(first), end: r.lines.at(-1) };
}

/** The tool messages of a recorded request, by tool_call_id. */
function toolResults(request: { body?: { messages?: Array<Record<string, any>> } | null } | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of request?.body?.messages ?? []) if (m.role === "tool") out.set(m.tool_call_id as string, String(m.content));
  return out;
}

test("shell=ask: a bash call pauses the run with nothing executed; approve runs it and the run goes on", async () => {
  const d = sandboxDirs();
  const marker = join(d.workspace, "ran.txt");
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("call_a", "echo ran > /mnt/user-data/workspace/ran.txt")] }], "Run it.", HOST_SHELL);
  assert.equal(paused.code, 0, paused.stderr);
  assert.equal(paused.end?.data.status, "success");
  assert.equal(paused.end?.data.stop_reason, "approval");
  const pending = paused.end?.data.pending_approvals as Array<Record<string, any>>;
  assert.deepEqual(
    pending.map((p) => [p.tool_call_id, p.name, p.class]),
    [["call_a", "bash", "shell"]],
  );
  assert.match(pending[0]!.reason, /runs a command on this machine: echo ran/);
  assert.deepEqual(pending[0]!.args, { description: "run call_a", command: "echo ran > /mnt/user-data/workspace/ran.txt" });
  assert.equal(existsSync(marker), false, "nothing ran before the decision");
  assert.equal(paused.requests.length, 1, "the model was asked once: the turn stopped at its tool calls");
  assert.ok(paused.lines.some((l) => l.event === "custom" && l.data.type === "approval_requested"), "the request is in the journal");
  const state = await cliState(d, paused.threadId);
  assert.equal(state.pending_approvals?.[0]?.tool_call_id, "call_a", "the pause lives in the checkpoint");

  const done = await approve(d, paused.threadId, [{ content: "It ran." }], ["--approve", "call_a"]);
  assert.equal(done.code, 0, done.stderr + done.stdout.slice(-800));
  assert.equal(done.end?.data.status, "success");
  assert.equal(done.end?.data.stop_reason, undefined);
  assert.equal(readFileSync(marker, "utf8").trim(), "ran");
  assert.equal(done.requests.length, 1);
  assert.ok(done.lines.some((l) => l.event === "custom" && l.data.type === "approval_decided" && l.data.decisions[0].decision === "approve"));
  const after = await cliState(d, paused.threadId);
  assert.ok(!after.pending_approvals?.length, "nothing pending any more");
  assert.equal(after.messages.at(-1).content, "It ran.");
});

test("reject: the model gets 'Rejected by the user: <reason>' and the run goes on; nothing ran", async () => {
  const d = sandboxDirs();
  const marker = join(d.workspace, "nope.txt");
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("call_r", "touch /mnt/user-data/workspace/nope.txt")] }], "Touch it.", HOST_SHELL);
  assert.equal(paused.end?.data.stop_reason, "approval");
  const done = await approve(d, paused.threadId, [{ content: "Understood, I will not." }], ["--reject", "call_r", "--reason", "not on my machine"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(toolResults(done.requests[0]).get("call_r"), "Rejected by the user: not on my machine");
  assert.equal(existsSync(marker), false);
  assert.equal(done.end?.data.status, "success");
});

test("a parallel batch with one approve and one reject leaves a history the provider accepts", async () => {
  const d = sandboxDirs();
  const paused = await scriptedRun(
    server,
    d,
    [{ toolCalls: [bash("call_yes", "echo yes > /mnt/user-data/workspace/yes.txt"), bash("call_no", "echo no > /mnt/user-data/workspace/no.txt")] }],
    "Both.",
    HOST_SHELL,
  );
  assert.deepEqual((paused.end?.data.pending_approvals as Array<{ tool_call_id: string }>).map((p) => p.tool_call_id), ["call_yes", "call_no"]);
  const done = await approve(d, paused.threadId, [{ content: "One of two." }, { content: "And after that." }], ["--approve", "call_yes", "--reject", "call_no"]);
  assert.equal(done.code, 0, done.stderr + done.stdout.slice(-800));
  // The scripted server refuses (400) any history with an unanswered call, as providers do.
  assert.equal(done.requests[0]?.status, 200);
  const results = toolResults(done.requests[0]);
  assert.equal(results.get("call_no"), "Rejected by the user: no reason given");
  assert.ok(results.has("call_yes"));
  assert.ok(existsSync(join(d.workspace, "yes.txt")));
  assert.equal(existsSync(join(d.workspace, "no.txt")), false);
  // And the next turn of the thread is still a valid history.
  const next = await scriptedRun(server, d, [{ content: "Fine." }], "Anything else?", ["--thread", paused.threadId]);
  assert.equal(next.code, 0, next.stderr);
  assert.equal(next.requests[0]?.status, 200);
});

test("every pending call must be decided in one command: otherwise exit 2 naming the undecided, and nothing runs", async () => {
  const d = sandboxDirs();
  const paused = await scriptedRun(
    server,
    d,
    [{ toolCalls: [bash("call_1", "echo 1 > /mnt/user-data/workspace/1.txt"), bash("call_2", "echo 2 > /mnt/user-data/workspace/2.txt")] }],
    "Two.",
    HOST_SHELL,
  );
  const partial = await approve(d, paused.threadId, [], ["--approve", "call_1"]);
  assert.equal(partial.code, 2);
  assert.match(partial.stderr, /undecided: call_2 \(bash\)/);
  assert.equal(partial.requests.length, 0);
  assert.equal(existsSync(join(d.workspace, "1.txt")), false);
  const unknown = await approve(d, paused.threadId, [], ["--approve", "call_1", "--approve", "call_2", "--reject", "call_zzz"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /No pending tool call call_zzz/);
  const all = await approve(d, paused.threadId, [{ content: "Both ran." }], ["--all", "approve"]);
  assert.equal(all.code, 0, all.stderr);
  assert.ok(existsSync(join(d.workspace, "1.txt")) && existsSync(join(d.workspace, "2.txt")));
  const none = await approve(d, paused.threadId, [], ["--all", "approve"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /has no tool calls waiting for approval/);
});

test("a new run on a waiting thread is refused naming the calls; --multitask interrupt rejects them first", async () => {
  const d = sandboxDirs();
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("call_w", "echo w > /mnt/user-data/workspace/w.txt")] }], "Wait.", HOST_SHELL);
  const refused = await scriptedRun(server, d, [{ content: "never" }], "Something else.", ["--thread", paused.threadId]);
  assert.equal(refused.code, 1);
  // One line: the calls, and the command that decides them (issue 30 item 4).
  assert.match(refused.stderr, new RegExp(`^deerflow run: Thread ${paused.threadId} waits for your decision on call_w \\(bash\\): decide with deerflow approve --thread ${paused.threadId}, or send with --multitask interrupt to reject them\\.\\n$`));
  assert.equal(refused.requests.length, 0);
  const moved = await scriptedRun(server, d, [{ content: "On to something else." }], "Something else.", ["--thread", paused.threadId, "--multitask", "interrupt"]);
  assert.equal(moved.code, 0, moved.stderr);
  const sent = moved.requests[0]?.body?.messages as Array<Record<string, any>>;
  const rejection = sent.findIndex((m) => m.role === "tool" && m.tool_call_id === "call_w");
  assert.ok(rejection > 0, "the pending call is answered");
  // The new message is the reason the model reads.
  assert.equal(String(sent[rejection]!.content), "Rejected by the user: Something else.");
  assert.ok(sent.slice(rejection).some((m) => m.role === "user" && String(m.content).includes("Something else.")), "the new message follows the rejection");
  assert.equal(existsSync(join(d.workspace, "w.txt")), false);
});

test("nothing in a paused turn runs before the decision, even calls that need none", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.md"), "hello\n");
  const paused = await scriptedRun(
    server,
    d,
    [
      {
        toolCalls: [
          { id: "call_write", name: "write_file", args: { description: "w", path: "/mnt/user-data/workspace/new.md", content: "new\n" } },
          bash("call_sh", "echo sh > /mnt/user-data/workspace/sh.txt"),
        ],
      },
    ],
    "Write and run.",
    HOST_SHELL,
  );
  assert.deepEqual((paused.end?.data.pending_approvals as Array<{ tool_call_id: string }>).map((p) => p.tool_call_id), ["call_sh"], "only the shell call asks");
  assert.equal(existsSync(join(d.workspace, "new.md")), false, "the write (auto) waits with the turn");
  const done = await approve(d, paused.threadId, [{ content: "Both done." }], ["--approve", "call_sh"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(readFileSync(join(d.workspace, "new.md"), "utf8"), "new\n");
  assert.ok(existsSync(join(d.workspace, "sh.txt")));
});

test("a protected write asks by default and, approved, is written; deny never runs and the model is told", async () => {
  const d = sandboxDirs();
  const protectedWrite = { id: "call_p", name: "write_file", args: { description: "tasks", path: "/mnt/user-data/workspace/.vscode/tasks.json", content: "{}\n" } };
  const paused = await scriptedRun(server, d, [{ toolCalls: [protectedWrite] }], "Add a task.");
  const pending = paused.end?.data.pending_approvals as Array<Record<string, any>>;
  assert.equal(pending[0]?.class, "protected");
  assert.match(pending[0]?.reason, /protected path \(\.vscode\/\*\*\)/);
  assert.equal(existsSync(join(d.workspace, ".vscode", "tasks.json")), false);
  const done = await approve(d, paused.threadId, [{ content: "Added." }], ["--approve", "call_p"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(toolResults(done.requests[0]).get("call_p"), "OK");
  assert.equal(readFileSync(join(d.workspace, ".vscode", "tasks.json"), "utf8"), "{}\n");

  const d2 = sandboxDirs();
  mkdirSync(join(d2.workspace, "src"));
  const denied = await scriptedRun(
    server,
    d2,
    [{ toolCalls: [{ id: "call_d", name: "write_file", args: { description: "w", path: "/mnt/user-data/workspace/src/a.ts", content: "x" } }] }, { content: "I could not write it." }],
    "Write.",
    ["--approval", "write=deny"],
  );
  assert.equal(denied.code, 0, denied.stderr);
  assert.equal(denied.end?.data.stop_reason, undefined);
  assert.match(toolResults(denied.requests[1]).get("call_d") ?? "", /was not run: the approval policy denies write calls/);
  assert.equal(existsSync(join(d2.workspace, "src", "a.ts")), false);
});

test("--always-allow: approved once, the card's command prefix stops asking in this thread (and only there)", async () => {
  const d = sandboxDirs();
  const paused = await scriptedRun(server, d, [{ toolCalls: [bash("call_1", "echo hello")] }], "One.", HOST_SHELL);
  assert.equal((paused.end?.data.pending_approvals as Array<Record<string, any>>)[0]!.always_allow.label, 'Always allow commands starting with "echo hello" on this machine in this thread');
  const done = await approve(d, paused.threadId, [{ content: "ok" }], ["--approve", "call_1", "--always-allow", "bash"]);
  assert.equal(done.code, 0, done.stderr);
  const again = await scriptedRun(server, d, [{ toolCalls: [bash("call_2", "echo hello world")] }, { content: "ran without asking" }], "Two.", [...HOST_SHELL, "--thread", paused.threadId]);
  assert.equal(again.end?.data.stop_reason, undefined);
  assert.match(toolResults(again.requests[1]).get("call_2") ?? "", /hello world/);
  const otherCommand = await scriptedRun(server, d, [{ toolCalls: [bash("call_4", "echo 2")] }], "Four.", [...HOST_SHELL, "--thread", paused.threadId]);
  assert.equal(otherCommand.end?.data.stop_reason, "approval", "another command still asks");
  const other = await scriptedRun(server, d, [{ toolCalls: [bash("call_3", "echo hello")] }], "Three.", HOST_SHELL);
  assert.equal(other.end?.data.stop_reason, "approval", "another thread still asks");
});

test("--approval is checked: a typo is a usage error, not a looser default", async () => {
  const d = sandboxDirs();
  const r = await scriptedRun(server, d, [], "x", ["--approval", "shell=yes"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /"shell=yes" is not CLASS=MODE/);
});

test("a thread row that still lists calls the checkpoint no longer waits on (a crash between the two writes) heals: the decision run ends error saying so, and the thread works again", async () => {
  const d = sandboxDirs();
  const first = await scriptedRun(server, d, [{ content: "Hello." }], "Hi.");
  assert.equal(first.code, 0, first.stderr);
  const store = openWorkspaceStore({ dataDir: d.dataDir, workspaceFolder: d.workspace });
  try {
    store.threads.setMetadata(first.threadId, "pending_approvals", [{ tool_call_id: "ghost", name: "bash", args: {}, class: "shell", reason: "r" }]);
  } finally {
    store.close();
  }
  const refused = await scriptedRun(server, d, [], "Next.", ["--thread", first.threadId]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /ghost \(bash\)/);
  // No paused run was recorded with it, so the decision names its model.
  const decided = await approve(d, first.threadId, [], ["--all", "reject", "--base-url", server.url, "--model", "scripted"]);
  assert.equal(decided.code, 1, decided.stderr);
  assert.equal(decided.end?.data.status, "error");
  assert.match(decided.end?.data.error, /no tool calls waiting for approval/);
  assert.equal(decided.requests.length, 0, "nothing was asked of the model");
  const next = await scriptedRun(server, d, [{ content: "Back to normal." }], "Next.", ["--thread", first.threadId]);
  assert.equal(next.code, 0, next.stderr);
  assert.equal((await cliState(d, first.threadId)).messages.at(-1).content, "Back to normal.");
});

test("approve keeps the policy the run started with: write=ask given to run still asks for the continued run's next write; approve's own --approval replaces it", async () => {
  const d = sandboxDirs();
  const write = (id: string, name: string) => ({ id, name: "write_file", args: { description: `write ${name}`, path: `/mnt/user-data/workspace/${name}`, content: `${name}\n` } });
  const paused = await scriptedRun(server, d, [{ toolCalls: [write("call_w1", "first.txt")] }], "Write two files.", ["--approval", "write=ask"]);
  assert.equal(paused.code, 0, paused.stderr);
  assert.equal(paused.end?.data.stop_reason, "approval");
  assert.deepEqual((paused.end?.data.pending_approvals as Array<{ tool_call_id: string }>).map((p) => p.tool_call_id), ["call_w1"]);

  // No --approval here: the configuration says write=auto, the paused run said ask, ask stays.
  const next = await approve(d, paused.threadId, [{ toolCalls: [write("call_w2", "second.txt")] }], ["--all", "approve"]);
  assert.equal(next.code, 0, next.stderr + next.stdout.slice(-800));
  assert.ok(existsSync(join(d.workspace, "first.txt")), "the approved write ran");
  assert.equal(next.end?.data.stop_reason, "approval", "the same run's next write asks again");
  assert.deepEqual((next.end?.data.pending_approvals as Array<{ tool_call_id: string }>).map((p) => p.tool_call_id), ["call_w2"]);
  assert.equal(existsSync(join(d.workspace, "second.txt")), false, "nothing written before the decision");

  // The policy stays with the thread's pause through every continuation, until a class is named.
  const loose = await approve(d, paused.threadId, [{ toolCalls: [write("call_w3", "third.txt")] }, { content: "Three files." }], ["--all", "approve", "--approval", "write=auto"]);
  assert.equal(loose.code, 0, loose.stderr + loose.stdout.slice(-800));
  assert.equal(loose.end?.data.stop_reason, undefined, "approve --approval write=auto is the operator's word for this class");
  assert.ok(existsSync(join(d.workspace, "second.txt")) && existsSync(join(d.workspace, "third.txt")));
});
