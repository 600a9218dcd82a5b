/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, statSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import * as vscode from "vscode";
import { deerflow, harnessReady, next } from "./helpers.js";

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

describe("API keys in SecretStorage", () => {
  const NAME = "DEERFLOW_TEST_API_KEY";
  const secret = `sk-deerflow-test-${randomUUID()}`;

  it("Set API Key stores the key in SecretStorage and hands it to the harness in harness/configure", async () => {
    const api = await deerflow();
    await harnessReady(api);
    const configured = next(api.harness.onDidConfigure, (c) => c.apiKeyNames.includes(NAME), "harness/configure with the new key");
    assert.equal(await vscode.commands.executeCommand("deerflow.setApiKey", NAME, secret), true);
    const c = await configured;
    assert.ok(!JSON.stringify(c).includes(secret), "what the host reports about configure names keys, never values");
    assert.equal(await api.hasApiKey(NAME), true);
  });

  it("the key is in neither globalState, workspaceState nor settings", async () => {
    const api = await deerflow();
    assert.ok(!api.storedState().includes(secret));
    const settings = JSON.stringify(vscode.workspace.getConfiguration());
    assert.ok(!settings.includes(secret));
  });

  it("the key is in no log file of this window (the DeerFlow log included)", async () => {
    const api = await deerflow();
    const marker = `secret-scan-marker-${randomUUID()}`;
    api.log.info(marker);
    // The window's logs: exthost/<extension id>/ and the output channels beside it.
    const root = dirname(dirname(api.logUri.fsPath));
    let files: string[] = [];
    const found = () => {
      files = filesUnder(root);
      return files.some((f) => readFileSync(f, "utf8").includes(marker));
    };
    // Log files are flushed asynchronously: wait for a write under the log folder that shows the
    // marker (a file-system event, not a timer), failing after 15 s.
    if (!found()) {
      await new Promise<void>((resolve, reject) => {
        const watcher = watch(root, { recursive: true }, () => {
          if (!found()) return;
          clearTimeout(limit);
          watcher.close();
          resolve();
        });
        const limit = setTimeout(() => {
          watcher.close();
          reject(new Error(`the marker never reached a log file under ${root}`));
        }, 15_000);
      });
    }
    assert.ok(files.some((f) => readFileSync(f, "utf8").includes(marker)), `the DeerFlow log is under ${root}`);
    for (const f of files) assert.ok(!readFileSync(f, "utf8").includes(secret), `${f} contains the key`);
  });

  it("an empty value removes the key, from SecretStorage and from the harness", async () => {
    const api = await deerflow();
    const configured = next(api.harness.onDidConfigure, (c) => !c.apiKeyNames.includes(NAME), "harness/configure without the key");
    assert.equal(await vscode.commands.executeCommand("deerflow.setApiKey", NAME, ""), true);
    await configured;
    assert.equal(await api.hasApiKey(NAME), false);
  });
});
