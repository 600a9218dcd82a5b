// Issue 30 item 3: what would be refused once approved is refused before anyone is asked
// (approvals/preflight.ts), through the CLI against the scripted model server. The refused call's
// result is its own error, the run goes on (the model reads it), and no card is shown for it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, scriptedRun, sandboxDirs, useModelServer } from "./helpers/cli.js";

const server = useModelServer();

const WRITE_ASK = ["--approval", "write=ask"];
const write = (id: string, path: string, content: string) => ({ id, name: "write_file", args: { description: `write ${id}`, path, content } });

/** The tool messages of a recorded request, by tool_call_id. */
function toolResults(request: { body?: { messages?: Array<Record<string, any>> } | null } | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of request?.body?.messages ?? []) if (m.role === "tool") out.set(m.tool_call_id as string, String(m.content));
  return out;
}

test("write=ask: a write to an existing file never read is refused at once with the read-first error, never shown for approval", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.md"), "old\n");
  const r = await scriptedRun(
    server,
    d,
    [{ toolCalls: [write("call_w", "/mnt/user-data/workspace/notes.md", "new\n")] }, { content: "I will read it first." }],
    "Rewrite notes.",
    WRITE_ASK,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end?.data.status, "success");
  assert.equal(r.end?.data.stop_reason, undefined, "no pause");
  assert.ok(!r.lines.some((l) => l.event === "custom" && l.data.type === "approval_requested"), "no approval was requested");
  assert.equal(r.requests.length, 2, "the run went on: the model read the refusal");
  assert.match(toolResults(r.requests[1]).get("call_w") ?? "", /write_file blocked — \/mnt\/user-data\/workspace\/notes\.md already exists and you have not read its current version/);
  assert.equal(readFileSync(join(d.workspace, "notes.md"), "utf8"), "old\n");
});

test("write=ask: read_file then write_file of the same file pauses; approve --all approve writes it", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.md"), "old\n");
  const paused = await scriptedRun(
    server,
    d,
    [
      { toolCalls: [{ id: "call_r", name: "read_file", args: { description: "read", path: "/mnt/user-data/workspace/notes.md" } }] },
      { toolCalls: [write("call_w", "/mnt/user-data/workspace/notes.md", "new\n")] },
    ],
    "Read then rewrite notes.",
    WRITE_ASK,
  );
  assert.equal(paused.code, 0, paused.stderr);
  assert.equal(paused.end?.data.stop_reason, "approval");
  assert.deepEqual((paused.end?.data.pending_approvals as Array<{ tool_call_id: string }>).map((p) => p.tool_call_id), ["call_w"]);
  assert.equal(readFileSync(join(d.workspace, "notes.md"), "utf8"), "old\n", "nothing written before the decision");

  server.setScript([{ content: "Rewritten." }]);
  const first = server.requests.length;
  const done = await runCli(["approve", "--workspace", d.workspace, "--data-dir", d.dataDir, "--thread", paused.threadId, "--all", "approve"]);
  assert.equal(done.code, 0, done.stderr + done.stdout.slice(-800));
  assert.equal(done.lines.at(-1)?.data.status, "success");
  assert.equal(toolResults(server.requests[first]).get("call_w"), "OK");
  assert.equal(readFileSync(join(d.workspace, "notes.md"), "utf8"), "new\n");
});

test("a turn with a refused write and an asking one: only the second is shown; the refusal is already answered when the run goes on", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.md"), "old\n");
  const paused = await scriptedRun(
    server,
    d,
    [{ toolCalls: [write("call_unread", "/mnt/user-data/workspace/notes.md", "x\n"), write("call_new", "/mnt/user-data/workspace/new.md", "fresh\n")] }],
    "Two writes.",
    WRITE_ASK,
  );
  assert.equal(paused.end?.data.stop_reason, "approval");
  assert.deepEqual((paused.end?.data.pending_approvals as Array<{ tool_call_id: string }>).map((p) => p.tool_call_id), ["call_new"], "only the write that could run asks");

  server.setScript([{ content: "One of two." }]);
  const first = server.requests.length;
  const done = await runCli(["approve", "--workspace", d.workspace, "--data-dir", d.dataDir, "--thread", paused.threadId, "--all", "approve"]);
  assert.equal(done.code, 0, done.stderr + done.stdout.slice(-800));
  assert.equal(server.requests[first]?.status, 200, "a history the provider accepts");
  const results = toolResults(server.requests[first]);
  assert.match(results.get("call_unread") ?? "", /have not read its current version/);
  assert.equal(results.get("call_new"), "OK");
  assert.equal(readFileSync(join(d.workspace, "new.md"), "utf8"), "fresh\n");
  assert.equal(readFileSync(join(d.workspace, "notes.md"), "utf8"), "old\n");
});

test("write=ask: a path the trust boundary refuses, and arguments the tool's schema refuses, are answered without asking", async () => {
  const d = sandboxDirs();
  const r = await scriptedRun(
    server,
    d,
    [
      {
        toolCalls: [
          write("call_out", "/mnt/user-data/workspace/../../../etc/x.txt", "x"),
          { id: "call_args", name: "write_file", args: { description: "no content", path: "/mnt/user-data/workspace/a.md" } },
        ],
      },
      { content: "Neither could be written." },
    ],
    "Write outside.",
    WRITE_ASK,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end?.data.stop_reason, undefined, "no pause");
  const results = toolResults(r.requests[1]);
  assert.match(results.get("call_out") ?? "", /^Error: Permission denied writing to file: /);
  assert.match(results.get("call_args") ?? "", /did not match expected schema/);
  assert.doesNotMatch(results.get("call_args") ?? "", /\n\s+at /, "no stack trace");
  assert.equal(existsSync(join(d.workspace, "a.md")), false);
});

test("shell=ask: a command the sandbox audit blocks is refused with its reason, not offered for approval", async () => {
  const d = sandboxDirs();
  const r = await scriptedRun(
    server,
    d,
    [{ toolCalls: [{ id: "call_rm", name: "bash", args: { description: "wipe", command: "rm -rf /" } }] }, { content: "Blocked." }],
    "Wipe.",
    ["--allow-host-commands", "--approval", "shell=ask"],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end?.data.stop_reason, undefined, "no pause");
  assert.match(toolResults(r.requests[1]).get("call_rm") ?? "", /^Command blocked: /);
});
