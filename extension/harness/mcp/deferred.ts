/**
 * Deferred tools and `tool_search` (issue 23), DeerFlow's `tools/builtins/tool_search.py`: past a
 * size, MCP tool schemas stay out of the model's request. The model sees their names in
 * `<available-deferred-tools>` in the system prompt and fetches the schemas it needs with
 * `tool_search(query)`; a fetched tool is "promoted" (state channel `promoted`, scoped by the
 * catalog's hash so a stale promotion never exposes a renamed or drifted tool) and callable from
 * then on. DeferredToolFilter (middlewares/deferredToolFilter.ts) hides what is not promoted and
 * refuses a call to it; McpRouting (middlewares/mcpRouting.ts) promotes by the user's words.
 *
 * The catalog is immutable and the tool a closure over it: "there is no ContextVar". A tool is
 * deferred when it carries the MCP tag (tools.ts), whatever its source.
 *
 * When: `tool_search.enabled: true` always; `false` never; unset (the default here), when the
 * run has more MCP tools than `tool_search.auto_threshold` (40) — Copilot's "virtual tools" past
 * a threshold, for the users whose dozens of MCP tools crowd the context (wave3-anchors §1.6).
 */
import { createHash } from "node:crypto";
import { tool } from "langchain";
import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { convertToOpenAIFunction } from "@langchain/core/utils/function_calling";
import { Command, isCommand } from "@langchain/langgraph";
import { z } from "zod";
import { canonicalJson } from "./config.js";
import { isMcpTool, mcpToolInfo } from "./tools.js";

export { mergePromoted, type PromotedTools } from "../state/reducers.js";

/** DeerFlow's MAX_RESULTS: ranked searches return at most this many; `select:` is uncapped. */
export const MAX_RESULTS = 5;
export const TOOL_SEARCH_NAME = "tool_search";
export const DEFAULT_AUTO_THRESHOLD = 40;
export const DEFAULT_AUTO_PROMOTE_TOP_K = 3;

/** DeerFlow's `clamp_auto_promote_top_k`: 1..5. */
export function clampTopK(value: number): number {
  return Math.max(1, Math.min(5, Math.trunc(value)));
}

/** Case-insensitive, a literal match when the model's query is not a valid regex. */
function catalogRegex(pattern: string, flags = "i"): RegExp {
  try {
    return new RegExp(pattern, flags);
  } catch {
    return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), flags);
  }
}

function searchable(t: StructuredToolInterface): string {
  return `${t.name} ${t.description ?? ""}`;
}

export class DeferredToolCatalog {
  readonly names: ReadonlySet<string>;
  readonly hash: string;

  constructor(readonly tools: readonly StructuredToolInterface[]) {
    this.names = new Set(tools.map((t) => t.name));
    const canon = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((t) => ({ name: t.name, schema: convertToOpenAIFunction(t) }));
    this.hash = createHash("sha256").update(canonicalJson(canon)).digest("hex").slice(0, 16);
  }

  search(rawQuery: string): StructuredToolInterface[] {
    const query = rawQuery.trim();
    if (query === "") return [];
    if (query.startsWith("select:")) {
      const wanted = new Set(query.slice(7).split(",").map((n) => n.trim()));
      return this.tools.filter((t) => wanted.has(t.name));
    }
    if (query.startsWith("+")) {
      const parts = query.slice(1).trim().split(/\s+/).filter(Boolean);
      const required = parts[0]?.toLowerCase();
      if (!required) return [];
      const candidates = this.tools.filter((t) => t.name.toLowerCase().includes(required));
      const rest = query.slice(1).trim().slice(parts[0]!.length).trim();
      if (rest) {
        const score = (t: StructuredToolInterface) => searchable(t).match(catalogRegex(rest, "gi"))?.length ?? 0;
        candidates.sort((a, b) => score(b) - score(a));
      }
      return candidates.slice(0, MAX_RESULTS);
    }
    const regex = catalogRegex(query);
    const scored: Array<[number, StructuredToolInterface]> = [];
    for (const t of this.tools) {
      if (regex.test(searchable(t))) scored.push([regex.test(t.name) ? 2 : 1, t]);
    }
    // A stable sort: equal scores keep the catalog's order, as Python's sort does.
    scored.sort((a, b) => b[0] - a[0]);
    return scored.map(([, t]) => t).slice(0, MAX_RESULTS);
  }
}

