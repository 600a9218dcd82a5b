/**
 * Long-term memory through the real CLI with the scripted model server (the memory*.test.ts
 * files): the extraction request is told apart by its system prompt and answered with a scripted
 * update; every other request gets the lead agent's scripted answer.
 */
import { randomUUID } from "node:crypto";
import type { ModelServer, RecordedRequest, ScriptedReply, ScriptFn } from "../../fixtures/modelServer.js";
import { textOf } from "../../fixtures/requests.js";
import { MEMORY_UPDATE_PROMPT_HEAD } from "../../../extension/harness/memory/extract.js";
import { join } from "node:path";
import { runCli, scriptedRunArgs, type Dirs } from "./cli.js";
import type { HarnessProcess } from "./server.js";

export const isExtraction = (req: RecordedRequest): boolean =>
  (req.body?.messages ?? []).some((m) => m.role === "system" && textOf(m).startsWith(MEMORY_UPDATE_PROMPT_HEAD));
export const extractionInput = (req: RecordedRequest): string => textOf((req.body?.messages ?? []).find((m) => m.role === "user"));
/** The conversation part of an extraction's input (the current memory before it is left out). */
export const conversationOf = (input: string): string => input.slice(input.indexOf("<conversation>"));
/** The current-memory part of an extraction's input. */
export const currentMemoryOf = (input: string): string => input.slice(input.indexOf("<current_memory>"), input.indexOf("</current_memory>"));

/** The hidden memory reminder a request carries, or undefined. */
export function memoryBlock(req: RecordedRequest): string | undefined {
  const m = (req.body?.messages ?? []).find((x) => x.role === "user" && x.name === "dynamic_context" && textOf(x).includes("<memory>"));
  return m ? textOf(m) : undefined;
}

/** A scripted extraction answer: new facts (category context and confidence 0.95 unless given), no removals. */
export const update = (facts: Array<{ content: string; confidence?: number | string; category?: string }>, extra: Record<string, unknown> = {}): ScriptedReply => ({
  content: JSON.stringify({ newFacts: facts.map((f) => ({ category: "context", confidence: 0.95, ...f })), factsToRemove: [], ...extra }),
});

/**
 * The lead's replies in order (`lead`), and the extraction's answer as a function of its input
 * (the conversation it was given), so a test can tell which thread's conversation it processes.
 */
export function script(lead: ScriptedReply[], extraction: (conversation: string) => ScriptedReply): ScriptFn {
  let i = 0;
  return (req) => (isExtraction(req) ? extraction(conversationOf(extractionInput(req))) : lead[i++]);
}

/** One `deerflow run` with memory on; the requests it made, split into the lead's and the extractions. */
export async function memoryRun(server: ModelServer, dirs: Dirs, s: ScriptFn, prompt: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  server.setScript(s);
  const first = server.requests.length;
  const threadId = extra.includes("--thread") ? extra[extra.indexOf("--thread") + 1]! : randomUUID();
  const args = extra.includes("--thread") ? extra : ["--thread", threadId, ...extra];
  const base = scriptedRunArgs(server, dirs, prompt);
  // An upload-only turn (prompt ""): no --prompt at all (scriptedRunArgs ends with it).
  const runArgs = prompt === "" ? base.slice(0, -2) : base;
  const r = await runCli([...runArgs, ...args], env, { memory: true });
  const requests = server.requests.slice(first);
  return { ...r, threadId, requests, lead: requests.filter((q) => !isExtraction(q)), extractions: requests.filter(isExtraction), end: r.lines.at(-1) };
}

export interface ShownFact {
  id: string;
  content: string;
  source: string;
  confidence: number;
  scope?: string;
  workspace?: string;
}

/** `deerflow memory show` (with `--workspace`: what that folder's threads are given). */
export async function showMemory(dirs: Dirs, workspace?: string) {
  const r = await runCli(["memory", "show", "--data-dir", dirs.dataDir, ...(workspace ? ["--workspace", workspace] : [])]);
  return {
    ...r,
    doc:
      r.code === 0
        ? (JSON.parse(r.stdout) as { facts: ShownFact[]; user: Record<string, { summary: string }>; workspaces?: Record<string, { user: Record<string, { summary: string }> }> })
        : undefined,
  };
}

export const memoryJson = (d: Dirs): string => join(d.dataDir, "memory", "memory.json");

/** A run through the harness server (the panel's path); resolves once its `end` is journaled. */
export async function serverRun(server: ModelServer, h: HarnessProcess, workspace: string, s: ScriptFn, prompt: string) {
  server.setScript(s);
  const first = server.requests.length;
  const threadId = (await h.request("threads/create", { workspaceFolder: workspace })).thread_id;
  const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: workspace, threadId, afterSeq: 0 });
  const started = await h.request("runs/start", { workspaceFolder: workspace, threadId, prompt });
  await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === started.run_id);
  await h.request("events/unsubscribe", { subscriptionId });
  return { threadId, requests: () => server.requests.slice(first) };
}
