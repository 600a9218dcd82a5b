/**
 * The extension without better-sqlite3 (issue 9): a copy of the built extension with no
 * node_modules, linked into the extensions dir as an installed extension.
 * - On a Node with node:sqlite (code-server 4.139.1, Node 24) it works: no native binary needed.
 * - On Node 20 (code-server 4.100.3) no SQLite driver works: a notification and the panel's notice
 *   say so, and DeerFlow: Show Logs names the runtime, what failed and what to do. A blank panel
 *   or a stack trace would be the defect.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { runCommand, screenshot } from "../workbench.js";
import { CODE_SERVERS, defaultCodeServer } from "../codeServers.js";
import { repoRoot } from "../launch.js";

const version = defaultCodeServer();
const hasNodeSqlite = CODE_SERVERS[version].nodeMajor >= 22;

/** The built extension alone: package.json, dist/, media/ — and no node_modules. */
function extensionWithoutNativeModules(): string {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-no-native-"));
  for (const part of ["package.json", "dist", "media", "README.md"]) cpSync(join(repoRoot, part), join(dir, part), { recursive: true });
  return dir;
}

/** Text without whitespace: the Output view soft-wraps long lines into separate elements. */
const squash = (t: string): string => t.replace(/\s+/g, "");

describe(`the extension without better-sqlite3 in code-server ${version} (Node ${CODE_SERVERS[version].nodeMajor})`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;

  before(async () => {
    model = await startModelServer({ script: [{ content: "Stored with node:sqlite, no native module." }] });
    df = await startDeerFlow({ model, label: "deerflow-vscode-storage", extension: { kind: "link", path: extensionWithoutNativeModules() } });
    panel = new Panel(df.page);
  });

  /** Waits until the Output panel (DeerFlow: Show Logs) holds `needle`; returns its text, squashed. */
  async function logShows(needle: string): Promise<string> {
    const output = df!.page.locator(".part.panel").first();
    await output.waitFor({ timeout: 30_000 });
    await df!.page.waitForFunction(
      ([sel, want]) => (document.querySelector(sel)?.textContent ?? "").replace(/\s+/g, "").includes(want),
      [".part.panel", squash(needle)] as const,
      { timeout: 30_000 },
    );
    return squash(await output.innerText());
  }

  after(async () => {
    await df?.close();
    await model?.close();
  });

  if (hasNodeSqlite) {
    test("a prompt gets its answer: the harness stores the thread with node:sqlite", async () => {
      await panel.open();
      await panel.send("Does storage work without a native module?");
      await panel.message("ai", "Stored with node:sqlite").waitFor({ timeout: 60_000 });
      await panel.status("success").waitFor({ timeout: 30_000 });
      await runCommand(df!.page, "DeerFlow: Show Logs");
      await logShows("storage: node:sqlite on Node 24.");
      await screenshot(df!.page, "storage-node-sqlite");
    });
  } else {
    test("no driver works: a notification and the panel say so, and Show Logs says what ran, what failed and what to do", async () => {
      // The extension activates with its view: opening the panel starts the harness.
      await runCommand(df!.page, "DeerFlow: Open Panel");
      const notice = panel.view.getByTestId("notice");
      await notice.waitFor({ state: "visible", timeout: 60_000 });
      assert.match((await notice.textContent()) ?? "", /Cannot open the harness database/);
      const toast = df!.page.locator(".notifications-toasts .notification-list-item", { hasText: "Cannot open the harness database" });
      await toast.first().waitFor({ timeout: 30_000 });
      assert.match(squash((await toast.first().textContent()) ?? ""), /noSQLitedriverworksonNode20\./);
      await screenshot(df!.page, "storage-unavailable-notice");
      await runCommand(df!.page, "DeerFlow: Show Logs");
      const text = await logShows("no SQLite driver works on Node 20.");
      assert.ok(text.includes(squash("better-sqlite3: Cannot find module 'better-sqlite3'")), text);
      assert.ok(text.includes(squash("node:sqlite is not available in Node 20")), text);
      assert.ok(text.includes(squash("What to do: run DeerFlow on Node 22.13 or later")), text);
      assert.doesNotMatch(text, /at\S+\(\/|node:internal/, "no stack trace");
      await screenshot(df!.page, "storage-unavailable-logs");
    });
  }
});