const DESCRIPTION = `Fetches full schema definitions for deferred tools so they can be called.

Deferred tools appear by name in <available-deferred-tools> in the system prompt. Until fetched, only the name is known. This tool matches a query against the deferred tools and returns the matched tools complete schemas; once returned, a tool becomes callable.

Query forms:
  - "select:Read,Edit" -- fetch these exact tools by name
  - "notebook jupyter" -- keyword search, up to max_results best matches
  - "+slack send" -- require "slack" in the name, rank by remaining terms`;

export function toolSearchTool(catalog: DeferredToolCatalog): StructuredToolInterface {
  return tool(
    ({ query }: { query: string }, config?: { toolCall?: { id?: string } }) => {
      const matched = catalog.search(query);
      const content = matched.length === 0 ? `No tools found matching: ${query}` : JSON.stringify(matched.map((t) => convertToOpenAIFunction(t)), null, 2);
      return new Command({
        update: {
          promoted: { catalog_hash: catalog.hash, names: matched.map((t) => t.name) },
          messages: [new ToolMessage({ content, tool_call_id: config?.toolCall?.id ?? "", name: TOOL_SEARCH_NAME })],
        },
      });
    },
    { name: TOOL_SEARCH_NAME, description: DESCRIPTION, schema: z.object({ query: z.string() }) },
  );
}

/** DeerFlow's text when a tool_search result cannot be checked against the active skill's policy. */
export const TOOL_SEARCH_POLICY_ERROR = "Error: tool_search returned a result that could not be validated against the active skill policy.";

/**
 * tool_search's answer under an active skill's `allowed-tools` (DeerFlow
 * `SkillToolPolicyMiddleware._filter_tool_search_result`): the denied tools' schemas leave the
 * result and their names leave `promoted`, so discovery never shows the model a tool the skill
 * took away. Anything but the shape toolSearchTool returns fails closed with DeerFlow's text.
 */
export function restrictToolSearchResult(result: unknown, allowed: ReadonlySet<string>, toolCallId: string): ToolMessage | Command {
  const refuse = () => new ToolMessage({ content: TOOL_SEARCH_POLICY_ERROR, tool_call_id: toolCallId, name: TOOL_SEARCH_NAME, status: "error" });
  if (!isCommand(result) || typeof result.update !== "object" || result.update === null || Array.isArray(result.update)) return refuse();
  const update = result.update;
  const promoted = update.promoted as { catalog_hash?: unknown; names?: unknown } | undefined;
  const messages = update.messages;
  if (!promoted || !Array.isArray(promoted.names) || !promoted.names.every((n) => typeof n === "string") || !Array.isArray(messages) || messages.length !== 1) return refuse();
  const message: unknown = messages[0];
  if (!ToolMessage.isInstance(message) || typeof message.content !== "string") return refuse();
  const names = promoted.names.filter((n) => allowed.has(n));
  let content = message.content;
  if (promoted.names.length > 0) {
    let schemas: unknown;
    try {
      schemas = JSON.parse(content);
    } catch {
      return refuse();
    }
    if (!Array.isArray(schemas)) return refuse();
    const kept = schemas.filter((x) => typeof x === "object" && x !== null && names.includes(String((x as { name?: unknown }).name)));
    content = kept.length > 0 ? JSON.stringify(kept, null, 2) : "No tools found matching the active skill policy.";
  }
  return new Command({
    update: {
      ...update,
      promoted: { ...promoted, names },
      messages: [new ToolMessage({ content, tool_call_id: message.tool_call_id, name: TOOL_SEARCH_NAME })],
    },
  });
}

