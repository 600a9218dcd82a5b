/**
 * A throwaway extension that proves the infrastructure on its own, before (and apart from) the
 * DeerFlow extension: code-server starts, chromium renders the workbench, a development-mode
 * extension loads from the payload URL, the environment reaches its extension host (that is how
 * the harness finds the scripted model server), the host runs on the code-server's Node (the one the
 * harness inherits), and a webview view round-trips a message.
 * Written at run time as plain CommonJS, so it needs no build and no lint exemption.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const PROBE_CONTAINER = "Probe";
export const PROBE_OPEN_COMMAND = "Probe: Open Panel";

const manifest = {
  name: "probe",
  publisher: "deerflow-test",
  version: "0.0.1",
  engines: { vscode: "^1.100.0" },
  main: "./extension.js",
  activationEvents: [],
  contributes: {
    commands: [{ command: "probe.open", title: "Open Panel", category: "Probe" }],
    viewsContainers: { activitybar: [{ id: "probe", title: PROBE_CONTAINER, icon: "$(beaker)" }] },
    views: { probe: [{ type: "webview", id: "probe.view", name: "Probe View" }] },
  },
};

const extensionJs = `
const vscode = require("vscode");
exports.activate = (context) => {
  context.subscriptions.push(
    vscode.commands.registerCommand("probe.open", () => vscode.commands.executeCommand("probe.view.focus")),
    vscode.window.registerWebviewViewProvider("probe.view", {
      resolveWebviewView(view) {
        view.webview.options = { enableScripts: true };
        view.webview.onDidReceiveMessage((m) => {
          if (m && m.type === "ping") view.webview.postMessage({ type: "pong", env: process.env.OPENAI_BASE_URL || "(unset)", vscode: vscode.version, node: process.version });
        });
        view.webview.html = \`<!doctype html><html><body>
          <button id="ping">Ping</button><div data-testid="reply"></div>
          <script>
            const api = acquireVsCodeApi();
            document.getElementById("ping").onclick = () => api.postMessage({ type: "ping" });
            addEventListener("message", (e) => {
              document.querySelector("[data-testid=reply]").textContent = "env " + e.data.env + " vscode " + e.data.vscode + " node " + e.data.node;
            });
          </script></body></html>\`;
      },
    }),
  );
};
`;

/** Writes the probe extension into `dir` and returns `dir`. */
export function writeProbeExtension(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, "extension.js"), extensionJs);
  return dir;
}
