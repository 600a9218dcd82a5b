/**
 * McpRoutingMiddleware (DeerFlow slot [24], `mcp_routing_middleware.py`; issue 23): before a model
 * call, deferred MCP tools whose routing is `prefer` and one of whose keywords appears in the
 * user's latest message are promoted (at most `tool_search.auto_promote_top_k`, by priority then
 * name), so the model sees their schemas without a tool_search round trip. It only writes
 * `promoted`; DeferredToolFilter still hides and blocks everything else. Installed only when a
 * deferred tool has such routing, and before the filter (the chain's order).
 *
 * Where we differ: DeerFlow's is a `before_model` node hook; ours is the same hook, composed into
 * the one before_model node of the agent graph (agent/graph/build.ts), so it adds no step.
 */
import { createMiddleware } from "langchain";
import type { BaseMessage } from "@langchain/core/messages";
import { StateSchema } from "@langchain/langgraph";
import { threadStateFields } from "../state/threadState.js";
import { contentText, isGenuineUserMessage, ORIGINAL_USER_CONTENT_KEY } from "./shared/messages.js";
import { clampTopK } from "../mcp/deferred.js";

export interface McpRoutingOptions {
  readonly hash: string;
  readonly topK: number;
  readonly index: ReadonlyMap<string, { priority: number; keywords: readonly string[] }>;
}

const promotedState = new StateSchema({ promoted: threadStateFields.promoted });

/** The names to promote for the latest genuine user message. */
export function routedNames(o: McpRoutingOptions, messages: readonly BaseMessage[]): string[] {
  const target = [...messages].reverse().find(isGenuineUserMessage);
  if (!target) return [];
  const original = target.additional_kwargs[ORIGINAL_USER_CONTENT_KEY];
  const text = (typeof original === "string" ? original : contentText(target.content)).toLocaleLowerCase();
  if (!text) return [];
  const matched: Array<[number, string]> = [];
  for (const [name, { priority, keywords }] of o.index) {
    if (keywords.some((k) => k.trim() !== "" && text.includes(k.trim().toLocaleLowerCase()))) matched.push([priority, name]);
  }
  matched.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return matched.slice(0, clampTopK(o.topK)).map(([, n]) => n);
}

export function mcpRoutingMiddleware(o: McpRoutingOptions) {
  return createMiddleware({
    name: "McpRoutingMiddleware",
    stateSchema: promotedState,
    beforeModel: (state) => {
      const s = state as { messages: BaseMessage[]; promoted?: { catalog_hash: string; names: string[] } | null };
      const names = routedNames(o, s.messages);
      // Already promoted under this catalog: no write (no checkpoint row per model call).
      const have = s.promoted?.catalog_hash === o.hash ? new Set(s.promoted.names) : new Set<string>();
      return names.some((n) => !have.has(n)) ? { promoted: { catalog_hash: o.hash, names } } : undefined;
    },
  });
}
