/**
 * `npm run demo`: the product, headless, on a sample workspace.
 *
 * With OPENAI_BASE_URL (and OPENAI_API_KEY, OPENAI_MODEL) set, the agent talks to that endpoint.
 * Without them — a fresh machine has no model — a scripted OpenAI-compatible server on 127.0.0.1
 * plays the model, so the whole path (CLI → agent → sandbox tools → SQLite) still runs for real.
 *
 *   npm run demo [-- --workspace DIR] [-- --prompt TEXT]
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createInterface } from "node:readline";
import { startModelServer } from "../test/fixtures/modelServer.js";
import { tour } from "./sampleTour.js";

const { values } = parseArgs({ options: { workspace: { type: "string" }, prompt: { type: "string" } } });
const workspace = values.workspace ? resolve(values.workspace) : mkdtempSync(join(tmpdir(), "deerflow-demo-"));
if (!values.workspace) cpSync(resolve("samples/hello-workspace"), workspace, { recursive: true });
const dataDir = join(workspace, "..", `${workspace.split("/").at(-1)}-data`);
const prompt = values.prompt ?? "Read this project and write a short summary to /mnt/user-data/outputs/summary.md, then present it.";

const real = Boolean(process.env.OPENAI_BASE_URL);
const server = real
  ? undefined
  : await startModelServer({ script: tour, chunkDelayMs: 15 });

const args = ["dist/cli.js", "run", "--workspace", workspace, "--data-dir", dataDir, "--prompt", prompt];
if (server) args.push("--base-url", server.url, "--model", "scripted-demo");
process.stdout.write(`DeerFlow demo\n  workspace: ${workspace}\n  model:     ${real ? process.env.OPENAI_BASE_URL : `scripted model server ${server?.url}`}\n\n`);

const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
let streaming = false;
const seenCalls = new Set<string>();
let threadId = "";
for await (const raw of createInterface({ input: child.stdout })) {
  const line = JSON.parse(raw) as { event: string; data: any };
  if (line.event === "messages" && line.data[0]?.type === "ai" && line.data[0].content) {
    if (!streaming) process.stdout.write("assistant> ");
    streaming = true;
    process.stdout.write(line.data[0].content);
    continue;
  }
  if (streaming) process.stdout.write("\n");
  streaming = false;
  if (line.event === "updates") {
    for (const [node, update] of Object.entries(line.data as Record<string, any>)) {
      for (const m of ([] as any[]).concat(update ?? []).flatMap((u) => u?.messages ?? [])) {
        // A middleware may re-emit the AI message (usage stamping): show each call once.
        for (const c of m.tool_calls ?? []) {
          if (seenCalls.has(c.id)) continue;
          seenCalls.add(c.id);
          process.stdout.write(`tool call> ${c.name} ${JSON.stringify(c.args)}\n`);
        }
        if (m.type === "tool") process.stdout.write(`tool result (${m.name})> ${String(m.content).split("\n")[0]}\n`);
      }
      void node;
    }
  } else if (line.event === "end") {
    threadId = line.data.thread_id;
    process.stdout.write(`\nrun ${line.data.status}${line.data.error ? `: ${line.data.error}` : ""}\n`);
  } else if (line.event === "error") {
    process.stdout.write(`error> ${line.data.message}\n`);
  }
}
const code = await new Promise<number>((r) => child.on("close", (c) => r(c ?? 1)));
await server?.close();
if (threadId) {
  process.stdout.write(`\nthread:    ${threadId}\noutputs:   ${join(workspace, ".deerflow", "threads", threadId, "outputs")}\n`);
  process.stdout.write(`state:     node dist/cli.js state --workspace ${workspace} --data-dir ${dataDir} --thread ${threadId}\n`);
}
process.exitCode = code;
