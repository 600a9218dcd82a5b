/**
 * LLMErrorHandlingMiddleware (DeerFlow `llm_error_handling_middleware.py`): retry transient
 * provider failures with decorrelated-jitter backoff, tell the user about each retry with a
 * `custom` `llm_retry` event, and fail with a readable reason once the budget is spent.
 *
 * The chat model is built with `maxRetries: 0` (models/factory.ts), so this is the only retry
 * loop, and every retry is visible.
 *
 * Where we differ from DeerFlow:
 * - The final failure is THROWN as an `LlmCallError` (stable code, DeerFlow's user text as the
 *   message, `error_type`/`error_reason`/`error_detail` as fields) instead of being returned as a
 *   fallback AIMessage flagged `deerflow_error_fallback`. The run then ends `error` through the
 *   ordinary exception path, with the same readable reason, and the checkpoint stays at the state
 *   before the model call: no apology text is saved into the thread and replayed to the model as
 *   if it had said it, and the next run continues from the user's question.
 * - The circuit breaker and the concurrency cap are in llmCircuitBreaker.ts (shared across CLI
 *   processes through the data directory); an open breaker is thrown like any final failure, with
 *   DeerFlow's fixed message and `error_reason` "circuit_open".
 * - `StreamChunkTimeoutError` does not exist in JS; a mid-stream drop is a connection error.
 */
import { createMiddleware } from "langchain";
import { isGraphBubbleUp } from "@langchain/langgraph";
import { CIRCUIT_OPEN_MESSAGE, circuitIsOpen, endpointOf, recordFailure, recordSuccess, releaseProbe, withConcurrencyCap } from "./llmCircuitBreaker.js";
import { circuitOpenFailure, classifyRequestFailure, modelTarget } from "../models/requestFailure.js";
import type { ModelRequestFailure } from "../../protocol/events.js";

export interface LlmRetryOptions {
  /** DeerFlow `llm_call.retry_max_attempts`: attempts in total, not retries. */
  maxAttempts: number;
  /** `retry_base_delay_ms` */
  baseDelayMs: number;
  /** `retry_cap_delay_ms` */
  capDelayMs: number;
  /** `burst_retry_base_delay_ms`: a burst-rate 429 waits longer. */
  burstBaseDelayMs: number;
  /** Injected for tests; defaults to Math.random. */
  random?: () => number;
}

export const DEFAULT_LLM_RETRY: LlmRetryOptions = {
  maxAttempts: 3,
  baseDelayMs: 1000,
  capDelayMs: 8000,
  burstBaseDelayMs: 5000,
};

/** The process's `llm_call.*` settings (harness config); a chain's own options still win. */
let configuredRetry: Partial<LlmRetryOptions> = {};
export function configureLlmRetry(o: Partial<LlmRetryOptions>): void {
  configuredRetry = o;
}

/** DeerFlow's `_REASON_RETRY_BUDGETS`: retrying into a burst limit feeds it. */
const BURST_MAX_ATTEMPTS = 2;

export type LlmErrorReason = "transient" | "busy" | "burst_rate" | "quota" | "auth" | "generic" | "circuit_open";

/** The run's final LLM failure. `code` is stable; the message is written for the user. */
export class LlmCallError extends Error {
  readonly code = "llm_call_failed";
  readonly failure: ModelRequestFailure | undefined;
  constructor(
    message: string,
    /** DeerFlow's `error_reason`. */
    readonly reason: LlmErrorReason,
    /** DeerFlow's `error_type`: the provider error's class name. */
    readonly errorType: string,
    /** DeerFlow's `error_detail`: the provider's own message. */
    readonly detail: string,
    readonly attempts: number,
    /** What the failure was, for a person (models/requestFailure.ts); the model is named by its id here, runTurn names it as configured. */
    options?: { cause?: unknown; failure?: ModelRequestFailure },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.failure = options?.failure;
    this.name = "LlmCallError";
  }
}

const RETRIABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
/** openai-node error classes (and undici/Node errors) that mean "the request never completed". */
const TRANSIENT_CLASSES = new Set(["APIConnectionError", "APIConnectionTimeoutError", "APITimeoutError", "InternalServerError", "TimeoutError"]);
const TRANSIENT_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EPIPE", "UND_ERR_SOCKET", "ENOTFOUND", "EAI_AGAIN"]);
// Provider texts, matched as DeerFlow does: providers signal quota and burst limits only in prose.
const QUOTA = ["insufficient_quota", "quota", "billing", "credit", "payment", "余额不足", "超出限额", "额度不足", "欠费"];
const AUTH = ["authentication", "unauthorized", "invalid api key", "invalid_api_key", "permission", "forbidden", "access denied", "无权", "未授权"];
const BURST = ["limit_burst_rate", "rate increased too quickly", "burst rate", "请求速率增长过快", "突发速率"];
const BUSY = ["server busy", "temporarily unavailable", "try again later", "please retry", "please try again", "overloaded", "high demand", "rate limit", "负载较高", "服务繁忙", "稍后重试", "请稍后重试"];

const matches = (text: string, patterns: string[]) => patterns.some((p) => text.includes(p));

/** langchain wraps errors that pass through an inner middleware; classify the provider's error. */
export function unwrapMiddlewareError(err: unknown): unknown {
  let e = err;
  for (let i = 0; i < 20 && e instanceof Error && (e as { "~brand"?: unknown })["~brand"] === "MiddlewareError" && e.cause !== undefined; i++) e = e.cause;
  return e;
}

function statusOf(err: unknown): number | undefined {
  const s = (err as { status?: unknown } | null)?.status;
  return typeof s === "number" ? s : undefined;
}

function errorCodeOf(err: unknown): string {
  const e = err as { code?: unknown; type?: unknown; error?: { code?: unknown; type?: unknown } } | null;
  for (const v of [e?.code, e?.error?.code, e?.type, e?.error?.type]) if (typeof v === "string" && v) return v;
  return "";
}

export function errorDetail(err: unknown): string {
  if (err instanceof Error) return err.message.trim() || err.name;
  return String(err);
}

export function classifyLlmError(err: unknown): { retriable: boolean; reason: LlmErrorReason } {
  const detail = errorDetail(err).toLowerCase();
  const code = errorCodeOf(err).toLowerCase();
  const status = statusOf(err);
  if (matches(detail, QUOTA) || matches(code, QUOTA)) return { retriable: false, reason: "quota" };
  if (status === 401 || status === 403 || matches(detail, AUTH)) return { retriable: false, reason: "auth" };
  if (matches(detail, BURST) || matches(code, BURST)) return { retriable: true, reason: "burst_rate" };
  const name = err instanceof Error ? (err.constructor?.name ?? err.name) : "";
  const errName = err instanceof Error ? err.name : "";
  const sysCode = (err as { code?: unknown; cause?: { code?: unknown } } | null);
  const nodeCode = typeof sysCode?.code === "string" ? sysCode.code : typeof sysCode?.cause?.code === "string" ? sysCode.cause.code : "";
  if (TRANSIENT_CLASSES.has(name) || TRANSIENT_CLASSES.has(errName) || TRANSIENT_CODES.has(nodeCode)) return { retriable: true, reason: "transient" };
  if (status !== undefined && RETRIABLE_STATUS.has(status)) return { retriable: true, reason: "transient" };
  if (status === undefined && matches(detail, BUSY)) return { retriable: true, reason: "busy" };
  return { retriable: false, reason: "generic" };
}

