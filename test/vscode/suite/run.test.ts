/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import type { HarnessToHost } from "../../../extension/protocol/rpc.js";
import { deerflow, execute, next } from "./helpers.js";
import { useScriptedModel } from "./scriptedModel.js";

describe("a run through the host", () => {
  const model = useScriptedModel();

  it("sends the prompt through runs/start and hears runs/ended", async () => {
    const api = await deerflow();
    const threadId = await execute<string>("deerflow.newThread");
    const ended = new vscode.EventEmitter<HarnessToHost["runs/ended"]>();
    const sub = api.harness.onNotification("runs/ended", (p) => ended.fire(p));
    try {
      const end = next(ended.event, (p) => p.threadId === threadId, "runs/ended for the new thread", 60_000);
      await api.session.send("Say hello.");
      const result = await end;
      assert.equal(result.status, "success", result.error);
      const runs = await api.harness.request("runs/list", { workspaceFolder: vscode.workspace.workspaceFolders![0]!.uri.fsPath, threadId });
      assert.equal(runs.length, 1);
      assert.equal(runs[0]!.model, model.name);
    } finally {
      sub.dispose();
      ended.dispose();
    }
  });

  it("Cancel Run interrupts the shown thread's active run, and the thread stays usable", async () => {
    const api = await deerflow();
    const threadId = await execute<string>("deerflow.newThread");
    const ended = new vscode.EventEmitter<HarnessToHost["runs/ended"]>();
    const sub = api.harness.onNotification("runs/ended", (p) => ended.fire(p));
    try {
      const first = next(ended.event, (p) => p.threadId === threadId, "the hanging run to end", 60_000);
      await api.session.send("HANG until cancelled");
      assert.equal(await execute("deerflow.cancelRun"), true);
      assert.equal((await first).status, "interrupted");
      const second = next(ended.event, (p) => p.threadId === threadId, "the next run to end", 60_000);
      await api.session.send("Say hello.");
      assert.equal((await second).status, "success");
    } finally {
      sub.dispose();
      ended.dispose();
    }
  });
});
