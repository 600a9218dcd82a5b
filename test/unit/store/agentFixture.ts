import type { Db } from "../../../extension/harness/store/sqlite/types.js";
// A small createAgent for the checkpointer end-to-end test (and its child process): one tool, and a
// middleware with a custom-reducer state key that also replaces and removes messages by id.
import { AIMessage, HumanMessage, createAgent, createMiddleware, tool } from "langchain";
import { RemoveMessage } from "@langchain/core/messages";
import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import type { RecordedRequest, ScriptedReply } from "../../fixtures/modelServer.js";

/** order-preserving de-duplicating union, like DeerFlow's artifacts reducer */
const mergeNotes = (a: string[] | undefined, b: string[] | undefined): string[] => [...new Set([...(a ?? []), ...(b ?? [])])];

const notesMiddleware = createMiddleware({
  name: "NotesMiddleware",
  stateSchema: new StateSchema({
    notes: new ReducedValue(z.array(z.string()).default(() => []), { reducer: mergeNotes }),
  }),
  beforeAgent: (state) => {
    const last = state.messages.at(-1);
    const first = state.messages[0];
    if (last && HumanMessage.isInstance(last) && last.text === "forget the first" && first?.id) {
      return { messages: [new RemoveMessage({ id: first.id })] };
    }
    return undefined;
  },
  beforeModel: (state) => ({ notes: [`seen ${state.messages.length}`] }),
  afterModel: (state) => {
    const last = state.messages.at(-1);
    if (last && AIMessage.isInstance(last) && last.text.startsWith("REPLACE")) {
      return { messages: [new AIMessage({ id: last.id!, content: "replaced by id" })] };
    }
    return undefined;
  },
});

const echo = tool(({ text }: { text: string }) => Promise.resolve(`echo: ${text}`), {
  name: "echo",
  description: "Echo the text back",
  schema: z.object({ text: z.string() }),
});

export function buildAgent(baseURL: string, checkpointer: BaseCheckpointSaver) {
  return createAgent({
    model: new ChatOpenAI({ model: "fake", apiKey: "test", configuration: { baseURL }, maxRetries: 0 }),
    tools: [echo],
    middleware: [notesMiddleware] as const,
    checkpointer,
  });
}

/** The model: answers from the last message it sees. */
export function scriptReply(req: RecordedRequest): ScriptedReply {
  const last = req.body?.messages?.at(-1);
  const text = typeof last?.content === "string" ? last.content : "";
  if (last?.role === "tool") return { content: `tool said ${text}` };
  if (text === "tool") return { toolCalls: [{ name: "echo", args: { text: "hi" } }] };
  if (text === "two tools") return { toolCalls: [{ name: "echo", args: { text: "one" } }, { name: "echo", args: { text: "two" } }] };
  if (text === "replace") return { content: "REPLACE this answer" };
  return { content: `answer to ${text}` };
}

const serde = new JsonPlusSerializer();
/** The serialized form of a state: what "identical state" means across savers and processes. */
export async function canonical(value: unknown): Promise<unknown> {
  const [, bytes] = await serde.dumpsTyped(value);
  return JSON.parse(new TextDecoder().decode(bytes));
}

/** Reads a checkpoint row's deflate dictionary from the database, for tests that inspect rows directly. */
export function dictionaryIn(db: Pick<Db, "prepare">): (hash: string) => Uint8Array | undefined {
  return (hash) => db.prepare<[string], { value: Uint8Array }>("SELECT value FROM checkpoint_values WHERE hash = ?").get(hash)?.value;
}
