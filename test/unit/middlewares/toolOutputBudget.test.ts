// ToolOutputBudgetMiddleware through the real agent graph (agent/graph/build.ts): an oversized result is saved under the
// thread's outputs/.tool-results and the model gets the synopsis + pointer (virtual paths only);
// the threshold is exact; read_file is exempt; Commands keep their other keys; no storage → truncation.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { tool, ToolMessage } from "langchain";
import { Command } from "@langchain/langgraph";
import type { ToolRuntime } from "langchain";
import { z } from "zod";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { fallbackTruncate, DEFAULT_TOOL_OUTPUT_BUDGET, toolOutputBudgetMiddleware } from "../../../extension/harness/middlewares/toolOutputBudget.js";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { nonSystem, buildTestAgent, streamTurn, text } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const lines = (n: number, width = 60) => Array.from({ length: n }, (_, i) => `line ${i} `.padEnd(width, "x")).join("\n");
/** A tool that returns exactly the text it is told to (by size), under a given name. */
const sized = (name: string) =>
  tool(({ size }: { size: number }) => Promise.resolve("y".repeat(size)), { name, description: "Return text", schema: z.object({ size: z.number() }) });
const bashLike = tool(({ n }: { n: number }) => Promise.resolve(lines(n)), { name: "bash", description: "Run", schema: z.object({ n: z.number() }) });

/** A real thread's folders; `outputsBlocked` puts a file where its outputs folder should be. */
function setup(tools: Parameters<typeof buildTestAgent>[0]["tools"], outputsBlocked = false) {
  const dirs = ensureThreadDirs(mkdtempSync(join(tmpdir(), "deerflow-budget-")), "budget");
  if (outputsBlocked) {
    rmSync(dirs.outputs, { recursive: true });
    writeFileSync(dirs.outputs, "a file where the outputs dir should be");
  }
  const outputs = dirs.outputs;
  return { outputs, agent: buildTestAgent({ baseURL: server.url, middleware: [toolOutputBudgetMiddleware(dirs)], tools: tools ?? [] }) };
}

test("a bash result over 12000 chars is saved as .tool-results/bash-<id>.log; the model sees the synopsis and pointer", async () => {
  const { outputs, agent } = setup([bashLike]);
  server.setScript([{ toolCalls: [{ name: "bash", args: { n: 400 }, id: "big-1" }] }, { content: "done" }]);
  const first = server.requests.length;
  const out = await streamTurn(agent, "budget-1", "run it");
  assert.equal(out.error, undefined, String(out.error));
  const files = readdirSync(join(outputs, ".tool-results"));
  assert.equal(files.length, 1);
  assert.match(files[0]!, /^bash-[0-9a-f]{12}\.log$/);
  const full = lines(400);
  assert.equal(readFileSync(join(outputs, ".tool-results", files[0]!), "utf8"), full, "the whole output is on disk");
  const vpath = `/mnt/user-data/outputs/.tool-results/${files[0]}`;
  const seen = text(nonSystem(server.requests[first + 1]!.body!.messages).at(-1));
  assert.ok(seen.startsWith(`[Full bash output saved to ${vpath} (${full.length} chars, ~${Math.floor(full.length / 4)} tokens).]`), seen.slice(0, 200));
  assert.match(seen, /Preview kind: text/);
  assert.match(seen, /read_file/);
  assert.match(seen, /start_line and end_line/);
  assert.ok(seen.length < 6000, `synopsis is compact (${seen.length})`);
  assert.ok(!JSON.stringify(server.requests[first + 1]!.body).includes(outputs), "no host path reaches the model");
  const persisted = out.messages.find((m) => ToolMessage.isInstance(m))!;
  assert.equal(persisted.text, seen, "the state holds the synopsis, not 24 KB");
});

