// The worker never leaves a run `running`: a failure outside the turn itself still ends the run
// (error, end journaled, lease released), with a real SQLite store.
import { defaultPolicy } from "../../../extension/harness/approvals/policy.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { openWorkspaceStore } from "../../../extension/harness/store/db.js";
import { openRunSystem } from "../../../extension/harness/runs/services.js";
import { startRun } from "../../../extension/harness/runs/gateway.js";
import { executeRun } from "../../../extension/harness/runs/worker.js";
import { LocalSandboxProvider } from "../../../extension/harness/sandbox/local.js";
import { parseHarnessConfig } from "../../../extension/harness/config/harnessConfig.js";

class BrokenSaver extends MemorySaver {
  override getTuple(): never {
    throw new Error("disk on fire");
  }
}

test("a failure outside the turn ends the run error, journals its end and frees the thread", async () => {
  const workspace = mkdtempSync(join(tmpdir(), "deerflow-worker-ws-"));
  const store = openWorkspaceStore({ dataDir: mkdtempSync(join(tmpdir(), "deerflow-worker-data-")), workspaceFolder: workspace });
  try {
    const manager = openRunSystem(store);
    store.threads.create({ threadId: "t", workspaceFolder: store.workspaceFolder });
    const services = { workspaceFolder: store.workspaceFolder, threads: store.threads, manager, config: parseHarnessConfig({}, "t"), allowHostCommands: false, approvalPolicy: defaultPolicy("local") };
    const { admission, context } = startRun(services, { threadId: "t", prompt: "hi", baseURL: "http://127.0.0.1:9/v1", model: "m" });
    const result = await executeRun(
      { manager, checkpointer: new BrokenSaver(), blobs: store.blobs, sandboxProvider: new LocalSandboxProvider({ workspaceFolder: workspace }), sandboxKind: "local" },
      admission,
      context,
    );
    assert.equal(result.status, "error");
    assert.match(result.error!, /could not complete: disk on fire/);
    const run = manager.runs.get(admission.run.run_id)!;
    assert.equal(run.status, "error");
    assert.notEqual(run.ended_at, null);
    assert.equal(run.lease_expires_at, null);
    assert.equal((manager.journal.events.endOf(run.run_id)?.data as { status: string }).status, "error");
    assert.equal(manager.runs.active("t"), undefined, "the thread is free for the next run");
  } finally {
    store.close();
  }
});
