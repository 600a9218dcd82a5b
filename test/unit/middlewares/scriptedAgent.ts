// Shared by the tests of the request-shaping and error-handling middlewares: a real createAgent
// with ThreadState and the middlewares under test, against the scripted model server. What the
// model saw is `server.requests[i].body.messages`; runs go through `agent.graph.stream` as runTurn does.
import { createAgent, HumanMessage } from "langchain";
import type { AgentMiddleware } from "langchain";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseMessage } from "@langchain/core/messages";
import { ThreadStateSchema } from "../../../extension/harness/state/threadState.js";
import type { RequestMessage } from "../../fixtures/modelServer.js";

export function scriptedModel(baseURL: string) {
  return new ChatOpenAI({ model: "scripted", apiKey: "test", configuration: { baseURL }, maxRetries: 0, streamUsage: true });
}

export function scriptedAgent(opts: { baseURL: string; middleware: AgentMiddleware[]; tools?: StructuredToolInterface[]; checkpointer?: MemorySaver }) {
  return createAgent({
    model: scriptedModel(opts.baseURL),
    tools: opts.tools ?? [],
    systemPrompt: "You are DeerFlow.",
    stateSchema: ThreadStateSchema,
    middleware: opts.middleware,
    checkpointer: opts.checkpointer ?? new MemorySaver(),
  });
}

export type ScriptedAgent = ReturnType<typeof scriptedAgent>;

export interface TurnOutcome {
  messages: BaseMessage[];
  values: Record<string, any>;
  custom: Array<Record<string, any>>;
  error?: unknown;
}

/** One turn, streamed like runTurn (with `messages`, so the model streams); the error is returned, not thrown. */
export async function streamTurn(agent: ScriptedAgent, threadId: string, input: HumanMessage | string | BaseMessage[]): Promise<TurnOutcome> {
  const config = { configurable: { thread_id: threadId } };
  const messages = Array.isArray(input) ? input : [typeof input === "string" ? new HumanMessage(input) : input];
  const custom: Array<Record<string, any>> = [];
  let error: unknown;
  try {
    const stream = await agent.graph.stream({ messages }, { ...config, streamMode: ["updates", "messages", "custom"] as const });
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

/** The text of a recorded request message (string content or its text blocks). */
export function text(m: RequestMessage | undefined): string {
  if (!m) return "";
  if (typeof m.content === "string") return m.content;
  return (m.content ?? []).map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");
}

export function nonSystem(messages: RequestMessage[] | undefined): RequestMessage[] {
  return (messages ?? []).filter((m) => m.role !== "system");
}

/** Walk `.cause` (langchain wraps middleware errors) to the first error with a string `code`. */
export function findCoded<T extends Error = Error & { code: string }>(err: unknown): T | undefined {
  for (let e = err, i = 0; e instanceof Error && i < 20; e = e.cause, i++) {
    if (typeof (e as { code?: unknown }).code === "string") return e as T;
  }
  return undefined;
}
