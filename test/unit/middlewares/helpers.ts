// Shared by the middleware tests: the product's agent graph (agent/graph/build.ts) with ThreadState,
// the middlewares under test and a checkpointer, against the scripted model server. What the model saw is
// `server.requests[i].body.messages`; runs go through `agent.graph`, as runTurn does.
import { HumanMessage } from "langchain";
import type { AgentMiddleware } from "langchain";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseMessage } from "@langchain/core/messages";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadStateFields } from "../../../extension/harness/state/threadState.js";
import { buildAgentGraph } from "../../../extension/harness/agent/graph/build.js";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { createBlobStore } from "../../../extension/harness/store/blobs.js";

export const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
export const PNG = Buffer.from(PNG_B64, "base64");

export function chatModel(baseURL: string, model = "scripted") {
  return new ChatOpenAI({ model, apiKey: "test", configuration: { baseURL }, maxRetries: 0, streamUsage: true });
}

export function threadFixture(threadId = "t1") {
  const ws = mkdtempSync(join(tmpdir(), "deerflow-mw-"));
  const dirs = ensureThreadDirs(ws, threadId);
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), "deerflow-mw-db-")), "harness.db"));
  return { ws, dirs, db, blobs: createBlobStore(db) };
}

export function buildTestAgent(opts: { baseURL: string; middleware: AgentMiddleware[]; tools?: StructuredToolInterface[]; checkpointer?: MemorySaver }) {
  return buildAgentGraph({
    model: chatModel(opts.baseURL),
    tools: opts.tools ?? [],
    systemPrompt: "You are DeerFlow.",
    stateFields: threadStateFields,
    middleware: opts.middleware,
    checkpointer: opts.checkpointer ?? new MemorySaver(),
  });
}

export type TestAgent = ReturnType<typeof buildTestAgent>;

/** One turn through `agent.graph` (as runTurn does), returning the final state values. */
export async function turn(agent: TestAgent, threadId: string, human: HumanMessage | string): Promise<Record<string, any> & { messages: BaseMessage[] }> {
  const config = { configurable: { thread_id: threadId } };
  const msg = typeof human === "string" ? new HumanMessage(human) : human;
  await agent.graph.invoke({ messages: [msg] }, { ...config, recursionLimit: agent.recursionLimit });
  const snap = await agent.graph.getState(config);
  return snap.values as Record<string, any> & { messages: BaseMessage[] };
}

export interface TurnOutcome {
  messages: BaseMessage[];
  values: Record<string, any>;
  custom: Array<Record<string, any>>;
  error?: unknown;
}

/** One turn, streamed like runTurn (with `messages`, so the model streams); the error is returned, not thrown. */
export async function streamTurn(agent: TestAgent, threadId: string, input: HumanMessage | string | BaseMessage[]): Promise<TurnOutcome> {
  const config = { configurable: { thread_id: threadId } };
  const messages = Array.isArray(input) ? input : [typeof input === "string" ? new HumanMessage(input) : input];
  const custom: Array<Record<string, any>> = [];
  let error: unknown;
  try {
    // The recursion limit the graph derives from its turn budget, as runTurn passes it.
    const stream = await agent.graph.stream({ messages }, { ...config, recursionLimit: agent.recursionLimit, streamMode: ["updates", "messages", "custom"] as const });
    for await (const item of stream) {
      const [mode, payload] = item as [string, unknown];
      if (mode === "custom") custom.push(payload as Record<string, any>);
    }
  } catch (e) {
    error = e;
  }
  const snap = await agent.graph.getState(config);
  const values = snap.values as Record<string, any>;
  return { messages: values.messages as BaseMessage[], values, custom, ...(error !== undefined ? { error } : {}) };
}

export { textOf as text, nonSystem } from "../../fixtures/requests.js";

/** Walk `.cause` (langchain wraps middleware errors) to the first error with a string `code`. */
export function findCoded<T extends Error = Error & { code: string }>(err: unknown): T | undefined {
  for (let e = err, i = 0; e instanceof Error && i < 20; e = e.cause, i++) {
    if (typeof (e as { code?: unknown }).code === "string") return e as T;
  }
  return undefined;
}
