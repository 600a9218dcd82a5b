/**
 * Long-term memory (issue 15) in a real VS Code (code-server + chromium) against the scripted
 * model server: a panel run states a fact, the harness extracts it (debounce 0 s through
 * DEERFLOW_MEMORY_DEBOUNCE_SECONDS, still the server's timer path), "DeerFlow: Open Memory" shows
 * it in an editor, an edit saved there is what the harness stores (read back with the real CLI
 * on the extension's data directory), invalid JSON is refused with a clear error and changes
 * nothing, and "DeerFlow: Forget Memory" (its modal confirmation clicked) clears it.
 *
 * The extraction request is told apart by its system prompt; every other request is the panel's
 * scenario (../scenarios.ts). Screenshots go to test-results/vscode/<code-server version>/memory-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, RecordedRequest, ScriptFn } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
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
function memoryFileWhere(file: string, pred: (text: string) => boolean): Promise<string> {
  const dir = join(file, "..", "..");
  return new Promise((resolve) => {
    const read = () => (existsSync(file) ? readFileSync(file, "utf8") : "");
    const check = (): boolean => {
      const text = read();
      if (!pred(text)) return false;
      w.close();
      resolve(text);
      return true;
    };
    const w = watch(dir, { recursive: true }, () => void check());
    check();
  });
}

/** `deerflow memory show` on the extension's data directory: what is stored, through the CLI. */
function cliShow(dataDir: string): { facts: Array<{ content: string }> } {
  return JSON.parse(execFileSync(process.execPath, [join(repoRoot, "dist", "cli.js"), "memory", "show", "--data-dir", dataDir], { encoding: "utf8" })) as { facts: Array<{ content: string }> };
}

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

  test("a fact from a panel run shows in Open Memory; an edit saved there is stored; invalid JSON is refused; Forget clears it", () =>
    step("open-edit-forget", async () => {
      const page = df!.page;
      const panel = new Panel(page);
      await panel.open();
      await panel.send(tagged("remember", "My favourite editor theme is Solarized Dark."));
      await shows(panel.message("ai", "Noted: Solarized Dark."), "the answer in the panel");
      await memoryFileWhere(memoryFile, (t) => t.includes(FACT));
      assert.ok(model.requests.some(isExtraction), "the harness asked the model for an extraction");

      await runCommand(page, "DeerFlow: Open Memory");
      await shows(page.locator(".tabs-container .tab", { hasText: "memory.json" }), "the memory.json editor tab");
      await page.locator(".monaco-editor .view-lines").first().click();
      await page.keyboard.press("Control+End");
      await shows(editorText(FACT), "the stored fact in the memory editor");
      await screenshot(page, "memory-01-open");

      // Edit in the editor (Find/Replace), save: the harness stores it, as the CLI shows.
      await page.keyboard.press("Control+H");
      const find = page.locator(".find-widget textarea[aria-label='Find'], .find-widget input[aria-label='Find']").first();
      const replace = page.locator(".find-widget textarea[aria-label='Replace'], .find-widget input[aria-label='Replace']").first();
      await find.fill("Solarized Dark");
      await replace.fill("Gruvbox Light");
      await page.locator(".find-widget [aria-label^='Replace All']").first().click();
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

      // Forget: the modal confirmation, then the memory is empty.
      await runCommand(page, "DeerFlow: Forget Memory");
      const dialog = page.locator(".monaco-dialog-box", { hasText: "Forget everything DeerFlow remembers about you?" });
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
