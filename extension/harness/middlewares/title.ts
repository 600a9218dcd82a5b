/**
 * TitleMiddleware (DeerFlow `title_middleware.py`): after the first complete exchange (exactly one
 * real user message and at least one AI message) and only while the thread has no title, set
 * `title`. With a title model, DeerFlow's prompt asks it for ≤6 words (tagged `nostream` so its
 * tokens never reach the run's `messages` stream); without one, or when it fails or answers
 * blank, the local fallback: the first user text, cut to 50 characters + "...".
 *
 * "Real" user messages exclude the ones middlewares add for the model (hidden reminders such as
 * `todo_reminder`, anything flagged `hide_from_ui`, DeerFlow's dynamic-context reminders). The
 * user text is the one they typed: `additional_kwargs.original_user_content` when the Uploads
 * middleware prepended its block.
 *
 * Where we differ: DeerFlow's worker copies the title to the thread record; here that is the
 * run's caller's job (the title is in the final state), see the report in middlewareChain.ts.
 *
 * A first run that fails or is cancelled still gets a title. DeerFlow gets there two ways: the
 * final LLM failure saves a fallback AIMessage, so the ordinary rule titles it; a cancelled run's
 * worker writes the local fallback into the checkpoint afterwards (`_ensure_interrupted_title`,
 * `allow_partial_exchange=True`: the user message alone is enough). We throw the LLM failure (see
 * llmErrorHandling.ts) and the run's ending is not ours to extend, so the same local fallback is
 * set by `beforeModel` of the first model call, in the before_model step, which is checkpointed
 * before the model is called: before anything can fail or be cancelled. It only needs the user text, so without a title model the title is exactly
 * DeerFlow's. With a title model, `afterModel` of that run still asks it (once) and replaces the
 * interim fallback; if that run never gets an answer the fallback stays, as in DeerFlow.
 */
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { StateSchema } from "@langchain/langgraph";
import { threadStateFields } from "../state/threadState.js";
import { ORIGINAL_USER_CONTENT_KEY } from "./shared/messages.js";

/** DeerFlow `TitleConfig` defaults. */
export const TITLE_MAX_WORDS = 6;
export const TITLE_MAX_CHARS = 60;
export const TITLE_PROMPT_TEMPLATE =
  "Generate a concise title (max {max_words} words) for this conversation.\nUser: {user_msg}\nAssistant: {assistant_msg}\n\nReturn ONLY the title, no quotes, no explanation.";
/** LangGraph's TAG_NOSTREAM: the `messages` stream mode skips runs carrying it. */
const TAG_NOSTREAM = "nostream";

const titleState = new StateSchema({ title: threadStateFields.title });

function normalizeContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(normalizeContent).filter(Boolean).join("\n");
  if (content && typeof content === "object") {
    const c = content as { text?: unknown; content?: unknown };
    if (typeof c.text === "string") return c.text;
    if (c.content !== undefined) return normalizeContent(c.content);
  }
  return "";
}

function isRealUserMessage(m: BaseMessage): boolean {
  if (!HumanMessage.isInstance(m)) return false;
  const kw = m.additional_kwargs ?? {};
  return kw.hide_from_ui !== true && kw.dynamic_context_reminder !== true && m.name !== "todo_reminder";
}

function userText(m: BaseMessage): string {
  const original = m.additional_kwargs?.[ORIGINAL_USER_CONTENT_KEY];
  return typeof original === "string" ? original : normalizeContent(m.content);
}

export function stripThink(text: string): string {
  return text.replace(/<think>[\s\S]*?<\/think>/gi, "").trim();
}

/** DeerFlow `_should_generate_title` (title enabled, no title yet, first complete exchange). */
export function shouldGenerateTitle(state: { messages: readonly BaseMessage[]; title?: string | null }): boolean {
  if (state.title) return false;
  const users = state.messages.filter(isRealUserMessage);
  return users.length === 1 && state.messages.some((m) => AIMessage.isInstance(m));
}