/** `retry-after-ms` / `retry-after` (seconds or an HTTP date), honoured verbatim as DeerFlow does. */
export function retryAfterMs(err: unknown, now = Date.now()): number | undefined {
  const headers = (err as { headers?: unknown } | null)?.headers;
  if (!headers || typeof headers !== "object") return undefined;
  const get = (k: string): string | undefined => {
    if (typeof (headers as Headers).get === "function") return (headers as Headers).get(k) ?? undefined;
    const v = (headers as Record<string, unknown>)[k];
    return typeof v === "string" ? v : undefined;
  };
  for (const [key, scale] of [["retry-after-ms", 1], ["retry-after", 1000]] as const) {
    const raw = get(key);
    if (!raw) continue;
    const n = Number(raw);
    if (Number.isFinite(n)) return Math.max(0, Math.round(n * scale));
    const date = Date.parse(raw);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

/** Decorrelated jitter: random in [base, min(cap, max(base, prev*3))], seeded with the reason's base. */
export function retryDelayMs(opts: LlmRetryOptions, prev: number | undefined, reason: LlmErrorReason): number {
  const base = reason === "burst_rate" ? opts.burstBaseDelayMs : opts.baseDelayMs;
  const seed = prev ?? base;
  const high = Math.min(opts.capDelayMs, Math.max(base, seed * 3));
  if (high < base) return opts.capDelayMs;
  const rnd = opts.random ?? Math.random;
  return base + Math.floor(rnd() * (high - base + 1));
}

function retryMessage(attempt: number, maxAttempts: number, waitMs: number, reason: LlmErrorReason): string {
  const seconds = Math.max(1, Math.round(waitMs / 1000));
  const text = reason === "busy" ? "provider is busy" : reason === "burst_rate" ? "provider is throttling request burst rate" : "provider request failed temporarily";
  return `LLM request retry ${attempt}/${maxAttempts}: ${text}. Retrying in ${seconds}s.`;
}

export function userMessage(reason: LlmErrorReason, detail: string): string {
  switch (reason) {
    case "quota":
      return "The configured LLM provider rejected the request because the account is out of quota, billing is unavailable, or usage is restricted. Please fix the provider account and try again.";
    case "auth":
      return "The configured LLM provider rejected the request because authentication or access is invalid. Please check the provider credentials and try again.";
    case "burst_rate":
      return "The configured LLM provider is temporarily throttling requests because the request rate increased too quickly (burst-rate limit). Please wait a moment and try again.";
    case "circuit_open":
      return CIRCUIT_OPEN_MESSAGE;
    case "busy":
    case "transient":
      return "The configured LLM provider is temporarily unavailable after multiple retries. Please wait a moment and continue the conversation.";
    default:
      return `LLM request failed: ${detail}`;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0 && !signal?.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function llmErrorHandlingMiddleware(options: Partial<LlmRetryOptions> = {}) {
  const opts: LlmRetryOptions = { ...DEFAULT_LLM_RETRY, ...configuredRetry, ...options };
  return createMiddleware({
    name: "LLMErrorHandlingMiddleware",
    wrapModelCall: async (request, handler) => {
      const signal = request.runtime.signal;
      const endpoint = endpointOf(request.model);
      // Open breaker: fail fast, no request, no retries (DeerFlow returns its fallback message here).
      if (circuitIsOpen(endpoint)) {
        throw new LlmCallError(CIRCUIT_OPEN_MESSAGE, "circuit_open", "CircuitBreakerOpen", "LLM circuit breaker is open", 0, { failure: circuitOpenFailure(modelTarget(request.model)) });
      }
      let prev: number | undefined;
      for (let attempt = 1; ; attempt++) {
        try {
          const response = await withConcurrencyCap(endpoint, signal, async () => handler(request));
          recordSuccess(endpoint);
          return response;
        } catch (err) {
          if (isGraphBubbleUp(err) || signal?.aborted) {
            releaseProbe(endpoint);
            throw err;
          }
          const cause = unwrapMiddlewareError(err);
          const { retriable, reason } = classifyLlmError(cause);
          const maxAttempts = reason === "burst_rate" ? Math.min(BURST_MAX_ATTEMPTS, opts.maxAttempts) : opts.maxAttempts;
          const detail = errorDetail(cause);
          if (!retriable || attempt >= maxAttempts) {
            // Only an exhausted retriable failure says "provider down"; burst-rate and non-retriable
            // errors must not trip the breaker for everyone (DeerFlow #4290).
            if (retriable && reason !== "burst_rate") recordFailure(endpoint);
            else releaseProbe(endpoint);
            const type = cause instanceof Error ? (cause.constructor?.name ?? cause.name) : typeof cause;
            // The provider's words come last: the user text says what to do, the detail says what happened.
            const message = reason === "generic" ? userMessage(reason, detail) : `${userMessage(reason, detail)} (${detail})`;
            throw new LlmCallError(message, reason, type, detail, attempt, { cause, failure: classifyRequestFailure(cause, modelTarget(request.model)) });
          }
          const waitMs = retryAfterMs(cause) ?? retryDelayMs(opts, prev, reason);
          prev = waitMs;
          request.runtime.writer?.({
            type: "llm_retry",
            attempt,
            max_attempts: maxAttempts,
            wait_ms: waitMs,
            reason,
            message: retryMessage(attempt, maxAttempts, waitMs, reason),
          });
          try {
            await sleep(waitMs, signal);
          } catch (abort) {
            releaseProbe(endpoint); // a probe cancelled mid-backoff must not hold the breaker half-open
            throw abort;
          }
        }
      }
    },
  });
}