test("the threshold is exact: 12000 passes, 12001 is externalised (unknown tools as .txt); read_file is exempt", async () => {
  const { outputs, agent } = setup([sized("fetch_data"), sized("read_file")]);
  server.setScript([
    { toolCalls: [{ name: "fetch_data", args: { size: 12000 }, id: "at" }, { name: "fetch_data", args: { size: 12001 }, id: "over" }, { name: "read_file", args: { size: 20000 }, id: "rf" }] },
    { content: "done" },
  ]);
  const first = server.requests.length;
  const out = await streamTurn(agent, "budget-2", "go");
  assert.equal(out.error, undefined, String(out.error));
  const results = nonSystem(server.requests[first + 1]!.body!.messages).filter((m) => m.role === "tool");
  const byId = new Map(results.map((m) => [m.tool_call_id, text(m)]));
  assert.equal(byId.get("at")!.length, 12000);
  assert.match(byId.get("over")!, /^\[Full fetch_data output saved to \/mnt\/user-data\/outputs\/\.tool-results\/fetch_data-[0-9a-f]{12}\.txt /);
  assert.equal(byId.get("rf")!.length, 20000, "read_file is never externalised: re-reading must not loop");
  assert.equal(readdirSync(join(outputs, ".tool-results")).length, 1);
});

test("a JSON result gets a JSON synopsis", async () => {
  const json = tool(() => Promise.resolve(JSON.stringify({ items: Array.from({ length: 500 }, (_, i) => ({ id: i, name: `item ${i}` })), total: 500 })), {
    name: "api_call",
    description: "json",
    schema: z.object({}),
  });
  const { agent } = setup([json]);
  server.setScript([{ toolCalls: [{ name: "api_call", args: {}, id: "j" }] }, { content: "done" }]);
  const first = server.requests.length;
  await streamTurn(agent, "budget-3", "go");
  const seen = text(nonSystem(server.requests[first + 1]!.body!.messages).at(-1));
  assert.match(seen, /Preview kind: json/);
  assert.match(seen, /\$\.items: array\(500\)/);
  assert.match(seen, /\$\.total: number/);
});

test("a Command result keeps its other update keys (artifacts) while its ToolMessage is budgeted", async () => {
  const present = tool(
    (_: Record<string, never>, runtime: ToolRuntime) =>
      new Command({
        update: {
          artifacts: ["/mnt/user-data/outputs/report.md"],
          messages: [new ToolMessage({ content: lines(400), tool_call_id: runtime.toolCallId, name: "presenter" })],
        },
      }),
    { name: "presenter", description: "present", schema: z.object({}) },
  );
  const { agent } = setup([present]);
  server.setScript([{ toolCalls: [{ name: "presenter", args: {}, id: "p" }] }, { content: "done" }]);
  const out = await streamTurn(agent, "budget-4", "go");
  assert.equal(out.error, undefined, String(out.error));
  assert.deepEqual(out.values.artifacts, ["/mnt/user-data/outputs/report.md"]);
  assert.match(out.messages.find((m) => ToolMessage.isInstance(m))!.text, /^\[Full presenter output saved to /);
});

test("no storage (outputs cannot be written): head + tail within 30000 chars with DeerFlow's marker", async () => {
  const { agent } = setup([bashLike], true);
  server.setScript([{ toolCalls: [{ name: "bash", args: { n: 1000 }, id: "huge" }] }, { content: "done" }]);
  const first = server.requests.length;
  await streamTurn(agent, "budget-5", "go");
  const seen = text(nonSystem(server.requests[first + 1]!.body!.messages).at(-1));
  assert.ok(seen.length <= 30000, String(seen.length));
  assert.match(seen, /chars omitted from bash output\. Persistent storage unavailable/);
  assert.ok(seen.startsWith("line 0 "));
  assert.ok(seen.endsWith(lines(1000).slice(-60)));
});

test("fallbackTruncate never exceeds the cap and snaps to lines", () => {
  const o = { ...DEFAULT_TOOL_OUTPUT_BUDGET, fallbackMaxChars: 2000, fallbackHeadChars: 1000, fallbackTailChars: 500 };
  const t = fallbackTruncate(lines(200), "bash", o);
  assert.ok(t.length <= 2000);
  assert.match(t, /^line 0 x+\n/);
  assert.equal(fallbackTruncate("short", "bash", o), "short");
});
