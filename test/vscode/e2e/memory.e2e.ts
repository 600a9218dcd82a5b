/**
 * Long-term memory (issues 15, 21) in a real VS Code (code-server + chromium) against the scripted
 * model server: a panel run states a fact, the harness extracts it (debounce 0 s through
 * DEERFLOW_MEMORY_DEBOUNCE_SECONDS, still the server's timer path) and the panel says so;
 * "DeerFlow: Open Memory" shows it in an editor with its scope (only this workspace), promoting it
 * there (the lens, then the confirmation) makes it global — another workspace's view, read with
 * the real CLI on the extension's data directory, then holds it; an edit saved there is what the
 * harness stores, invalid JSON is refused with a clear error and changes nothing, and "DeerFlow:
 * Forget Memory" always asks (also when a keybinding runs it with `true`, which once skipped the
 * dialog) before it clears.
 *
 * The extraction request is told apart by its system prompt; every other request is the panel's
 * scenario (../scenarios.ts). Screenshots go to test-results/vscode/<code-server version>/memory-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, watch, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { execFileSync } from "node:child_process";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, RecordedRequest, ScriptFn } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { runCommand, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";
import { repoRoot } from "../launch.js";
import { MEMORY_UPDATE_PROMPT_HEAD } from "../../../extension/harness/memory/extract.js";

const FACT = "The user's favourite editor theme is Solarized Dark.";
const EDITED = "The user's favourite editor theme is Gruvbox Light.";
const EXTERNAL = "The user deploys on Fridays.";
const SECRET = "sk-abcdefghijklmnop1234";

const isExtraction = (req: RecordedRequest): boolean =>
  (req.body?.messages ?? []).some((m) => m.role === "system" && typeof m.content === "string" && m.content.startsWith(MEMORY_UPDATE_PROMPT_HEAD));

function script(): ScriptFn {
  const panel = scenarioScript({ remember: [{ content: "Noted: Solarized Dark." }] });
  return (req, i) =>
    isExtraction(req) ? { content: JSON.stringify({ newFacts: [{ content: FACT, category: "preference", confidence: 0.95 }], factsToRemove: [] }) } : panel(req, i);
}

/**
 * Resolves with memory.json's text once `pred` holds for it: woken by a recursive fs.watch on the
 * data directory (the memory folder may not exist yet), never a timer.
 */
function memoryFileWhere(file: string, pred: (text: string) => boolean, timeoutMs = 30_000): Promise<string> {
  const dir = join(file, "..", "..");
  return new Promise((resolve, reject) => {
    const read = () => (existsSync(file) ? readFileSync(file, "utf8") : "");
    // Bounded: a save that never lands fails this test with what the file holds, not the whole file's 15-minute limit.
    const bound = setTimeout(() => {
      w.close();
      reject(new Error(`memory.json did not change as expected within ${timeoutMs / 1000} s; it holds: ${read().slice(0, 500)}`));
    }, timeoutMs);
    const check = (): boolean => {
      const text = read();
      if (!pred(text)) return false;
      clearTimeout(bound);
      w.close();
      resolve(text);
      return true;
    };
    const w = watch(dir, { recursive: true }, () => void check());
    check();
  });
}

interface ShownMemory {
  facts: Array<{ content: string; scope?: string; workspace?: string }>;
}

/** `deerflow memory show` on the extension's data directory: what is stored (with `workspace`: what that folder's threads are given), through the CLI. */
function cliShow(dataDir: string, workspace?: string): ShownMemory {
  const args = [join(repoRoot, "dist", "cli.js"), "memory", "show", "--data-dir", dataDir, ...(workspace ? ["--workspace", workspace] : [])];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: "utf8" })) as ShownMemory;
}

/** A keybinding that runs Forget Memory with `true`: the argument that used to skip its confirmation. */
const FORGET_WITH_ARGUMENT = "ctrl+alt+shift+m";

