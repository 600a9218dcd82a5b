// Which key each model of a run gets, as the harness server wires it (server/runs.ts passes the
// session's keys as `heldKey`, server/compact.ts too): every model gets the key held for ITS own
// api_key_env, never the run's. Custom subagent types and a summary model_name are config-file
// settings (not yet in the deerflow.* settings), so these drive the launcher and the compaction
// in process, with the scripted model server recording each request's Authorization header.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openWorkspaceStore } from "../../extension/harness/store/db.js";
import { parseHarnessConfig } from "../../extension/harness/config/harnessConfig.js";
import { openRunSystem } from "../../extension/harness/runs/services.js";
import { launchRun, type LaunchServices } from "../../extension/harness/runs/launcher.js";
import { compactThread } from "../../extension/harness/runs/compaction.js";
import { LocalSandboxProvider } from "../../extension/harness/sandbox/local.js";
import { startModelServer, type ModelServer, type RecordedRequest, type ScriptedReply } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

/** What the host sent with harness/configure: keys by api_key_env name. */
const HELD: Record<string, string> = { LEAD_KEY: "sk-lead-0123456789abcdef", SIDE_KEY: "sk-side-0123456789abcdef" };
const heldKey = (source: string) => HELD[source];

function setup(extra: Record<string, unknown>) {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "deerflow-keys-ws-")));
  const store = openWorkspaceStore({ dataDir: mkdtempSync(join(tmpdir(), "deerflow-keys-data-")), workspaceFolder: workspace });
  after(() => store.close());
  const manager = openRunSystem(store);
  const config = parseHarnessConfig(
    {
      models: [
        { name: "lead", model: "lead-id", base_url: server.url, api_key_env: "LEAD_KEY" },
        { name: "side", model: "side-id", base_url: server.url, api_key_env: "SIDE_KEY" },
      ],
      default_model: "lead",
      ...extra,
    },
    "test",
  );
  const services: LaunchServices = {
    workspaceFolder: store.workspaceFolder,
    threads: store.threads,
    checkpointer: store.checkpointer,
    blobs: store.blobs,
    manager,
    config,
    sandbox: () => ({ provider: new LocalSandboxProvider({ workspaceFolder: workspace }), kind: "local", allowHostCommands: false }),
  };
  return { store, manager, config, services };
}

const auth = (reqs: RecordedRequest[], modelId: string) => [...new Set(reqs.filter((r) => r.body?.model === modelId).map((r) => r.headers.authorization))];

test("a custom subagent type on another model gets the key held for ITS api_key_env, the lead keeps its own", async () => {
  const s = setup({ subagents: { custom_agents: { scout: { system_prompt: "You are the SCOUT subagent.", tools: ["ls"], model: "side" } } } });
  server.setScript((req): ScriptedReply => {
    const sys = (req.body?.messages ?? []).filter((m) => m.role === "system").map(textOf).join("\n");
    if (sys.includes("SCOUT")) return { content: "Scouted." };
    if ((req.body?.messages ?? []).some((m) => m.role === "tool")) return { content: "Done." };
    return { toolCalls: [{ name: "task", id: "call_1", args: { description: "scout", prompt: "Look around.", subagent_type: "scout" } }] };
  });
  const first = server.requests.length;
  const launched = launchRun(s.services, { threadId: "t", createThread: true, prompt: "go", subagents: true, heldKey });
  const result = await launched.done!;
  assert.equal(result.status, "success", result.error);
  const reqs = server.requests.slice(first);
  assert.deepEqual(auth(reqs, "side-id"), [`Bearer ${HELD.SIDE_KEY}`], "the subagent's model got its own key");
  assert.deepEqual(auth(reqs, "lead-id"), [`Bearer ${HELD.LEAD_KEY}`]);
});

test("manual compaction: a configured summary model (summarization.model_name) gets the key held for ITS api_key_env", async () => {
  const s = setup({ summarization: { enabled: true, model_name: "side", trigger: [], keep: { type: "messages", value: 1 } } });
  for (const prompt of ["first question", "second question"]) {
    server.setScript([{ content: `Answer to ${prompt}.` }]);
    const r = await launchRun(s.services, { threadId: "t", createThread: true, prompt, heldKey }).done!;
    assert.equal(r.status, "success", r.error);
  }
  server.setScript([{ content: "SUMMARY of the thread." }]);
  const first = server.requests.length;
  const done = await compactThread(
    { workspaceFolder: s.store.workspaceFolder, threads: s.store.threads, manager: s.manager, checkpointer: s.store.checkpointer, config: s.config },
    { threadId: "t", model: "lead", heldKey },
  );
  assert.equal(done.compacted, true);
  assert.equal(done.model, "side", "the configured summary model answered");
  assert.deepEqual(auth(server.requests.slice(first), "side-id"), [`Bearer ${HELD.SIDE_KEY}`]);
});
