/**
 * DeferredToolFilterMiddleware (DeerFlow slot [25], `deferred_tool_filter_middleware.py`; issue
 * 23): with deferred tools (mcp/deferred.ts), the tool node still holds every MCP tool, but the
 * model's request carries only the schemas the thread has promoted with `tool_search` (state
 * `promoted`, under this build's catalog hash: a promotion of another catalog is ignored). A call
 * to a deferred tool that is not promoted is refused with DeerFlow's error, before it runs.
 *
 * Wrap-only, as in DeerFlow: no graph step. The deferred set and the hash come at construction
 * (no ContextVar); promotion is read from state.
 */
import { createMiddleware } from "langchain";
import { ToolMessage } from "@langchain/core/messages";
import { StateSchema } from "@langchain/langgraph";
import { threadStateFields } from "../state/threadState.js";
import type { PromotedTools } from "../state/reducers.js";

export interface DeferredToolFilterOptions {
  readonly names: ReadonlySet<string>;
  readonly hash: string;
}

const promotedState = new StateSchema({ promoted: threadStateFields.promoted });

/** The deferred tools still hidden in this state. */
export function hiddenTools(o: DeferredToolFilterOptions, state: unknown): Set<string> {
  const promoted = (state as { promoted?: PromotedTools | null } | undefined)?.promoted;
  const shown = promoted && promoted.catalog_hash === o.hash ? new Set(promoted.names) : new Set<string>();
  return new Set([...o.names].filter((n) => !shown.has(n)));
}

export function deferredBlockedMessage(name: string, toolCallId: string): ToolMessage {
  return new ToolMessage({
    content: `Error: Tool '${name}' is deferred and has not been promoted yet. Call tool_search first to expose and promote this tool's schema, then retry.`,
    tool_call_id: toolCallId || "missing_tool_call_id",
    name,
    status: "error",
  });
}

export function deferredToolFilterMiddleware(o: DeferredToolFilterOptions) {
  return createMiddleware({
    name: "DeferredToolFilterMiddleware",
    stateSchema: promotedState,
    wrapModelCall: (request, handler) => {
      const hide = hiddenTools(o, request.state);
      if (hide.size === 0) return handler(request);
      const tools = (request.tools ?? []).filter((t) => !hide.has((t as { name?: string }).name ?? ""));
      return handler({ ...request, tools });
    },
    wrapToolCall: (request, handler) => {
      const name = request.toolCall.name ?? "";
      if (name && hiddenTools(o, request.state).has(name)) return deferredBlockedMessage(name, request.toolCall.id ?? "");
      return handler(request);
    },
  });
}
