// Issue 23: MCP through the harness RPC (what the extension uses): one harness process for the
// file, the user's extensions_config.json names server-everything (stdio). A panel run calls its
// echo: the run pauses with an `mcp` card naming the server and tool, runs/decide runs it, and the
// result reaches the model; the server's session is kept for the thread's next run (no respawn).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startModelServer, type ModelServer, type ScriptedReply } from "../fixtures/modelServer.js";
import { sandboxDirs, type Dirs } from "./helpers/cli.js";
import { errorOf, settings, startHarness, type HarnessProcess } from "./helpers/server.js";

const EVERYTHING = resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
let model: ModelServer;
let h: HarnessProcess;
let d: Dirs;

before(async () => {
  model = await startModelServer();
  d = sandboxDirs();
  writeFileSync(join(d.dataDir, "extensions_config.json"), JSON.stringify({ mcpServers: { everything: { command: "node", args: [EVERYTHING, "stdio"] } } }));
  h = startHarness();
  await h.request("harness/initialize", { dataDir: d.dataDir, settings: settings(model.url) });
});

after(async () => {
  await h?.close();
  await model?.close();
});

async function runTo(start: () => Promise<{ run_id: string }>, threadId: string, script: ScriptedReply[]) {
  model.setScript(script);
  const first = model.requests.length;
  const { last_seq } = await h.request("threads/state", { workspaceFolder: d.workspace, threadId });
  const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: d.workspace, threadId, afterSeq: last_seq });
  const started = await start();
  const end = await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === started.run_id);
  const events = h.events(subscriptionId).filter((e) => e.run_id === started.run_id);
  await h.request("events/unsubscribe", { subscriptionId });
  return { end, events, requests: model.requests.slice(first) };
}

test("a panel run: the MCP call pauses with its card, runs/decide runs it, the result reaches the model; the session is reused", async () => {
  const { thread_id: threadId } = await h.request("threads/create", { workspaceFolder: d.workspace });
  const paused = await runTo(() => h.request("runs/start", { workspaceFolder: d.workspace, threadId, prompt: "Echo." }), threadId, [
    { toolCalls: [{ id: "call_echo", name: "everything_echo", args: { message: "over rpc" } }] },
  ]);
  const data = paused.end.data as { stop_reason?: string; pending_approvals?: Array<Record<string, any>> };
  assert.equal(data.stop_reason, "approval");
  const card = data.pending_approvals![0]!;
  assert.equal(card.class, "mcp");
  assert.deepEqual([card.mcp?.server, card.mcp?.tool], ["everything", "echo"]);
  assert.ok(paused.events.some((e) => e.event === "custom" && (e.data as Record<string, unknown>).type === "mcp_status" && (e.data as Record<string, unknown>).state === "ready"));

  const decided = await runTo(
    () => h.request("runs/decide", { workspaceFolder: d.workspace, threadId, decisions: [{ tool_call_id: "call_echo", decision: "approve" }] }),
    threadId,
    [{ content: "Echoed." }],
  );
  assert.equal((decided.end.data as { status?: string }).status, "success");
  const result = (decided.requests[0]?.body?.messages ?? []).find((m: Record<string, any>) => m.role === "tool" && m.tool_call_id === "call_echo");
  assert.equal(result?.content, "Echo: over rpc");
  // The harness keeps the folder's servers between runs: the second run finds it ready, never starts it again.
  const states = decided.events.filter((e) => e.event === "custom" && (e.data as Record<string, unknown>).type === "mcp_status").map((e) => (e.data as Record<string, unknown>).state);
  assert.deepEqual(states, ["ready"]);
});

test("mcp/list and mcp/approve: the panel's view of the folder's servers, and its Allow for a workspace server by fingerprint", async () => {
  const listed = await h.request("mcp/list", { workspaceFolder: d.workspace });
  const everything = listed.servers.find((s) => s.name === "everything");
  assert.equal(everything?.state, "ready", "started by the run before, kept by the harness");
  assert.ok(everything.tools.some((t) => t.name === "everything_echo"));

  mkdirSync(join(d.workspace, ".vscode"), { recursive: true });
  writeFileSync(join(d.workspace, ".vscode", "mcp.json"), JSON.stringify({ servers: { wsev: { command: "node", args: [EVERYTHING, "stdio"] } } }));
  const waiting = (await h.request("mcp/list", { workspaceFolder: d.workspace })).servers.find((s) => s.name === "wsev");
  assert.equal(waiting?.state, "needs_approval");
  const wrong = await errorOf(h.request("mcp/approve", { workspaceFolder: d.workspace, server: "wsev", fingerprint: "0".repeat(64) }));
  assert.equal(wrong.data?.code, "mcp_config_changed");
  assert.equal((await errorOf(h.request("mcp/approve", { workspaceFolder: d.workspace, server: "nope", fingerprint: waiting.fingerprint }))).data?.code, "mcp_server_not_found");
  const approved = await h.request("mcp/approve", { workspaceFolder: d.workspace, server: "wsev", fingerprint: waiting.fingerprint });
  assert.equal(approved.state, "stopped");
  const started = (await h.request("mcp/list", { workspaceFolder: d.workspace, start: true })).servers.find((s) => s.name === "wsev");
  assert.equal(started?.state, "ready", JSON.stringify(started));
  assert.ok(started.tools.some((t) => t.name === "wsev_echo"));
});
