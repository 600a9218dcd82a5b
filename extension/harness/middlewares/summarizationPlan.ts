/**
 * Summarization's pure parts (DeerFlow `summarization_middleware.py` and LangChain's
 * `SummarizationMiddleware` it extends): which messages a summary covers, where the history may be
 * cut without splitting a tool call from its results, and the summary prompt with its escaped
 * `<existing_summary>`/`<new_messages>` blocks. No model, no state writes: the middleware
 * (summarization.ts) and manual compaction call these.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage, HumanMessage, ToolMessage, getBufferString } from "@langchain/core/messages";
import { isGenuineUserMessage } from "./shared/messages.js";
import type { TokenCounter } from "../models/tokenCount.js";

/** LangChain's default summary prompt, which DeerFlow uses when `summary_prompt` is not configured. */
export const DEFAULT_SUMMARY_PROMPT = `<role>
Context Extraction Assistant
</role>

<primary_objective>
Your sole objective in this task is to extract the highest quality/most relevant context from the conversation history below.
</primary_objective>

<objective_information>
You're nearing the total number of input tokens you can accept, so you must extract the highest quality/most relevant pieces of information from your conversation history.
This context will then overwrite the conversation history presented below. Because of this, ensure the context you extract is only the most important information to your overall goal.
</objective_information>

<instructions>
The conversation history below will be replaced with the context you extract in this step. Because of this, you must do your very best to extract and record all of the most important context from the conversation history.
You want to ensure that you don't repeat any actions you've already completed, so the context you extract from the conversation history should be focused on the most important information to your overall goal.
</instructions>

The user will message you with the full message history you'll be extracting context from, to then replace. Carefully read over it all, and think deeply about what information is most important to your overall goal that should be saved:

With all of this in mind, please carefully read over the entire conversation history, and extract the most important and relevant context to replace it so that you can free up space in the conversation history.
Respond ONLY with the extracted context. Do not include any additional information, or text before or after the extracted context.

<messages>
Messages to summarize:
{messages}
</messages>`;

/** DeerFlow's two valid summaries that need no model (its `_CANNED_SUMMARIES`). */
export const NO_HISTORY_SUMMARY = "No previous conversation history.";
export const TOO_LONG_SUMMARY = "Previous conversation was too long to summarize.";

export type TriggerSize = { type: "tokens" | "messages" | "fraction"; value: number };
export type KeepSize = { type: "messages" | "tokens"; value: number };

/**
 * Where the thread's summary stops (state channel `summary_upto`): every message up to and
 * including `message_id` is covered by `summary_text`, except `kept_ids` (the user's request of
 * the turn that was compacted, which DeerFlow rescues by id). `message_count` is informational:
 * how many messages of the thread the summary covers.
 */
export interface SummaryUpto {
  message_id: string;
  message_count: number;
  kept_ids: string[];
}

/** The ids of the messages a summary covers (the model request leaves them out). */
export function summarizedIds(messages: readonly BaseMessage[], upto: SummaryUpto | null | undefined): Set<string> {
  const out = new Set<string>();
  if (!upto) return out;
  const end = messages.findIndex((m) => m.id === upto.message_id);
  // The boundary message is gone (a thread edited outside the harness): nothing is left out
  // rather than guessing; the next compaction starts over from the whole history.
  if (end < 0) return out;
  const kept = new Set(upto.kept_ids);
  for (const m of messages.slice(0, end + 1)) if (m.id && !kept.has(m.id)) out.add(m.id);
  return out;
}

/** The messages the model still sees in full: everything the summary does not cover, in order. */
export function unsummarized(messages: readonly BaseMessage[], upto: SummaryUpto | null | undefined): BaseMessage[] {
  const covered = summarizedIds(messages, upto);
  return messages.filter((m) => !m.id || !covered.has(m.id));
}

