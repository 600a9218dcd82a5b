/**
 * `npm run start:vscode`: the extension in VS Code for the Web — code-server 4.139.1 (VS Code
 * 1.139.1, on Node 24) on 127.0.0.1 — with a copy of samples/hello-workspace, and prints the URL to
 * open. DEERFLOW_CODE_SERVER=4.100.3 opens the older one (VS Code 1.100.3 on Node 20).
 * code-server (and Node 24) are installed on demand outside the repo (scripts/ci/code-server-setup.sh).
 *
 * With OPENAI_BASE_URL (and OPENAI_API_KEY, OPENAI_MODEL) set, the agent talks to that endpoint.
 * Without them a scripted OpenAI-compatible server on 127.0.0.1 plays the model, as in
 * `npm run demo`: every prompt gets the same short tour (look, write a summary, present it).
 *
 *   npm run start:vscode [-- --port N] [-- --workspace DIR] [-- --smoke]
 *     --workspace DIR  open your own folder instead of a copy of the sample
 *     --smoke          open the URL in headless chromium, wait for the DeerFlow panel, stop, exit 0
 * Ctrl-C stops code-server, its extension host and the harness.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { launchCodeServer, repoRoot } from "../test/vscode/launch.js";
import { defaultCodeServer, withoutNpmConfig } from "../test/vscode/codeServers.js";
import { startModelServer } from "../test/fixtures/modelServer.js";
import { tour } from "./sampleTour.js";

// `npm start` exported its npm's configuration (npm_config_*, its Node 20 user agent among them):
// nothing this starts (the installers' npm, code-server, the harness) is to read it as its own.
const clean = withoutNpmConfig();
for (const k of Object.keys(process.env)) if (!(k in clean)) delete process.env[k];

const { values } = parseArgs({
  options: { port: { type: "string" }, workspace: { type: "string" }, smoke: { type: "boolean", default: false } },
});

const real = Boolean(process.env.OPENAI_BASE_URL);
const model = real ? undefined : await startModelServer({ script: tour, chunkDelayMs: 30 });
const cs = await launchCodeServer({
  version: defaultCodeServer(),
  extension: { kind: "link", path: repoRoot },
  // The sample is copied into the run dir (removed on stop); --workspace opens the folder itself.
  ...(values.workspace ? { workspaceInPlace: resolve(values.workspace) } : {}),
  label: "deerflow-start-vscode",
  // Chat stays on (issue 30 item 6): `@deerflow` is part of the quick start. The walkthrough opens
  // on first start, as it does after a Marketplace install. Writes ask first, so the scripted
  // tour's summary shows a newcomer one approval card with its diff (issue 30 item 1).
  settings: { "chat.disableAIFeatures": false, "workbench.welcomePage.walkthroughs.openOnInstall": true, ...(real ? {} : { "deerflow.approval.write": "ask" }) },
  ...(values.port ? { port: Number(values.port) } : {}),
  ...(model ? { env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-scripted", OPENAI_MODEL: "scripted-demo" } } : {}),
});
const url = new URL(cs.url);

let stopping: Promise<void> | undefined;
const stop = (code: number) => {
  stopping ??= (async () => {
    await cs.cleanup();
    await model?.close();
    process.exit(code);
  })();
  return stopping;
};
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));

process.stdout.write(
  `\nDeerFlow in VS Code for the Web (code-server ${cs.version} = VS Code ${cs.vscodeVersion}, on ${cs.node})\n` +
    `  workspace: ${cs.workspace}${values.workspace ? "" : " (a copy of samples/hello-workspace)"}\n` +
    `  model:     ${real ? process.env.OPENAI_BASE_URL : `scripted model server ${model?.url}`}\n\n` +
    `  Open: ${url.toString()}\n\n` +
    `Open the DeerFlow view in the activity bar (or F1 → "DeerFlow: Open Panel"). Ctrl-C stops it.\n`,
);

if (values.smoke) {
  const { launchBrowser, openWorkbench, runCommand, webview } = await import("../test/vscode/workbench.js");
  const browser = await launchBrowser();
  let code = 1;
  try {
    await openWorkbench(browser.page, url.toString(), "DeerFlow");
    await runCommand(browser.page, "DeerFlow: Open Panel");
    await webview(browser.page).getByRole("textbox", { name: "Message" }).waitFor({ state: "visible", timeout: 60_000 });
    process.stdout.write("smoke: the workbench loaded the extension and the DeerFlow panel is up\n");
    code = 0;
  } catch (e) {
    process.stderr.write(`smoke failed: ${e instanceof Error ? e.message : String(e)}\n`);
  } finally {
    await browser.close();
  }
  await stop(code);
}
