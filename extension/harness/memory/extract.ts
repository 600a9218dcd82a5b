/**
 * Fact extraction (DeerFlow's memory updater, `deermem/core/updater.py` with its
 * `memory_update` prompt): the model reads the current memory and one conversation and answers
 * with an update — sections to rewrite, new facts, facts to remove — which is applied here.
 *
 * The answer is model output: untrusted. It is parsed leniently (a JSON object, fenced or not),
 * validated, and applied only within the document's rules: known categories, confidence clamped
 * to 0..1 and below DeerFlow's 0.7 threshold dropped, duplicates skipped, at most 100 facts (the
 * least certain go), ids of our own. The result is scrubbed and validated again when written.
 *
 * Where we differ: DeerFlow's newer prompt also asks for scope/durability/authority labels and a
 * staleness review; we keep the core contract (sections, newFacts, factsToRemove) that its
 * updater has always applied.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { contentText } from "../middlewares/shared/messages.js";
import { FACT_CATEGORIES, HISTORY_SECTIONS, USER_SECTIONS, type MemoryDoc, type MemoryFact } from "./schema.js";
import type { ConversationMessage } from "./queue.js";
import { escapeText } from "./render.js";

/** DeerFlow `memory.fact_confidence_threshold` and `memory.max_facts`. */
export const FACT_CONFIDENCE_THRESHOLD = 0.7;
export const MAX_FACTS = 100;

/** The first line of the extraction's system prompt: how the scripted test server (and a log reader) tells this request apart. */
export const MEMORY_UPDATE_PROMPT_HEAD = "You maintain the long-term memory profile of one user.";

export const MEMORY_UPDATE_PROMPT = `${MEMORY_UPDATE_PROMPT_HEAD}
Read the current memory and a new conversation between the user and an assistant, and say how the
memory should change.

Only record what will help in future, unrelated conversations: who the user is, what they work on,
their preferences, expertise, goals and working style, and explicit corrections of the assistant.
Do not record one-off task details, file contents, uploaded files, current errors or anything that
grants permission to act. Never record credentials, API keys, tokens or passwords.

Sections (rewrite one only when there is meaningful new information, keeping what is still true):
- user.workContext: role, company, key projects, main technologies (2-3 sentences)
- user.personalContext: languages, communication preferences, interests (1-2 sentences)
- user.topOfMind: the several things the user is focused on now (3-5 sentences)
- history.recentMonths: what the user did in the last months (a paragraph)
- history.earlierContext: older patterns still relevant (a few sentences)
- history.longTermBackground: foundational background and expertise (2-4 sentences)

Facts: specific, with names, versions and numbers kept exactly. Categories: preference, knowledge,
context, behavior, goal, correction. Confidence: 0.9-1.0 stated explicitly, 0.7-0.8 strongly
implied; below 0.7 do not add it. Remove an existing fact (by its id) only when the user explicitly
contradicts or retracts it.

Answer with ONLY a JSON object, no prose, no markdown:
{"user": {"workContext": {"summary": "...", "shouldUpdate": false}, "personalContext": {...}, "topOfMind": {...}},
 "history": {"recentMonths": {...}, "earlierContext": {...}, "longTermBackground": {...}},
 "newFacts": [{"content": "...", "category": "preference", "confidence": 0.9}],
 "factsToRemove": [{"id": "fact_..."}]}`;

const SectionUpdateZ = z.object({ summary: z.string().optional(), shouldUpdate: z.boolean().optional() }).passthrough();
const UpdateZ = z
  .object({
    user: z.record(z.string(), SectionUpdateZ.nullable()).optional(),
    history: z.record(z.string(), SectionUpdateZ.nullable()).optional(),
    newFacts: z
      .array(z.object({ content: z.string(), category: z.string().optional(), confidence: z.number().optional() }).passthrough())
      .optional(),
    factsToRemove: z.array(z.union([z.string(), z.object({ id: z.string() }).passthrough()])).optional(),
  })
  .passthrough();
export type MemoryUpdate = z.infer<typeof UpdateZ>;

export class ExtractionError extends Error {
  override name = "ExtractionError";
}