function toolCallIds(m: BaseMessage): string[] {
  if (!AIMessage.isInstance(m)) return [];
  return (m.tool_calls ?? []).map((c) => c.id).filter((id): id is string => typeof id === "string" && id.length > 0);
}

/**
 * True when cutting before `index` keeps every AI message together with its ToolMessages: no
 * call before the cut has its result at or after it. (A result before its call cannot happen.)
 */
export function isSafeCutoff(messages: readonly BaseMessage[], index: number): boolean {
  if (index <= 0 || index >= messages.length) return true;
  const open = new Set<string>();
  for (const m of messages.slice(0, index)) for (const id of toolCallIds(m)) open.add(id);
  if (open.size === 0) return true;
  return !messages.slice(index).some((m) => ToolMessage.isInstance(m) && open.has(m.tool_call_id));
}

/**
 * The index of the latest AI message when some of its tool calls have no result yet (a turn
 * paused on the user's approval, or still running): its results are still to come, so the cut
 * must stay before it. -1 otherwise. Older unanswered calls (a crashed run's) are history.
 */
export function pendingCallsIndex(messages: readonly BaseMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (!AIMessage.isInstance(messages[i])) continue;
    const ids = toolCallIds(messages[i]!);
    const answered = new Set(messages.slice(i + 1).filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id));
    return ids.some((id) => !answered.has(id)) ? i : -1;
  }
  return -1;
}

/**
 * DeerFlow/LangChain `_determine_cutoff_index`: keep the last `keep.value` messages (or the
 * longest tail within `keep.value` tokens), then move the cut back until it separates no tool call
 * from its result, including results still to come (`pendingCallsIndex`). 0 means nothing can be
 * summarized.
 */
export function determineCutoff(messages: readonly BaseMessage[], keep: KeepSize, countTokens: TokenCounter): number {
  let candidate: number;
  if (keep.type === "messages") {
    if (messages.length <= keep.value) return 0;
    candidate = messages.length - keep.value;
  } else {
    if (countTokens([...messages]) <= keep.value) return 0;
    // The earliest index whose suffix fits in the budget (binary search: suffix tokens shrink as the index grows).
    let lo = 1;
    let hi = messages.length;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (countTokens(messages.slice(mid)) <= keep.value) hi = mid;
      else lo = mid + 1;
    }
    candidate = lo;
  }
  const pending = pendingCallsIndex(messages);
  if (pending >= 0) candidate = Math.min(candidate, pending);
  for (let i = candidate; i > 0; i--) if (isSafeCutoff(messages, i)) return i;
  return 0;
}

export interface CompactionPlan {
  /** What the new summary must cover, oldest first. */
  toSummarize: BaseMessage[];
  /** What the model keeps seeing in full after it: the rescued user request and the tail. */
  preserved: BaseMessage[];
  /** The new `summary_upto`. */
  upto: SummaryUpto;
}

/**
 * Split what the model still sees (`unsummarized(...)`) at the safe cutoff. The thread's latest
 * real user message is never summarized (DeerFlow locks its id): it is the current request.
 * Null when there is nothing to summarize.
 */
export function planCompaction(all: readonly BaseMessage[], previous: SummaryUpto | null | undefined, keep: KeepSize, countTokens: TokenCounter): CompactionPlan | null {
  const visible = unsummarized(all, previous);
  const cutoff = determineCutoff(visible, keep, countTokens);
  if (cutoff <= 0) return null;
  const latestUser = [...all].reverse().find(isGenuineUserMessage);
  const head = visible.slice(0, cutoff);
  const rescued = head.filter((m) => latestUser !== undefined && m === latestUser);
  const toSummarize = head.filter((m) => !rescued.includes(m));
  if (toSummarize.length === 0) return null;
  const last = head[head.length - 1]!;
  const lastIndex = all.indexOf(last);
  return {
    toSummarize,
    preserved: [...rescued, ...visible.slice(cutoff)],
    upto: {
      message_id: last.id!,
      message_count: all.slice(0, lastIndex + 1).filter((m) => !rescued.includes(m)).length,
      kept_ids: rescued.map((m) => m.id!),
    },
  };
}

