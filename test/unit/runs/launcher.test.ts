// The one run launcher (runs/launcher.ts): every entry point starts runs through it, and it does
// the preparation itself — refusing with nothing written, then thread row, sandbox, thread
// folders and upload copy, startRun and the worker.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { openWorkspaceStore } from "../../../extension/harness/store/db.js";
import { loadHarnessConfig } from "../../../extension/harness/config/harnessConfig.js";
import { openRunSystem } from "../../../extension/harness/runs/services.js";
import { launchRun } from "../../../extension/harness/runs/launcher.js";
import type { LaunchServices } from "../../../extension/harness/runs/launcher.js";
import { LocalSandboxProvider } from "../../../extension/harness/sandbox/local.js";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { HarnessError } from "../../../extension/harness/errors.js";
import { startModelServer } from "../../fixtures/modelServer.js";

const HARNESS = join(import.meta.dirname, "../../../extension/harness");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

test("no entry point prepares or starts a run itself: startRun, executeRun and the upload copy are called from the launcher only", () => {
  const callers = (name: string) =>
    sources(HARNESS)
      .filter((f) => new RegExp(`(?<!function )\\b${name}\\(`).test(readFileSync(f, "utf8")))
      .map((f) => relative(HARNESS, f).split("\\").join("/"));
  assert.deepEqual(callers("startRun"), ["runs/launcher.ts"]);
  assert.deepEqual(callers("executeRun"), ["runs/launcher.ts"]);
  assert.deepEqual(callers("copyUploads"), ["runs/launcher.ts"]);
  // Both entry points of today call it.
  for (const entry of ["cli/run.ts", "server/runs.ts"]) assert.match(readFileSync(join(HARNESS, entry), "utf8"), /\blaunchRun\(/, entry);
});

function setup() {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "deerflow-launch-ws-")));
  const dataDir = mkdtempSync(join(tmpdir(), "deerflow-launch-data-"));
  const store = openWorkspaceStore({ dataDir, workspaceFolder: workspace });
  const manager = openRunSystem(store);
  let sandboxAsked = 0;
  const services: LaunchServices = {
    workspaceFolder: store.workspaceFolder,
    threads: store.threads,
    checkpointer: store.checkpointer,
    blobs: store.blobs,
    manager,
    config: loadHarnessConfig(dataDir, {}),
    sandbox: () => {
      sandboxAsked++;
      return { provider: new LocalSandboxProvider({ workspaceFolder: workspace }), kind: "local", allowHostCommands: false };
    },
  };
  after(() => store.close());
  return { workspace, store, manager, services, sandboxAsked: () => sandboxAsked };
}

test("a request the launcher refuses writes nothing and never asks for a sandbox", () => {
  const s = setup();
  const refused = (req: Parameters<typeof launchRun>[1], ...codes: string[]) => {
    assert.throws(() => launchRun(s.services, req), (e: unknown) => e instanceof HarnessError && codes.includes(e.code));
  };
  refused({ threadId: "new", createThread: true, prompt: "hi", baseURL: "http://127.0.0.1:9/v1", uploads: [join(s.workspace, "missing.txt")], attachRoots: "any" }, "usage");
  refused({ threadId: "new", createThread: true, prompt: "hi", model: "no-such-model" }, "no_models", "unknown_model");
  refused({ threadId: "absent", prompt: "hi", baseURL: "http://127.0.0.1:9/v1" }, "thread_not_found");
  assert.equal(s.store.threads.get("new"), undefined, "no thread row");
  assert.equal(s.sandboxAsked(), 0);
  assert.deepEqual(s.manager.runs.listByThread("new"), []);
  assert.deepEqual(readdirSync(s.workspace), [], "no thread folders");
});

test("a launched run is prepared by the launcher: thread row, sandbox, uploads copied, admitted, executed to its end", async () => {
  const server = await startModelServer({ script: [{ content: "Read it." }] });
  after(() => server.close());
  const s = setup();
  const upload = join(mkdtempSync(join(tmpdir(), "deerflow-launch-up-")), "notes.txt");
  writeFileSync(upload, "hello");
  const admitted: string[] = [];
  const launched = launchRun(
    s.services,
    { threadId: "fresh", createThread: true, prompt: "read my notes", baseURL: server.url, model: "scripted", uploads: [upload], attachRoots: "any" },
    { onAdmitted: (run) => admitted.push(run.run_id) },
  );
  assert.deepEqual(admitted, [launched.admission.run.run_id], "onAdmitted before the worker");
  assert.ok(s.store.threads.get("fresh"), "the thread row was created");
  assert.equal(s.sandboxAsked(), 1);
  assert.equal(readFileSync(join(ensureThreadDirs(s.store.workspaceFolder, "fresh").uploads, "notes.txt"), "utf8"), "hello");
  assert.deepEqual(launched.context.files.map((f) => f.filename), ["notes.txt"]);
  const result = await launched.done!;
  assert.equal(result.status, "success", result.error);
  const events = s.manager.journal.events.list("fresh", { runId: launched.admission.run.run_id });
  assert.equal(events.at(-1)!.event, "end");
  assert.equal(s.manager.runs.get(launched.admission.run.run_id)!.status, "success");
});
