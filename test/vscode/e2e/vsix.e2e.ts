/**
 * The VSIX a user installs (issue 9): built with vsce, installed with `code-server
 * --install-extension` into a fresh extensions dir, and driven through one prompt → streamed
 * answer → artifact that opens in an editor tab. Everything runs from the installed copy — the
 * extension host bundle, the harness process (on this code-server's Node: better-sqlite3 from the
 * VSIX on Node 20, node:sqlite on Node 24) and @devcontainers/cli — never from the repo.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { editorTab, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";
import { processGroupMembers, repoRoot } from "../launch.js";

const REPORT = "# Installed\n\nThe VSIX carries everything it needs.\n";
const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  publisher: string;
  name: string;
  version: string;
  scripts: { package: string };
};

/** Builds the VSIX with `npm run package`'s own vsce arguments (read from package.json, not copied), into a temp folder. */
function buildVsix(): string {
  const out = join(mkdtempSync(join(tmpdir(), "deerflow-vsix-")), "deerflow-vscode.vsix");
  const vsce = join(repoRoot, "node_modules", ".bin", "vsce");
  const [tool, ...args] = pkg.scripts.package.split(/\s+/);
  if (tool !== "vsce") throw new Error(`package.json's package script no longer runs vsce: ${pkg.scripts.package}`);
  const outAt = args.indexOf("--out");
  if (outAt < 0) throw new Error(`package.json's package script has no --out: ${pkg.scripts.package}`);
  args[outAt + 1] = out;
  const r = spawnSync(vsce, args, { cwd: repoRoot, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`vsce package failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return out;
}

/** The command lines of the processes in code-server's process group (the extension hosts and the harness). */
function commandLines(pgid: number): string[] {
  return processGroupMembers(pgid).flatMap((pid) => {
    try {
      return [readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ")];
    } catch {
      return [];
    }
  });
}

describe(`the VSIX installed into code-server ${defaultCodeServer()}`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;
  let installed: string;

  before(async () => {
    const vsix = buildVsix();
    model = await startModelServer({
      script: scenarioScript({
        report: [
          { content: "Writing it down.", toolCalls: [{ name: "write_file", args: { description: "Write the note", path: "/mnt/user-data/outputs/installed.md", content: REPORT } }] },
          { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/installed.md"] } }] },
          { content: "Done: installed.md is ready for you to open." },
        ],
      }),
      chunkDelayMs: 5,
    });
    df = await startDeerFlow({ model, label: "deerflow-vscode-vsix", extension: { kind: "vsix", path: vsix } });
    panel = new Panel(df.page);
    installed = join(df.cs.runDir, "extensions", `${pkg.publisher}.${pkg.name}-${pkg.version}`);
  });

  after(async () => {
    await df?.close();
    await model?.close();
  });

  test("the installed extension is a copy that carries its bundles and run-time dependencies", () => {
    assert.ok(existsSync(installed), `installed at ${installed} (extensions dir: ${readdirSync(join(df!.cs.runDir, "extensions")).join(", ")})`);
    assert.equal(lstatSync(installed).isSymbolicLink(), false, "a copy, not a link to the repo");
    for (const rel of ["dist/extension.cjs", "dist/server.js", "dist/webview.js", "node_modules/@devcontainers/cli/devcontainer.js", "node_modules/@devcontainers/cli/package.json"]) {
      assert.ok(existsSync(join(installed, rel)), `the VSIX carries ${rel}`);
    }
  });

  test("a prompt streams its answer and the presented file opens in an editor tab, all from the installed copy", async () => {
    try {
      await panel.open();
      await panel.send(tagged("report", "Write a short note."));
      const artifact = panel.artifacts.getByText("installed.md").first();
      await artifact.waitFor({ timeout: 60_000 });
      await panel.message("ai", "installed.md is ready").waitFor({ timeout: 30_000 });
      await panel.status("success").waitFor({ timeout: 30_000 });
      await artifact.click();
      await editorTab(df!.page, "installed.md").waitFor({ timeout: 20_000 });
      await df!.page.locator(".monaco-editor .view-lines", { hasText: "carries everything it needs" }).waitFor({ timeout: 20_000 });
      await screenshot(df!.page, "vsix-artifact-opened");
    } catch (e) {
      await screenshot(df!.page, "FAILED-vsix").catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- code-server log (tail) ---\n${df!.cs.log().split("\n").slice(-30).join("\n")}`, { cause: e });
    }
    const harness = commandLines(df!.cs.pid).filter((c) => c.includes("server.js") && c.includes("--stdio"));
    assert.ok(harness.length > 0, `a harness process runs (group: ${commandLines(df!.cs.pid).join(" | ")})`);
    for (const c of harness) {
      assert.ok(c.includes(join(installed, "dist", "server.js")), `the harness runs from the installed copy: ${c}`);
      assert.ok(!c.includes(join(repoRoot, "dist")), `not from the repo: ${c}`);
    }
  });
});