/** `<`, `>` and `&` as entities (Python's `html.escape(quote=False)`): text cannot close the block it sits in. */
export function escapeSummaryText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Head and tail of a text within `cap` characters (DeerFlow `_bound_text`, deterministic, not a summary). */
export function boundText(text: string, cap: number): string {
  if (text.length <= cap) return text;
  if (cap <= 0) return "";
  const head = Math.floor((cap * 2) / 3);
  const marker = "\n...\n";
  if (cap <= marker.length) return text.slice(0, cap);
  const tail = Math.max(0, cap - head - marker.length);
  if (tail === 0) return text.slice(0, cap);
  return `${text.slice(0, head)}${marker}${text.slice(-tail)}`;
}

/**
 * A text within `maxTokens`, keeping its start ("first") or its end ("last"), like LangChain's
 * `trim_messages(..., allow_partial=True)` on a single message.
 */
export function trimTextToTokens(text: string, maxTokens: number, keepEnd: boolean, countTokens: TokenCounter): string {
  const tokens = (t: string) => countTokens([new HumanMessage(t)]);
  if (tokens(text) <= maxTokens) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const part = keepEnd ? text.slice(text.length - mid) : text.slice(0, mid);
    if (tokens(part) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return keepEnd ? text.slice(text.length - lo) : text.slice(0, lo);
}

/**
 * The summary prompt for `messages` (DeerFlow `_build_summary_prompt`), or a canned summary
 * (`NO_HISTORY_SUMMARY`/`TOO_LONG_SUMMARY`) that needs no model. With `trimTokens`, the newest
 * messages that fit are summarized (an existing summary takes half the budget, keeping its end);
 * a single message longer than the budget keeps its beginning.
 */
export function buildSummaryPrompt(
  messages: readonly BaseMessage[],
  previousSummary: string | null | undefined,
  o: { summaryPrompt: string; trimTokens: number | null; countTokens: TokenCounter },
): { prompt: string } | { canned: string } {
  if (messages.length === 0) return { canned: NO_HISTORY_SUMMARY };
  let summary = previousSummary?.trim() ?? "";
  const max = o.trimTokens === null ? null : Math.max(1, o.trimTokens);
  // With an existing summary the new messages get half the budget. The messages are chosen
  // within THAT budget: choosing them within the whole budget and then cutting their text to
  // half kept the oldest and dropped the newest, which the summary then claimed to cover.
  const freshBudget = max === null ? null : summary ? Math.max(1, Math.floor(max / 2)) : max;
  // LangChain's `_trim_messages_for_summary`: the newest messages that fit, at least the last one.
  let trimmed = [...messages];
  if (freshBudget !== null) {
    let start = messages.length - 1;
    while (start > 0 && o.countTokens(messages.slice(start - 1)) <= freshBudget) start--;
    trimmed = messages.slice(start);
  }
  const formatted = getBufferString(trimmed);
  let fresh = formatted;
  if (max !== null && freshBudget !== null) {
    if (summary) summary = trimTextToTokens(summary, Math.max(1, max - freshBudget), true, o.countTokens);
    // Only a last message longer than the budget by itself is cut here (its start kept).
    fresh = trimTextToTokens(formatted, freshBudget, false, o.countTokens);
  }
  const parts: string[] = [];
  // Escaped after trimming, so a cut cannot split an entity.
  if (summary) parts.push("<existing_summary>", escapeSummaryText(summary), "</existing_summary>", "");
  if (fresh.trim()) parts.push("<new_messages>", escapeSummaryText(fresh), "</new_messages>");
  if (parts.length === 0) return { canned: TOO_LONG_SUMMARY };
  // A function replacer: `$&` or `$'` in the conversation are text, not replacement patterns.
  return { prompt: o.summaryPrompt.replace("{messages}", () => parts.join("\n")).trimEnd() };
}
