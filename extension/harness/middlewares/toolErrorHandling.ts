/**
 * ToolErrorHandlingMiddleware (DeerFlow `tool_error_handling_middleware.py`): a tool that throws
 * becomes an error ToolMessage the model can read, and the run goes on.
 *
 * Needed here even more than in Python: once any `wrapToolCall` middleware exists, langchain's
 * ToolNode re-raises tool exceptions instead of answering them (only argument-schema errors are
 * still turned into messages), which would end the whole run.
 *
 * LangGraph control flow (GraphInterrupt and other bubble-ups) is re-raised, never converted, and so
 * is a cancellation: an aborted run must end `interrupted`, not feed the model an error.
 *
 * Not ported: DeerFlow's `deerflow_tool_meta` stamping of *successful* results and the skill-read
 * metadata (no skills yet); the `task` tool formatter (no subagents yet).
 */
import { createMiddleware, ToolMessage } from "langchain";
import { isGraphBubbleUp } from "@langchain/langgraph";

const RECOVERY_HINT = "Continue with available context, or choose an alternative tool.";
const MISSING_TOOL_CALL_ID = "missing_tool_call_id";
const MAX_DETAIL = 500;

/** langchain wraps errors from inner middlewares (MiddlewareError) and argument errors (ToolInvocationError). */
function rootCause(err: unknown): unknown {
  let e = err;
  for (let depth = 0; depth < 10; depth++) {
    if (!(e instanceof Error)) return e;
    const brand = (e as { "~brand"?: unknown })["~brand"];
    if (brand === "MiddlewareError" && e.cause !== undefined) e = e.cause;
    else if (brand === "ToolInvocationError" && (e as { toolError?: unknown }).toolError !== undefined) e = (e as unknown as { toolError: unknown }).toolError;
    else return e;
  }
  return e;
}

/** Node's network error codes: a retry may well succeed (DeerFlow's `transient`). */
const TRANSIENT_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "UND_ERR_SOCKET"]);
/**
 * DeerFlow classifies exception text by pattern; this applies only to errors thrown by third-party
 * code inside a tool (our own errors carry codes and are returned as "Error: ..." strings).
 */
const TRANSIENT_TEXT = /network|timed? ?out|connection (reset|refused|aborted)|temporarily unavailable/i;

function errorType(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && TRANSIENT_CODES.has(code)) return "transient";
    if (err.name === "TimeoutError" || TRANSIENT_TEXT.test(err.message)) return "transient";
    if (err.constructor.name === "ToolInputParsingException") return "invalid_arguments";
  }
  return "internal";
}

export function toolErrorMessage(toolCall: { name?: string; id?: string }, err: unknown): ToolMessage {
  const cause = rootCause(err);
  const name = toolCall.name || "unknown_tool";
  // Python prints the class name; JS errors often leave `name` as "Error" (ToolInputParsingException does).
  const excType = cause instanceof Error ? (cause.name && cause.name !== "Error" ? cause.name : cause.constructor.name || "Error") : typeof cause;
  let detail = (cause instanceof Error ? cause.message : String(cause)).trim() || excType;
  if (detail.length > MAX_DETAIL) detail = `${detail.slice(0, MAX_DETAIL - 3)}...`;
  return new ToolMessage({
    content: `Error: Tool '${name}' failed with ${excType}: ${detail}. ${RECOVERY_HINT}`,
    tool_call_id: toolCall.id || MISSING_TOOL_CALL_ID,
    name,
    status: "error",
    additional_kwargs: {
      deerflow_tool_meta: {
        status: "error",
        error_type: errorType(cause),
        recoverable_by_model: true,
        recommended_next_action: "choose_alternative",
        source: "exception",
      },
    },
  });
}

export function toolErrorHandlingMiddleware() {
  return createMiddleware({
    name: "ToolErrorHandlingMiddleware",
    wrapToolCall: async (request, handler) => {
      try {
        return await handler(request);
      } catch (err) {
        if (isGraphBubbleUp(err)) throw err;
        if (request.runtime.signal?.aborted) throw err;
        return toolErrorMessage(request.toolCall, err);
      }
    },
  });
}
