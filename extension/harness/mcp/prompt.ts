/**
 * What the system prompt says about MCP tools (issue 23), after DeerFlow's lead prompt: the
 * `<available-deferred-tools>` section when tools are deferred, then `<mcp_routing_hints>`. Both
 * are static for a run's tool set, so the prompt stays cacheable.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import { deferredToolsPromptSection, routingHintsPromptSection, type DeferredSetup } from "./deferred.js";

export function mcpPromptSections(tools: readonly StructuredToolInterface[], deferred: DeferredSetup): string {
  return [deferredToolsPromptSection(deferred.names), routingHintsPromptSection(tools, deferred.names)].filter(Boolean).join("\n\n");
}
