/**
 * A test-only extension that registers a scripted vscode.lm model (issue 25): vendor
 * `deerflow-test`, family `scripted`, on the stable provider API (VS Code 1.104+;
 * ../shared/recipes/vscode-lm). It is what a Copilot or BYOK model is to DeerFlow, minus the
 * network. What it answers depends on the last message it is sent:
 *   - a tool result → a final answer naming the result's first line, streamed in three parts;
 *   - "[tool]" in the prompt → "Let me look." and a tool call of `ls` on the workspace;
 *   - "[hang]" → "Working on it" and then nothing until the request is cancelled;
 *   - "[fail]" → a LanguageModelError.NoPermissions thrown by the provider;
 *   - "[file]" → write_file of outputs/notes.md, then (on its result) present_files of it;
 *   - "[approve]" → write_file of .vscode/tasks.json, a protected path DeerFlow asks about;
 *   - anything else → "Hello from the scripted vscode.lm model.".
 * Each request, and each cancellation, is reported to DEERFLOW_LM_TEST_URL (the suite's recorder)
 * so the test waits on events. Where the provider API does not exist (VS Code 1.100) it registers
 * nothing and says so to the recorder.
 * Written at run time as plain CommonJS (like probeExtension.ts): no build, no typings pin.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import { once } from "node:events";

export const LM_VENDOR = "deerflow-test";
export const LM_FAMILY = "scripted";
export const LM_MODEL_NAME = "Scripted Test Model";

const manifest = {
  name: "lm-provider",
  publisher: "deerflow-test",
  version: "0.0.1",
  engines: { vscode: "^1.100.0" },
  main: "./extension.js",
  activationEvents: ["onStartupFinished", `onLanguageModelChatProvider:${LM_VENDOR}`],
  contributes: { languageModelChatProviders: [{ vendor: LM_VENDOR, displayName: "DeerFlow Test" }] },
};

const extensionJs = `
const vscode = require("vscode");
const url = process.env.DEERFLOW_LM_TEST_URL;
function report(event) {
  if (!url) return;
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(event) }).catch(() => undefined);
}
function textOf(message) {
  return (message.content || []).map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
}
// The newest prompt only: DeerFlow merges consecutive user messages (an interrupted turn's prompt and the next).
function lastText(message) {
  const texts = (message.content || []).filter((p) => p instanceof vscode.LanguageModelTextPart);
  return texts.length ? texts[texts.length - 1].value : "";
}
exports.activate = (context) => {
  if (!vscode.lm || typeof vscode.lm.registerLanguageModelChatProvider !== "function") {
    report({ event: "unsupported", vscode: vscode.version });
    return;
  }
  const info = { id: "${LM_FAMILY}", name: "${LM_MODEL_NAME}", family: "${LM_FAMILY}", version: "1", maxInputTokens: 200000, maxOutputTokens: 8192, capabilities: { toolCalling: true } };
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider("${LM_VENDOR}", {
    provideLanguageModelChatInformation: () => [info],
    provideTokenCount: (_model, text) => Math.ceil((typeof text === "string" ? text : textOf(text)).length / 4),
    async provideLanguageModelChatResponse(_model, messages, options, progress, token) {
      const last = messages[messages.length - 1];
      const prompt = lastText(last);
      const result = (last.content || []).find((p) => p instanceof vscode.LanguageModelToolResultPart);
      report({ event: "request", messages: messages.length, tools: (options.tools || []).map((t) => t.name), prompt: prompt.slice(-200), toolResult: Boolean(result), resultId: result ? result.callId : null });
      const say = (t) => progress.report(new vscode.LanguageModelTextPart(t));
      const call = (id, name, input) => progress.report(new vscode.LanguageModelToolCallPart(id, name, input));
      if (result && result.callId === "call_write") {
        call("call_present", "present_files", { filepaths: ["/mnt/user-data/outputs/notes.md"] });
        return;
      }
      if (result) {
        const text = (result.content || []).map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
        say("The workspace ");
        say("has: ");
        say((text.split("\\n").find((l) => l.trim()) || "nothing").trim() + ".");
        return;
      }
      if (prompt.includes("[tool]")) {
        say("Let me look.");
        progress.report(new vscode.LanguageModelToolCallPart("call_lm_ls", "ls", { description: "Look around", path: "/mnt/user-data/workspace" }));
        return;
      }
      if (prompt.includes("[file]")) {
        call("call_write", "write_file", { description: "Write notes", path: "/mnt/user-data/outputs/notes.md", content: "# Notes\\n" });
        return;
      }
      if (prompt.includes("[approve]")) {
        call("call_protected", "write_file", { description: "Add a task", path: "/mnt/user-data/workspace/.vscode/tasks.json", content: "{}\\n" });
        return;
      }
      if (prompt.includes("[hang]")) {
        say("Working on it");
        await new Promise((resolve) => {
          if (token.isCancellationRequested) return resolve();
          token.onCancellationRequested(() => resolve());
        });
        report({ event: "cancelled" });
        throw new vscode.CancellationError();
      }
      if (prompt.includes("[fail]")) throw vscode.LanguageModelError.NoPermissions("the scripted provider refuses this request");
      say("Hello from the scripted ");
      say("vscode.lm model.");
    },
  }));
  report({ event: "registered", vscode: vscode.version });
};
`;

/** Writes the provider extension into `dir` and returns `dir`. */
export function writeLmProviderExtension(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, "extension.js"), extensionJs);
  return dir;
}

export interface LmEvent {
  event: "registered" | "unsupported" | "request" | "cancelled";
  [k: string]: unknown;
}

/** Records what the provider reports; `next` waits on an event (past or future), never on a timer. */
export interface LmRecorder {
  url: string;
  events: LmEvent[];
  waitFor(pred: (e: LmEvent) => boolean, what: string, timeoutMs?: number): Promise<LmEvent>;
  close(): Promise<void>;
}

export async function startLmRecorder(): Promise<LmRecorder> {
  const events: LmEvent[] = [];
  const waiters: Array<{ pred: (e: LmEvent) => boolean; resolve: (e: LmEvent) => void }> = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (d: string) => (body += d));
    req.on("end", () => {
      try {
        const e = JSON.parse(body) as LmEvent;
        events.push(e);
        for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i]!.pred(e)) waiters.splice(i, 1)[0]!.resolve(e);
      } catch {
        /* not ours */
      }
      res.end("ok");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/lm`,
    events,
    waitFor: (pred, what, timeoutMs = 30_000) => {
      const seen = events.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`The scripted vscode.lm provider never reported: ${what}.`)), timeoutMs);
        waiters.push({ pred, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    close: async () => {
      server.close();
      await once(server, "close");
    },
  };
}
