/**
 * DeerFlow's MCP routing (`mcp/routing.py`, issue 23): a server's `routing` applies to every tool
 * it has, a tool's `tools.<t>.routing` overrides only the fields it names. Read by config.ts
 * (the schema) and registry.ts (each tool's routing); the hints and the auto-promotion that use
 * it are deferred.ts's and middlewares/mcpRouting.ts's.
 */
import { z } from "zod";
import type { McpRouting, McpServerDefinition } from "./types.js";

export const RoutingZ = z
  .object({
    mode: z.enum(["off", "prefer"]).default("off"),
    // DeerFlow clamps the priority to 0..100.
    priority: z.number().int().transform((p) => Math.max(0, Math.min(100, p))).default(0),
    keywords: z.array(z.string()).default([]),
  })
  .strict();

/**
 * A per-tool override (`tools.<t>.routing`) replaces only the fields it names (DeerFlow
 * `test_tool_routing_override_only_replaces_explicit_fields`): no defaults here, since
 * `RoutingZ.partial()` would still fill `mode: off, keywords: []` and switch the server's routing off.
 */
export const RoutingOverrideZ = z
  .object({
    mode: z.enum(["off", "prefer"]).optional(),
    priority: z.number().int().transform((p) => Math.max(0, Math.min(100, p))).optional(),
    keywords: z.array(z.string()).optional(),
  })
  .strict();

/** A tool's routing: the server's, with the fields its override names replaced. */
export function toolRoutingOf(def: Pick<McpServerDefinition, "routing" | "toolRouting">, tool: string): McpRouting {
  const o = def.toolRouting[tool] ?? {};
  return {
    mode: o.mode ?? def.routing.mode,
    priority: o.priority ?? def.routing.priority,
    keywords: o.keywords ?? def.routing.keywords,
  };
}

/** A server's routing as written, or off. */
export function routingOf(r: z.infer<typeof RoutingZ> | undefined): McpRouting {
  return r ? { mode: r.mode, priority: r.priority, keywords: r.keywords } : { mode: "off", priority: 0, keywords: [] };
}