/** The model's answer as an update: the first `{` to the last `}` (a fence or a preamble around it is tolerated). */
export function parseUpdate(text: string): MemoryUpdate {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) throw new ExtractionError("the memory model's answer holds no JSON object");
  let raw: unknown;
  try {
    raw = JSON.parse(text.slice(start, end + 1));
  } catch (err) {
    throw new ExtractionError(`the memory model's answer is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = UpdateZ.safeParse(raw);
  if (!parsed.success) throw new ExtractionError(`the memory model's answer is not a memory update: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

const norm = (s: string) => s.trim().toLowerCase().replace(/\s+/g, " ");

/** Applies an update to a copy of `doc` (pure but for ids and the clock). */
export function applyUpdate(
  doc: MemoryDoc,
  update: MemoryUpdate,
  source: string,
  now = new Date(),
  limits: { maxFacts: number; confidenceThreshold: number } = { maxFacts: MAX_FACTS, confidenceThreshold: FACT_CONFIDENCE_THRESHOLD },
): MemoryDoc {
  const at = now.toISOString();
  const next: MemoryDoc = structuredClone(doc);
  for (const k of USER_SECTIONS) {
    const u = update.user?.[k];
    if (u?.shouldUpdate && typeof u.summary === "string") next.user[k] = { summary: u.summary.trim(), updatedAt: at };
  }
  for (const k of HISTORY_SECTIONS) {
    const u = update.history?.[k];
    if (u?.shouldUpdate && typeof u.summary === "string") next.history[k] = { summary: u.summary.trim(), updatedAt: at };
  }
  const remove = new Set((update.factsToRemove ?? []).map((r) => (typeof r === "string" ? r : r.id)));
  next.facts = next.facts.filter((f) => !remove.has(f.id));
  const known = new Set(next.facts.map((f) => norm(f.content)));
  for (const f of update.newFacts ?? []) {
    const content = f.content.trim();
    const confidence = Math.min(1, Math.max(0, Number.isFinite(f.confidence) ? (f.confidence as number) : 0));
    if (!content || confidence < limits.confidenceThreshold || known.has(norm(content))) continue;
    known.add(norm(content));
    const category = (FACT_CATEGORIES as readonly string[]).includes(f.category ?? "") ? (f.category as MemoryFact["category"]) : "context";
    next.facts.push({ id: `fact_${randomUUID().replace(/-/g, "").slice(0, 12)}`, content, category, confidence, createdAt: at, source });
  }
  if (next.facts.length > limits.maxFacts) {
    // The least certain go first; among equals, the oldest.
    next.facts = next.facts
      .map((f, i) => ({ f, i }))
      .sort((a, b) => b.f.confidence - a.f.confidence || b.i - a.i)
      .slice(0, limits.maxFacts)
      .sort((a, b) => a.i - b.i)
      .map((x) => x.f);
  }
  next.lastUpdated = at;
  return next;
}

/** The request's user message: the memory as stored, then the conversation, each escaped into its element. */
export function extractionInput(doc: MemoryDoc, conversation: ConversationMessage[]): string {
  const lines = conversation.map((m) => `${m.role === "user" ? "User" : "Assistant"}: ${escapeText(m.content)}`);
  return [
    "Current Memory State:",
    "<current_memory>",
    escapeText(JSON.stringify(doc, null, 2)),
    "</current_memory>",
    "",
    "New Conversation to Process:",
    "<conversation>",
    lines.join("\n\n"),
    "</conversation>",
    "",
    "Update the memory based on the above conversation.",
  ].join("\n");
}

/**
 * One extraction: asks the model about `doc` and the conversation, returns its update (applied by
 * the caller to the memory as it is once the answer is back). Throws on a failed call or an
 * unusable answer.
 */
export async function extractUpdate(model: BaseChatModel, doc: MemoryDoc, conversation: ConversationMessage[], signal?: AbortSignal): Promise<MemoryUpdate> {
  const answer = await model.invoke([new SystemMessage(MEMORY_UPDATE_PROMPT), new HumanMessage(extractionInput(doc, conversation))], signal ? { signal } : {});
  return parseUpdate(contentText(answer.content));
}
