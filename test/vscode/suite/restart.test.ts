/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import { deerflow, folderPath, harnessReady, next } from "./helpers.js";

describe("the harness client", () => {
  it("restarts a harness that was killed, re-initializes it and answers again", async () => {
    const api = await deerflow();
    await harnessReady(api);
    const before = api.harness.process!;
    const restarted = next(api.harness.onDidStart, (s) => s.pid !== before.pid, "the harness to restart", 30_000);
    process.kill(before.pid, "SIGKILL");
    const after = await restarted;
    assert.ok(after.generation > before.generation);
    const threads = await api.harness.request("threads/list", { workspaceFolder: folderPath() });
    assert.ok(Array.isArray(threads) && threads.length > 0, "the threads survived (the database is in global storage)");
  });

  it("keeps restarting with backoff when killed again", async () => {
    const api = await deerflow();
    const before = api.harness.process!;
    const restarted = next(api.harness.onDidStart, (s) => s.pid !== before.pid, "the second restart", 30_000);
    process.kill(before.pid, "SIGKILL");
    await restarted;
    assert.ok(Array.isArray(await api.harness.request("threads/list", { workspaceFolder: folderPath() })));
  });
});
