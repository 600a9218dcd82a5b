/**
 * Chat models for any OpenAI-compatible endpoint (DeerFlow's `create_chat_model`, narrowed to
 * `@langchain/openai`). Resolution differs from DeerFlow on purpose: an unknown name is an error
 * that names the configured models, not a silent fallback to `models[0]`: in an editor the user
 * picked that model and should know it is not the one answering.
 */
import { ChatOpenAI, ChatOpenAICompletions } from "@langchain/openai";
import type { ChatOpenAIFields } from "@langchain/openai";
import type { BaseMessageChunk } from "@langchain/core/messages";
import { HarnessError } from "../errors.js";
import type { HarnessConfig, ModelConfig } from "../config/harnessConfig.js";
import type { ResolvedModel } from "./resolvedModel.js";
import { shapeThinking } from "./thinking.js";
import { keyFromSource } from "./fileKeys.js";

export interface ModelRequest {
  /** `--model NAME` / the picker; undefined → the default model. */
  name?: string;
  /** `--base-url URL`: an ad-hoc endpoint; `name` is then the model id. */
  baseURL?: string;
}

/** The operator's own model when nothing is configured: OPENAI_BASE_URL + OPENAI_MODEL/DEERFLOW_MODEL. */
function envDefaultModel(env: NodeJS.ProcessEnv): ModelConfig | undefined {
  const id = env.DEERFLOW_MODEL || env.OPENAI_MODEL;
  if (!env.OPENAI_BASE_URL && !id) return undefined;
  return {
    name: id || "default",
    model: id || "gpt-4o-mini",
    base_url: env.OPENAI_BASE_URL,
    supports_vision: true,
    supports_thinking: false,
    supports_reasoning_effort: false,
  };
}

export function resolveModel(config: HarnessConfig, req: ModelRequest, env: NodeJS.ProcessEnv = process.env): ResolvedModel {
  if (req.baseURL) {
    if (!req.name) throw new HarnessError("usage", "--base-url needs --model ID: the model id to request from that endpoint.");
    // Ad-hoc: the operator names endpoint and id directly, for this invocation only. Capabilities
    // are unknown, so vision is assumed (the provider answers 400 if it cannot take images).
    return {
      name: req.name,
      model: req.name,
      baseURL: req.baseURL,
      supportsVision: true,
      supportsThinking: false,
      apiKeySource: "OPENAI_API_KEY",
      adHoc: true,
    };
  }
  const models = config.models.length > 0 ? config.models : [envDefaultModel(env)].filter((m): m is ModelConfig => m !== undefined);
  if (models.length === 0) {
    throw new HarnessError(
      "no_models",
      "No chat models are configured. Add one to the DeerFlow configuration (deerflow.models), set OPENAI_BASE_URL and OPENAI_MODEL, or pass --base-url URL --model ID.",
    );
  }
  const wanted = req.name ?? config.default_model ?? models[0]!.name;
  const found = models.find((m) => m.name === wanted);
  if (!found) {
    throw new HarnessError(
      "unknown_model",
      `Unknown model "${wanted}". Configured models: ${models.map((m) => m.name).join(", ")}.`,
    );
  }
  return {
    name: found.name,
    model: found.model,
    baseURL: found.base_url ?? env.OPENAI_BASE_URL,
    supportsVision: found.supports_vision,
    supportsThinking: found.supports_thinking,
    thinking: {
      supportsThinking: found.supports_thinking,
      supportsReasoningEffort: found.supports_reasoning_effort,
      ...(found.reasoning_effort ? { reasoningEffort: found.reasoning_effort } : {}),
      ...(found.when_thinking_enabled ? { whenThinkingEnabled: found.when_thinking_enabled } : {}),
      ...(found.when_thinking_disabled ? { whenThinkingDisabled: found.when_thinking_disabled } : {}),
      ...(found.thinking ? { thinking: found.thinking } : {}),
    },
    ...(found.max_tokens !== undefined ? { maxTokens: found.max_tokens } : {}),
    ...(found.temperature !== undefined ? { temperature: found.temperature } : {}),
    apiKeySource: found.api_key_env ?? "OPENAI_API_KEY",
    ...(found.pricing_provider ? { pricingProvider: found.pricing_provider } : {}),
    ...(found.pricing ? { pricing: found.pricing } : {}),
    ...(found.context_window ? { contextWindow: found.context_window } : {}),
  };
}


/**
 * Which key one model of a run gets; undefined → createChatModel reads the environment variable its
 * `api_key_env` names (the CLI's way). One function per run owns the answer (runKeys).
 */
export type KeyFor = (m: ResolvedModel) => string | undefined;

/** The same model on the same endpoint, reading the same key. */
function sameModel(a: ResolvedModel, b: ResolvedModel): boolean {
  return a.name === b.name && a.model === b.model && a.baseURL === b.baseURL && Boolean(a.adHoc) === Boolean(b.adHoc) && a.apiKeySource === b.apiKeySource;
}

/**
 * The one rule for which key goes to which model of a run (lead, title, summary, subagent models):
 * the run's own key (`--api-key`, or what the host sent for it) goes to the run's own model only;
 * any other configured model gets the key held for ITS `api_key_env` (`held`: the harness server's
 * session keys), or none (→ the environment, the CLI); an ad-hoc endpoint (`--base-url`) only ever
 * gets the key the run itself was given. A key never reaches an endpoint it was not configured for.
 */