describe(`DeerFlow memory in VS Code (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let dataDir: string;
  let memoryFile: string;

  before(async () => {
    model = await startModelServer({ script: script(), chunkDelayMs: 5, waitTimeoutMs: 60_000 });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-memory",
      env: { DEERFLOW_MEMORY_DEBOUNCE_SECONDS: "0" },
      // On (its default) — said explicitly: the quiet test settings turn it off for the other suites.
      settings: { "deerflow.memory.enabled": true },
      keybindings: [{ key: FORGET_WITH_ARGUMENT, command: "deerflow.forgetMemory", args: true }],
    });
    // The extension's global storage is the harness's data directory (code-server's user data dir).
    dataDir = join(df.cs.userDataDir, "User", "globalStorage", "deerflow-vscode.deerflow-vscode");
    memoryFile = join(dataDir, "memory", "memory.json");
  });

  after(async () => {
    await df?.close();
    await model?.close();
  });

  const step = failureCapture(() => df, "memory-");
  const editorText = (text: string) => df!.page.locator(".monaco-editor .view-lines", { hasText: text });

  test("a fact from a panel run: the panel says memory changed; Open Memory shows its scope; promoted there, another workspace gets it", () =>
    step("scope-promote", async () => {
      const page = df!.page;
      const panel = new Panel(page);
      await panel.open();
      await panel.send(tagged("remember", "My favourite editor theme is Solarized Dark."));
      await shows(panel.message("ai", "Noted: Solarized Dark."), "the answer in the panel");
      await memoryFileWhere(memoryFile, (t) => t.includes(FACT));
      assert.ok(model.requests.some(isExtraction), "the harness asked the model for an extraction");
      const memoryLine = panel.view.getByTestId("memory-line");
      await shows(memoryLine.filter({ hasText: "Memory updated from this thread: 1 fact learnt" }), "the panel's line saying memory changed");
      await screenshot(page, "memory-00-panel-line");

      // The stored fact is this workspace's only: the editor says so, another folder's view lacks it.
      const workspace = realpathSync(df!.cs.workspace);
      const elsewhere = mkdtempSync(join(tmpdir(), "deerflow-e2e-other-ws-"));
      assert.deepEqual(cliShow(dataDir).facts.map((f) => [f.content, f.scope, f.workspace]), [[FACT, "workspace", workspace]]);
      assert.deepEqual(cliShow(dataDir, elsewhere).facts, [], "another workspace is not given it");

      // Open Memory from the panel's line.
      await memoryLine.getByRole("button", { name: "Open Memory" }).click();
      await shows(page.locator(".tabs-container .tab", { hasText: "memory.json" }), "the memory.json editor tab");
      await page.locator(".monaco-editor .view-lines").first().click();
      await page.keyboard.press("Control+End");
      await shows(editorText(FACT), "the stored fact in the memory editor");
      await shows(editorText('"scope": "workspace"'), "the fact's scope in the editor");
      const lenses = page.locator(".monaco-editor .codelens-decoration");
      await shows(lenses.filter({ hasText: `Only in ${basename(df!.cs.workspace)}` }), "the lens naming the only workspace that gets it");
      await screenshot(page, "memory-01-open-scope");

      // Promote: the lens, then the confirmation naming the fact; the editor reloads, global.
      await lenses.getByRole("link", { name: "Promote to all workspaces" }).or(lenses.locator("a", { hasText: "Promote to all workspaces" })).first().click();
      const confirm = page.locator(".monaco-dialog-box", { hasText: "Give this to every workspace?" });
      await shows(confirm.filter({ hasText: FACT }), "the promote confirmation naming the fact");
      await confirm.getByRole("button", { name: "Promote" }).click();
      await memoryFileWhere(memoryFile, (t) => t.includes('"scope": "global"'));
      await shows(editorText('"scope": "global"'), "the reloaded editor showing the fact as global");
      await shows(lenses.filter({ hasText: "Given to every workspace" }), "the lens saying every workspace gets it");
      assert.deepEqual(cliShow(dataDir, elsewhere).facts.map((f) => f.content), [FACT], "another workspace is given it now");
      await screenshot(page, "memory-01b-promoted");
    }));

  test("an edit saved in Open Memory is stored; invalid JSON is refused; Forget always asks, also when run with an argument, then clears", () =>
    step("edit-forget", async () => {
      const page = df!.page;
      await shows(page.locator(".tabs-container .tab:not(.dirty)", { hasText: "memory.json" }), "the memory editor open and saved");
      await page.locator(".monaco-editor .view-lines").first().click();

      // Edit in the editor (Find/Replace), save: the harness stores it, as the CLI shows.
      await page.keyboard.press("Control+H");
      const find = page.locator(".find-widget textarea[aria-label='Find'], .find-widget input[aria-label='Find']").first();
      const replace = page.locator(".find-widget textarea[aria-label='Replace'], .find-widget input[aria-label='Replace']").first();
      await find.fill("Solarized Dark");
      await replace.fill("Gruvbox Light");
      await page.locator(".find-widget [aria-label^='Replace All']").first().click();
      // The replacement is in the editor before it is saved (under load the save could beat it).
      await shows(page.locator(".monaco-editor .view-lines", { hasText: "Gruvbox Light" }).first(), "the replaced text in the memory editor");
      await page.keyboard.press("Escape");
      await page.keyboard.press("Control+S");
      await memoryFileWhere(memoryFile, (t) => t.includes(EDITED));
      assert.deepEqual(cliShow(dataDir).facts.map((f) => f.content), [EDITED]);
      await shows(page.locator(".tabs-container .tab:not(.dirty)", { hasText: "memory.json" }), "the memory editor saved (not dirty)");
      await screenshot(page, "memory-02-edited");

      // Invalid JSON: refused with a clear error, nothing stored changes.
      const before = readFileSync(memoryFile, "utf8");
      await page.locator(".monaco-editor .view-lines").first().click();
      await page.keyboard.press("Control+End");
      await page.keyboard.type("oops");
      await page.keyboard.press("Control+S");
      await shows(page.locator(".notifications-toasts .notification-list-item", { hasText: "not valid JSON" }), "the error saying the memory is not valid JSON");
      assert.equal(readFileSync(memoryFile, "utf8"), before, "the stored memory is unchanged");
      await screenshot(page, "memory-03-invalid-json");
      // Put the document back as stored (discard the broken edit).
      await runCommand(page, "File: Revert File");

      // Forget run by a keybinding with `true` (once: no dialog at all): it asks; Cancel keeps everything.
      const dialog = page.locator(".monaco-dialog-box", { hasText: "Forget everything DeerFlow remembers about you?" });
      const kept = readFileSync(memoryFile, "utf8");
      await page.locator(".monaco-editor .view-lines").first().click();
      await page.keyboard.press("Control+Alt+Shift+M");
      await shows(dialog, "the Forget Memory confirmation, run with an argument");
      await screenshot(page, "memory-03b-forget-asks");
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "hidden" });
      assert.equal(readFileSync(memoryFile, "utf8"), kept, "Cancel forgets nothing");

      // Forget from the palette: the modal confirmation, then the memory is empty.
      await runCommand(page, "DeerFlow: Forget Memory");
      await shows(dialog, "the Forget Memory confirmation");
      await dialog.getByRole("button", { name: "Forget" }).click();
      await memoryFileWhere(memoryFile, (t) => t.includes('"facts": []'));
      assert.deepEqual(cliShow(dataDir).facts, []);
      await shows(editorText('"facts": []'), "the open memory editor reloaded, empty");
      await screenshot(page, "memory-04-forgotten");
    }));

  test("a save over facts the harness wrote since the editor read them is VS Code's save conflict; a scrubbed save reloads the editor", () =>
    step("conflict-scrub", async () => {
      const page = df!.page;
      // The editor is open and saved (the previous test). The file is rewritten from outside, as
      // an extraction does: a valid document with one more fact. Nothing tells the editor.
      await shows(page.locator(".tabs-container .tab:not(.dirty)", { hasText: "memory.json" }), "the memory editor open and saved");
      const doc = JSON.parse(readFileSync(memoryFile, "utf8")) as { facts: unknown[] };
      const now = new Date().toISOString();
      doc.facts.push({ id: "fact_external", content: EXTERNAL, category: "context", confidence: 0.9, createdAt: now, source: "thread-external" });
      writeFileSync(memoryFile, `${JSON.stringify(doc, null, 2)}\n`);
      assert.deepEqual(cliShow(dataDir).facts.map((f) => f.content), [EXTERNAL], "the external write is a valid memory");

      // Edit and save in the editor: VS Code's own "newer" conflict, the external fact kept.
      await page.locator(".monaco-editor .view-lines").first().click();
      await page.keyboard.press("Control+End");
      await page.keyboard.press("Enter");
      await page.keyboard.press("Control+S");
      await shows(page.locator(".notifications-toasts .notification-list-item", { hasText: "newer" }), "VS Code's save conflict (the file is newer)");
      assert.deepEqual(cliShow(dataDir).facts.map((f) => f.content), [EXTERNAL], "the external fact is still stored");
      await screenshot(page, "memory-05-conflict");
      await runCommand(page, "File: Revert File");
      await shows(editorText(EXTERNAL), "the reverted editor showing the external fact");
      await shows(page.locator(".tabs-container .tab:not(.dirty)", { hasText: "memory.json" }), "the memory editor reverted (not dirty)");

      // A fact with a secret: stored redacted, and the editor reloads what was stored.
      await page.keyboard.press("Control+H");
      const find = page.locator(".find-widget textarea[aria-label='Find'], .find-widget input[aria-label='Find']").first();
      const replace = page.locator(".find-widget textarea[aria-label='Replace'], .find-widget input[aria-label='Replace']").first();
      await find.fill("deploys on Fridays");
      await replace.fill(`uses the key ${SECRET}`);
      await page.locator(".find-widget [aria-label^='Replace All']").first().click();
      await page.keyboard.press("Escape");
      await shows(editorText(SECRET), "the secret typed in the editor");
      await page.keyboard.press("Control+S");
      const stored = await memoryFileWhere(memoryFile, (t) => t.includes("uses the key"));
      assert.ok(stored.includes("The user uses the key [redacted]") && !stored.includes(SECRET), stored);
      await shows(editorText("uses the key [redacted]"), "the editor reloaded with what was stored ([redacted])");
      await shows(page.locator(".tabs-container .tab:not(.dirty)", { hasText: "memory.json" }), "the memory editor not dirty after the scrubbed save");
      assert.equal(await page.locator(".monaco-editor .view-lines", { hasText: SECRET }).count(), 0, "the secret is gone from the editor");
      await screenshot(page, "memory-06-scrubbed");
    }));
});