/** DeerFlow `_fallback_title`: ≤50 chars kept, else `text[:50].rstrip() + "..."`; empty → "New Conversation". */
export function fallbackTitle(userMsg: string, maxChars = TITLE_MAX_CHARS): string {
  const limit = Math.min(maxChars, 50);
  if (userMsg.length > limit) return userMsg.slice(0, Math.min(limit, maxChars - 3)).trimEnd() + "...";
  return userMsg || "New Conversation";
}

/** DeerFlow `_parse_title`: think blocks stripped, surrounding quotes removed, clamped to max_chars. */
export function parseTitle(content: unknown, maxChars = TITLE_MAX_CHARS): string {
  let t = stripThink(normalizeContent(content)).trim();
  t = t.replace(/^"+|"+$/g, "").replace(/^'+|'+$/g, "");
  return t.length > maxChars ? t.slice(0, maxChars) : t;
}

/** DeerFlow `TitleConfig` (config `title.*`): max_words, max_chars, prompt_template. */
export interface TitleOptions {
  maxWords: number;
  maxChars: number;
  /** DeerFlow's template with `{max_words}`, `{user_msg}`, `{assistant_msg}`; absent → TITLE_PROMPT_TEMPLATE. */
  promptTemplate?: string;
}

export function buildTitlePrompt(userMsg: string, assistantMsg: string, o: Partial<TitleOptions> = {}): string {
  return (o.promptTemplate ?? TITLE_PROMPT_TEMPLATE)
    .replace("{max_words}", String(o.maxWords ?? TITLE_MAX_WORDS))
    .replace("{user_msg}", userMsg.slice(0, 500))
    .replace("{assistant_msg}", stripThink(assistantMsg).slice(0, 500));
}

/** DeerFlow's interrupted-title rule (`allow_partial_exchange`): no title yet, exactly one real user message. */
export function shouldSetInterimTitle(state: { messages: readonly BaseMessage[]; title?: string | null }): boolean {
  return !state.title && state.messages.filter(isRealUserMessage).length === 1;
}

function firstUserText(messages: readonly BaseMessage[]): string {
  const user = messages.find(isRealUserMessage);
  return user ? userText(user) : "";
}

export function titleMiddleware(titleModel?: BaseChatModel, options: Partial<TitleOptions> = {}) {
  const maxChars = options.maxChars ?? TITLE_MAX_CHARS;
  // One title-model call per run at most (the chain is built per run): a failing title model
  // leaves the local fallback rather than being retried after every model call of the run.
  let asked = false;
  return createMiddleware({
    name: "TitleMiddleware",
    stateSchema: titleState,
    beforeModel: (state) => {
      const s = state as { messages: BaseMessage[]; title?: string | null };
      if (!shouldSetInterimTitle(s)) return undefined;
      return { title: fallbackTitle(firstUserText(s.messages), maxChars) };
    },
    afterModel: async (state, runtime) => {
      const s = state as { messages: BaseMessage[]; title?: string | null };
      const userMsg = firstUserText(s.messages);
      // The interim fallback set by beforeModel counts as "no title yet" for the title model.
      const interim = s.title === fallbackTitle(userMsg, maxChars);
      if (!shouldGenerateTitle({ messages: s.messages, title: interim ? null : (s.title ?? null) })) return undefined;
      if (!titleModel || asked) return interim ? undefined : { title: fallbackTitle(userMsg, maxChars) };
      asked = true;
      const ai = s.messages.find((m) => AIMessage.isInstance(m));
      try {
        const response = await titleModel.invoke(buildTitlePrompt(userMsg, normalizeContent(ai?.content), options), {
          runName: "title_agent",
          tags: ["middleware:title", TAG_NOSTREAM],
          ...(runtime.signal ? { signal: runtime.signal } : {}),
        });
        const title = parseTitle(response.content, maxChars);
        if (title) return { title };
      } catch {
        // DeerFlow: any failure of the title model falls back to the local title.
      }
      return interim ? undefined : { title: fallbackTitle(userMsg, maxChars) };
    },
  });
}
