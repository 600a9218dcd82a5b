/**
 * What a failed model request was, for a person (issue 30 item 2): the one module that sorts a
 * provider failure into refused connection, 401/403, 404, timeout or other, names the endpoint as
 * `host:port` and writes one plain sentence about it. The panel builds its alert (Retry, Show Logs,
 * Set API Key) from this, never from the error's text; the CLI and the log keep the full detail
 * (the run's `error` event message).
 *
 * LLMErrorHandlingMiddleware (middlewares/llmErrorHandling.ts) calls it once the retries are spent
 * and hangs the result on its LlmCallError; runTurn puts it on the `error` event with the run's
 * model name. Its own retry classification (`classifyLlmError`) answers another question (retry
 * or not) and stays there.
 *
 * Sorted by the error's fields (HTTP `status`, the Node/undici `code` anywhere in the `cause`
 * chain, openai-node's and LangChain's error names), never by its message.
 */
import type { ModelRequestFailure } from "../../protocol/events.js";
import { VSCODE_LM_PREFIX } from "../../protocol/lm.js";

/** Where a chat model sends its requests; `baseURL` undefined for a model that has no endpoint (vscode.lm). */
export interface ModelTarget {
  baseURL: string | undefined;
  modelId: string;
}

/** The endpoint and model id of a chat model instance (ChatOpenAI keeps them in `clientConfig` / `model`). */
export function modelTarget(model: unknown): ModelTarget {
  const m = model as { clientConfig?: { baseURL?: unknown }; model?: unknown; modelName?: unknown } | null;
  const modelId = typeof m?.model === "string" ? m.model : typeof m?.modelName === "string" ? m.modelName : "";
  // A ChatOpenAI without a base URL talks to OpenAI itself; a model without clientConfig has no endpoint.
  const configured = typeof m?.clientConfig?.baseURL === "string" ? m.clientConfig.baseURL : m?.clientConfig ? "https://api.openai.com/v1" : undefined;
  // A VS Code language model names its "endpoint" `vscode-lm:` (vscodeLm/chatModel.ts, for the circuit breaker): none.
  const baseURL = configured?.startsWith(VSCODE_LM_PREFIX) ? undefined : configured;
  return { baseURL, modelId };
}

/** `host:port` of a base URL, the scheme's port when it names none; "" when there is no (valid) URL. */
export function endpointOf(baseURL: string | undefined): string {
  if (!baseURL) return "";
  try {
    const u = new URL(baseURL);
    const port = u.port || (u.protocol === "https:" ? "443" : u.protocol === "http:" ? "80" : "");
    return port ? `${u.hostname}:${port}` : u.hostname;
  } catch {
    return "";
  }
}

const REFUSED_CODES = new Set(["ECONNREFUSED"]);
const TIMEOUT_CODES = new Set(["ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const TIMEOUT_NAMES = new Set(["TimeoutError", "APIConnectionTimeoutError"]);
const UNREACHABLE_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET", "UND_ERR_SOCKET"]);

/** The errors of the chain, outermost first (openai-node keeps fetch's error as `cause`, fetch keeps undici's). */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err, i = 0; e !== null && e !== undefined && i < 10; e = (e as { cause?: unknown }).cause, i++) out.push(e);
  return out;
}

function field<T>(errors: unknown[], pick: (e: Record<string, unknown>) => T | undefined): T | undefined {
  for (const e of errors) {
    if (typeof e !== "object" || e === null) continue;
    const v = pick(e as Record<string, unknown>);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** The provider's own words, fit for the panel: one line, no URLs (LangChain appends a troubleshooting link), bounded. */
export function plainDetail(text: string, max = 200): string {
  const line = text
    .replace(/\s*Troubleshooting URL:?\s*\S*/gi, "")
    .replace(/https?:\/\/\S+/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[\s:(]+$/, "");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Sorts `err` (the provider's error, after the retries) for the model `model` at `target`. */
export function classifyRequestFailure(err: unknown, target: ModelTarget, model = target.modelId): ModelRequestFailure {
  const errors = chain(err);
  const endpoint = endpointOf(target.baseURL);
  const base = { model, endpoint };
  const status = field(errors, (e) => (typeof e.status === "number" ? e.status : undefined));
  const code = field(errors, (e) => (typeof e.code === "string" && /^E[A-Z]+$|^UND_ERR_/.test(e.code) ? e.code : undefined));
  const name = field(errors, (e) => (e instanceof Error && TIMEOUT_NAMES.has(e.name) ? e.name : e instanceof Error && TIMEOUT_NAMES.has(e.constructor.name) ? e.constructor.name : undefined));
  const where = endpoint || "the model's endpoint";
  const detail = plainDetail(err instanceof Error ? err.message : typeof err === "string" ? err : "");
  // A VS Code language model (no endpoint): its statuses are the editor's, not an HTTP server's,
  // and it has no key to set; its own words say what went wrong (vscodeLm/errors.ts writes them).
  if (target.baseURL === undefined) {
    // Ours (what to do), then the provider's words: kept whole up to a screenful.
    const own = plainDetail(err instanceof Error ? err.message : typeof err === "string" ? err : "", 800);
    return { ...base, kind: "other", summary: own ? `The request failed: ${own}` : "The request failed." };
  }
  if (status === 401 || status === 403) {
    return {
      ...base,
      kind: "auth",
      status,
      summary: status === 401
        ? `${where} did not accept the API key (401 Unauthorized). Set the model's API key, then retry.`
        : `${where} refused this API key access to the model (403 Forbidden). Check the key's permissions, or set another key.`,
    };
  }
  if (status === 404) {
    return { ...base, kind: "model_not_found", status, summary: `${where} has no model "${target.modelId}" (404 Not Found). Check the model id and the base URL in the model's settings.` };
  }
  if (status === 408 || status === 504 || (code && TIMEOUT_CODES.has(code)) || name) {
    return { ...base, kind: "timeout", ...(status ? { status } : {}), summary: `${where} did not answer in time. Retry, or check that the server is not overloaded.` };
  }
  if (code && REFUSED_CODES.has(code)) {
    return { ...base, kind: "connection_refused", summary: `Nothing accepted the connection at ${where}. Start the model server, or check the base URL in the model's settings.` };
  }
  if (code && UNREACHABLE_CODES.has(code)) {
    return { ...base, kind: "other", summary: `${where} could not be reached (${code}). Check the base URL and the network.` };
  }
  if (status !== undefined) return { ...base, kind: "other", status, summary: `${where} answered with status ${status}${detail ? `: ${detail}` : "."}` };
  return { ...base, kind: "other", summary: detail ? `The request failed: ${detail}` : "The request failed." };
}

/** DeerFlow's circuit breaker is open for the endpoint: no request was sent. */
export function circuitOpenFailure(target: ModelTarget, model = target.modelId): ModelRequestFailure {
  const endpoint = endpointOf(target.baseURL);
  return { kind: "other", model, endpoint, summary: `Requests to ${endpoint || "the model's endpoint"} failed repeatedly, so DeerFlow pauses them for a moment. Retry shortly.` };
}
