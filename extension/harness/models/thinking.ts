/**
 * Thinking and reasoning effort, as DeerFlow's `create_chat_model` decides them
 * (`models/factory.py`), turned into what @langchain/openai 1.5.8 puts in the request body:
 *
 * - `when_thinking_enabled` / `when_thinking_disabled` are DeerFlow's constructor-kwarg dicts. Their
 *   `extra_body` is merged into the JSON body (what the Python openai client does with extra_body);
 *   any other key (e.g. Anthropic-style `thinking: {type, budget_tokens}`) goes into the body as is.
 *   `thinking` is DeerFlow's shortcut for `when_thinking_enabled.thinking`.
 * - Thinking off (`thinking_enabled: false` in the run context): `when_thinking_disabled` wins;
 *   else DeerFlow's per-convention switch-off: `extra_body.thinking.type` → `thinking: {type:
 *   "disabled"}` + `reasoning_effort: "minimal"`; vLLM/Qwen `chat_template_kwargs` → its keys set
 *   false; a top-level `thinking.type` → `{type: "disabled"}`.
 * - `reasoning_effort` (the model's, or the run context's) is sent only when the model declares
 *   `supports_reasoning_effort`, through ChatOpenAI's `reasoning: {effort}`, which the chat
 *   completions API receives as `reasoning_effort`.
 *
 * Where we differ: with `supports_thinking: true` and no thinking settings DeerFlow sends nothing;
 * we then apply the OpenAI-compatible convention every thinking gateway in DeerFlow's
 * config.example uses (`extra_body: {thinking: {type: "enabled"}}`), so the flag is not inert.
 * Thinking requested on a model without `supports_thinking` is dropped (DeerFlow's lead agent warns
 * and disables it; its factory would raise).
 */

export type Settings = Record<string, unknown>;

export interface ThinkingConfig {
  supportsThinking: boolean;
  supportsReasoningEffort: boolean;
  reasoningEffort?: string;
  whenThinkingEnabled?: Settings;
  whenThinkingDisabled?: Settings;
  thinking?: Settings;
}

export interface RequestShaping {
  /** Merged into the request body (ChatOpenAI `modelKwargs`). */
  body: Settings;
  /** ChatOpenAI `reasoning.effort` → body `reasoning_effort`. */
  reasoningEffort?: string;
}

const isObject = (v: unknown): v is Settings => typeof v === "object" && v !== null && !Array.isArray(v);

function deepMerge(a: Settings | undefined, b: Settings): Settings {
  const out: Settings = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b)) out[k] = isObject(v) && isObject(out[k]) ? deepMerge(out[k], v) : v;
  return out;
}

/** DeerFlow kwargs → body: `extra_body` is flattened; `reasoning_effort` is pulled out for ChatOpenAI's own field. */
function apply(into: RequestShaping, settings: Settings): void {
  for (const [k, v] of Object.entries(settings)) {
    if (k === "extra_body" && isObject(v)) into.body = deepMerge(into.body, v);
    else if (k === "reasoning_effort" && typeof v === "string") into.reasoningEffort = v;
    else into.body = deepMerge(into.body, { [k]: v });
  }
}

export function shapeThinking(m: ThinkingConfig, run: { thinkingEnabled: boolean; reasoningEffort?: string }): RequestShaping {
  const out: RequestShaping = { body: {} };
  const configured = m.whenThinkingEnabled !== undefined || m.thinking !== undefined;
  let wte: Settings = { ...(m.whenThinkingEnabled ?? {}) };
  if (m.thinking) wte = { ...wte, thinking: deepMerge(isObject(wte.thinking) ? wte.thinking : {}, m.thinking) };
  if (!configured && m.supportsThinking) wte = { extra_body: { thinking: { type: "enabled" } } };
  const hasSettings = Object.keys(wte).length > 0;
  const enabled = run.thinkingEnabled && m.supportsThinking;
  if (m.reasoningEffort) out.reasoningEffort = m.reasoningEffort;
  if (enabled) {
    apply(out, wte);
  } else if (m.whenThinkingDisabled) {
    apply(out, m.whenThinkingDisabled);
  } else if (hasSettings) {
    const extra = isObject(wte.extra_body) ? wte.extra_body : {};
    const ctk = isObject(extra.chat_template_kwargs) ? extra.chat_template_kwargs : {};
    const offKwargs = Object.fromEntries(["thinking", "enable_thinking"].filter((k) => k in ctk).map((k) => [k, false]));
    if (isObject(extra.thinking) && extra.thinking.type) {
      apply(out, { extra_body: { thinking: { type: "disabled" } }, reasoning_effort: "minimal" });
    } else if (Object.keys(offKwargs).length > 0) {
      apply(out, { extra_body: { chat_template_kwargs: offKwargs } });
    } else if (isObject(wte.thinking) && wte.thinking.type) {
      apply(out, { thinking: { type: "disabled" } });
    }
  }
  // The run's explicit choice (the panel's effort picker) wins over the model's default.
  if (run.reasoningEffort) out.reasoningEffort = run.reasoningEffort;
  if (!m.supportsReasoningEffort) delete out.reasoningEffort;
  return out;
}