/** What one agent build defers: empty (no tool_search) or populated; the three move together. */
export interface DeferredSetup {
  readonly toolSearch?: StructuredToolInterface;
  readonly names: ReadonlySet<string>;
  readonly hash?: string;
  /** Deferred tools whose routing is `prefer`, for McpRouting: name → priority and keywords. */
  readonly routing: ReadonlyMap<string, { priority: number; keywords: readonly string[] }>;
}

export const NO_DEFERRAL: DeferredSetup = { names: new Set(), routing: new Map() };

export interface ToolSearchSettings {
  /** true: always; false: never; undefined: above `autoThreshold` MCP tools. */
  readonly enabled?: boolean;
  readonly autoThreshold: number;
  readonly autoPromoteTopK: number;
}

export function deferralEnabled(mcpToolCount: number, s: ToolSearchSettings | undefined): boolean {
  if (!s || mcpToolCount === 0) return false;
  return s.enabled ?? mcpToolCount > s.autoThreshold;
}

/**
 * DeerFlow's `assemble_deferred_tools`, shared by the lead and the subagents: every MCP-tagged
 * candidate is deferred and `tool_search` is appended to `tools` (in place). Fail-closed: MCP
 * candidates with deferral on but no deferred set is an error, never their schemas bound.
 */
export function assembleDeferredTools(tools: StructuredToolInterface[], s: ToolSearchSettings | undefined): DeferredSetup {
  const candidates = tools.filter((t) => isMcpTool(t));
  if (!deferralEnabled(candidates.length, s)) return NO_DEFERRAL;
  const catalog = new DeferredToolCatalog(candidates);
  if (catalog.names.size === 0) {
    throw new Error("tool_search enabled and MCP candidates exist, but no deferred set was recovered - refusing to bind MCP schemas (fail-closed).");
  }
  const routing = new Map<string, { priority: number; keywords: readonly string[] }>();
  for (const t of candidates) {
    const r = mcpToolInfo(t)?.routing;
    if (r?.mode === "prefer" && r.keywords.length > 0) routing.set(t.name, { priority: r.priority, keywords: r.keywords });
  }
  const toolSearch = toolSearchTool(catalog);
  tools.push(toolSearch);
  return { toolSearch, names: catalog.names, hash: catalog.hash, routing };
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** `<available-deferred-tools>`: the names, sorted, escaped (a server's name cannot forge a tag). */
export function deferredToolsPromptSection(names: ReadonlySet<string>): string {
  if (names.size === 0) return "";
  return `<available-deferred-tools>\n${[...names].sort().map(escapeHtml).join("\n")}\n</available-deferred-tools>`;
}

function keywordList(k: readonly string[]): string {
  return k.length === 1 ? k[0]! : `${k.slice(0, -1).join(", ")}, or ${k.at(-1)}`;
}

/** DeerFlow's `<mcp_routing_hints>`: prefer an MCP tool for matching requests (fetch it first when deferred). */
export function routingHintsPromptSection(tools: readonly StructuredToolInterface[], deferred: ReadonlySet<string>): string {
  const hints: Array<[number, string, string[]]> = [];
  for (const t of tools) {
    const r = mcpToolInfo(t)?.routing;
    if (r?.mode !== "prefer" || r.keywords.length === 0) continue;
    hints.push([r.priority, t.name, r.keywords.map(escapeHtml)]);
  }
  if (hints.length === 0) return "";
  hints.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const lines = ["<mcp_routing_hints>"];
  for (const [, name, keywords] of hints) {
    lines.push(`When the user's request involves ${keywordList(keywords)}:`);
    lines.push(deferred.has(name) ? `  use \`tool_search\` to fetch \`${escapeHtml(name)}\`, then prefer that MCP tool.` : `  prefer the \`${escapeHtml(name)}\` tool.`);
  }
  lines.push("</mcp_routing_hints>");
  return lines.join("\n");
}
