/**
 * Token counts for what a model would be sent (summarization's trigger, keep-by-tokens and the
 * trim of what is summarized). OpenAI models js-tiktoken knows are counted with their real
 * encoding; every other model with DeerFlow/LangChain's approximation, 4 characters a token
 * (`countTokensApproximately`). Which one a model gets is logged once per model.
 *
 * Memory: an encoder holds its whole rank table (o200k_base is a few MB once parsed), so each
 * encoding is built at most once per process, on first use, and shared by every model using it.
 */
import { Tiktoken, getEncodingNameForModel, type TiktokenEncoding, type TiktokenModel } from "js-tiktoken/lite";
import { countTokensApproximately } from "langchain";
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { contentText } from "../middlewares/shared/messages.js";
import { diagnostics } from "../diagnostics.js";

export type TokenCounter = (messages: BaseMessage[]) => number;

/** Encodings we load; the other js-tiktoken encodings belong to models no endpoint serves any more. */
type LoadedEncoding = "o200k_base" | "cl100k_base";

/**
 * Model-family prefixes for provider ids js-tiktoken does not list verbatim (a dated snapshot,
 * `gpt-4.1-mini-2025-xx`, a deployment alias `openai/gpt-4o`). Longest-first order matters.
 */
const FAMILIES: Array<[RegExp, LoadedEncoding]> = [
  [/^(gpt-5|gpt-4\.5|gpt-4\.1|gpt-4o|chatgpt-4o|o1|o3|o4)([-.:]|$)/, "o200k_base"],
  [/^(gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada-002)([-.:]|$)/, "cl100k_base"],
];

const encoders = new Map<LoadedEncoding, Tiktoken>();
const logged = new Set<string>();

async function ranksOf(name: LoadedEncoding) {
  // Imported on first use only: a process that never counts OpenAI tokens never parses a table.
  return name === "o200k_base" ? (await import("js-tiktoken/ranks/o200k_base")).default : (await import("js-tiktoken/ranks/cl100k_base")).default;
}

/** The encoding for a provider model id, or undefined when it is not an OpenAI model we know. */
export function encodingNameFor(model: string): LoadedEncoding | undefined {
  const id = model.includes("/") ? model.slice(model.lastIndexOf("/") + 1) : model;
  let name: TiktokenEncoding | undefined;
  try {
    name = getEncodingNameForModel(id as TiktokenModel);
  } catch {
    name = FAMILIES.find(([re]) => re.test(id))?.[1];
  }
  return name === "o200k_base" || name === "cl100k_base" ? name : undefined;
}

/** The text of a message as the provider sees it, roughly: content, tool calls, tool call id. */
function messageText(m: BaseMessage): string {
  let text = contentText(m.content);
  if (AIMessage.isInstance(m) && m.tool_calls && m.tool_calls.length > 0) text += JSON.stringify(m.tool_calls);
  if (ToolMessage.isInstance(m)) text += m.tool_call_id;
  return text;
}

/**
 * The counter for a model: tiktoken for a known OpenAI model, else the chars/4 estimate. Async
 * only to load the rank table once; the counter itself is synchronous.
 */
export async function tokenCounterFor(model: string): Promise<TokenCounter> {
  const name = encodingNameFor(model);
  if (!name) {
    logOnce(model, `token counts for model "${model}" are estimated (4 characters a token): no tokenizer is known for it`);
    return (messages) => countTokensApproximately(messages);
  }
  let enc = encoders.get(name);
  if (!enc) {
    enc = new Tiktoken(await ranksOf(name));
    encoders.set(name, enc);
  }
  const encoder = enc;
  const counted = countsOf(name);
  logOnce(model, `token counts for model "${model}" use its tokenizer (js-tiktoken ${name})`);
  // Per message: the text's tokens plus the chat format's few tokens of framing (role, separators).
  // A message is encoded once: the trigger is checked before every model call over the whole
  // history, whose message objects live on through the run.
  return (messages) =>
    messages.reduce((sum, m) => {
      let n = counted.get(m);
      if (n === undefined) {
        n = encoder.encode(messageText(m), [], []).length + 4;
        counted.set(m, n);
      }
      return sum + n;
    }, 0);
}

/** Per encoding: the token count of each message object seen (weak: gone with the message). */
const countCaches = new Map<LoadedEncoding, WeakMap<BaseMessage, number>>();

function countsOf(name: LoadedEncoding): WeakMap<BaseMessage, number> {
  let cache = countCaches.get(name);
  if (!cache) {
    cache = new WeakMap();
    countCaches.set(name, cache);
  }
  return cache;
}

function logOnce(model: string, line: string): void {
  if (logged.has(model)) return;
  logged.add(model);
  diagnostics.info(line);
}