export function runKeys(runModel: ResolvedModel, runKey: string | undefined, held?: (apiKeySource: string) => string | undefined): KeyFor {
  return (m) => {
    if (sameModel(m, runModel) && runKey) return runKey;
    if (m.adHoc) return undefined;
    return held?.(m.apiKeySource);
  };
}

/** createChatModel's `apiKey` option for `m` when `keyFor` has one (absent → the environment). */
export function withKey(keyFor: KeyFor | undefined, m: ResolvedModel): { apiKey?: string } {
  const apiKey = keyFor?.(m);
  return apiKey ? { apiKey } : {};
}

export interface ChatModelOptions {
  /** An explicit key (`--api-key`, SecretStorage via the host). Wins over the environment. */
  apiKey?: string;
  env?: NodeJS.ProcessEnv;
  /** Per-request timeout; DeerFlow streams with a 240 s chunk timeout. */
  timeoutMs?: number;
  /** The run context's `thinking_enabled`; DeerFlow's lead agent defaults it to true. */
  thinkingEnabled?: boolean;
  /** The run context's `reasoning_effort` (overrides the model's). */
  reasoningEffort?: string;
}

/**
 * Some OpenAI-compatible servers stream deltas without `role`. @langchain/openai then builds a
 * generic ChatMessageChunk, which createAgent rejects ("expected AIMessage or Command"): every run
 * on such a server would fail. A chat-completions stream is the assistant speaking, so a missing
 * role defaults to "assistant".
 */
class AssistantDefaultCompletions extends ChatOpenAICompletions {
  protected override _convertCompletionsDeltaToBaseMessageChunk(
    delta: Record<string, unknown>,
    rawResponse: Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[1],
    defaultRole?: Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[2],
  ): BaseMessageChunk {
    const chunk = super._convertCompletionsDeltaToBaseMessageChunk(delta, rawResponse, defaultRole ?? "assistant");
    // A streamed answer's finish_reason reaches only the chunk's generationInfo, which
    // @langchain/core drops when it aggregates a stream for a streaming handler (the agent's
    // `messages` mode): the final AIMessage would have none. ModelLength and Safety need it
    // ("length", "content_filter"), as DeerFlow reads it from response_metadata, so it is put there.
    const finish = (rawResponse as { choices?: Array<{ finish_reason?: unknown }> } | undefined)?.choices?.[0]?.finish_reason;
    if (typeof finish === "string" && finish) chunk.response_metadata = { ...chunk.response_metadata, finish_reason: finish };
    return chunk;
  }
}

export function createChatModel(resolved: ResolvedModel, opts: ChatModelOptions = {}): ChatOpenAI {
  const env = opts.env ?? process.env;
  // Local OpenAI-compatible servers often need no key, but the client insists on one.
  const apiKey = opts.apiKey ?? keyFromSource(resolved.apiKeySource, env) ?? "no-key";
  const shaped = resolved.thinking
    ? shapeThinking(resolved.thinking, { thinkingEnabled: opts.thinkingEnabled ?? true, ...(opts.reasoningEffort ? { reasoningEffort: opts.reasoningEffort } : {}) })
    : { body: {} };
  const body = shaped.reasoningEffort ? { ...shaped.body, reasoning_effort: shaped.reasoningEffort } : shaped.body;
  const fields: ChatOpenAIFields = {
    model: resolved.model,
    apiKey,
    configuration: resolved.baseURL ? { baseURL: resolved.baseURL } : {},
    streamUsage: true,
    // Retries are the LLM error-handling middleware's job, where they are visible as events.
    maxRetries: 0,
    timeout: opts.timeoutMs ?? 240_000,
    ...(resolved.maxTokens !== undefined ? { maxTokens: resolved.maxTokens } : {}),
    ...(resolved.temperature !== undefined ? { temperature: resolved.temperature } : {}),
    // @langchain/openai turns `reasoning.effort` into `reasoning_effort` only for model ids it
    // knows to be OpenAI reasoning models (o-series, gpt-5); OpenAI-compatible gateways (DeepSeek,
    // Doubao, vLLM...) take the same body field, which DeerFlow's Python client sends for any model,
    // so it also goes into the body directly.
    ...(Object.keys(body).length > 0 ? { modelKwargs: body } : {}),
    ...(shaped.reasoningEffort ? { reasoning: { effort: shaped.reasoningEffort as NonNullable<ChatOpenAIFields["reasoning"]>["effort"] } } : {}),
  };
  return new ChatOpenAI({ ...fields, completions: new AssistantDefaultCompletions(fields) });
}

/** The run context's thinking choices (DeerFlow's `thinking_enabled` / `reasoning_effort` context keys), typed. */
export function thinkingFromContext(context: Record<string, unknown> | undefined): Pick<ChatModelOptions, "thinkingEnabled" | "reasoningEffort"> {
  const out: Pick<ChatModelOptions, "thinkingEnabled" | "reasoningEffort"> = {};
  if (typeof context?.thinking_enabled === "boolean") out.thinkingEnabled = context.thinking_enabled;
  if (typeof context?.reasoning_effort === "string" && context.reasoning_effort) out.reasoningEffort = context.reasoning_effort;
  return out;
}
