/**
 * An MCP server's tools as LangChain tools (issue 23). Each keeps, in `metadata.deerflow_mcp`
 * (DeerFlow's tag, `tools/mcp_metadata.py`), the server, the original tool name, the config's
 * trust scope and the server's annotations: the approval class (approvals/classify.ts), deferral
 * (./deferred.ts) and the call itself route by this, never by parsing the model-facing name.
 *
 * Results become one ToolMessage, so the chain's result pipeline treats them like any tool's
 * (ToolOutputBudget externalises a large one, ToolResultSanitization neutralises the harness's
 * tags in it), with `additional_kwargs.deerflow_mcp: {server, tool}` for the journal:
 * - text blocks and text resources: the text; a resource link: its name, URI and type;
 * - images: stored in the blob store and added to `viewed_images` for a vision model (the view-
 *   image cache: injected into the next request only, never in state as base64); a placeholder
 *   line otherwise; other binary content: a placeholder with its type and size;
 * - `structuredContent` with no text: its JSON;
 * - `isError`: an error result the model can act on.
 */
import { tool } from "langchain";
import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { BlobStore } from "../store/blobs.js";
import type { ViewedImage } from "../state/reducers.js";
import { MAX_IMAGE_BYTES, sniffImageMime } from "../tools/imageFormat.js";
import type { McpRouting, McpTrustScope } from "./types.js";

export const MCP_TOOL_METADATA_KEY = "deerflow_mcp";

export interface McpToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** What a tool carries about where it comes from (the one tag; ./tools.ts writes it, everyone else reads it). */
export interface McpToolInfo {
  readonly server: string;
  /** The server's own name for the tool: what tools/call receives. */
  readonly tool: string;
  readonly scope: McpTrustScope;
  /** A user-config server's `always_allow` names this tool. */
  readonly alwaysAllowed: boolean;
  readonly annotations: McpToolAnnotations;
  /** DeerFlow's routing, when not `off`. */
  readonly routing?: McpRouting;
}

export function mcpToolInfo(t: object): McpToolInfo | undefined {
  const info = (t as { metadata?: Record<string, unknown> }).metadata?.[MCP_TOOL_METADATA_KEY];
  return info && typeof info === "object" ? (info as McpToolInfo) : undefined;
}

export function isMcpTool(t: object): boolean {
  return mcpToolInfo(t) !== undefined;
}

/** Calls the tool on the thread's session (registry.ts): bounded by tool_call_timeout and the run's signal. */
export type McpCaller = (args: Record<string, unknown>, signal: AbortSignal | undefined) => Promise<CallToolResult>;

export interface ResultContext {
  readonly blobs?: BlobStore;
  readonly supportsVision: boolean;
}

const MAX_DESCRIPTION = 4000;

export function buildMcpTool(name: string, t: Tool, info: McpToolInfo, call: McpCaller, ctx: ResultContext): StructuredToolInterface {
  const schema = (t.inputSchema ?? { type: "object", properties: {} }) as Record<string, unknown>;
  const description = (t.description ?? t.title ?? `${info.tool} (MCP server ${info.server})`).slice(0, MAX_DESCRIPTION);
  return tool(
    async (args: Record<string, unknown>, config?: { signal?: AbortSignal; toolCall?: { id?: string } }) => {
      const result = await call(args ?? {}, config?.signal);
      return toToolResult(result, name, config?.toolCall?.id ?? "", info, ctx);
    },
    {
      name,
      description,
      // The server's JSON Schema as is: langchain validates the call against it, providers get it verbatim.
      schema: { ...schema, type: "object" } as never,
      metadata: { [MCP_TOOL_METADATA_KEY]: info },
    },
  );
}

type Block = CallToolResult["content"][number];

/** An MCP CallToolResult as the tool's result (a ToolMessage, or a Command when an image joins the view-image cache). */
export function toToolResult(result: CallToolResult, name: string, toolCallId: string, info: McpToolInfo, ctx: ResultContext): ToolMessage | Command {
  const parts: string[] = [];
  const images: Record<string, ViewedImage> = {};
  const blocks: Block[] = Array.isArray(result.content) ? result.content : [];
  blocks.forEach((b, i) => {
    switch (b.type) {
      case "text":
        parts.push(b.text);
        break;
      case "image": {
        const seen = viewImage(b.data, b.mimeType, `mcp://${info.server}/${info.tool}/${toolCallId}/${i}`, ctx, images);
        parts.push(seen);
        break;
      }
      case "audio":
        parts.push(`[audio ${b.mimeType}, ${approxBytes(b.data)} bytes: not shown]`);
        break;
      case "resource_link":
        parts.push(`[resource: ${b.name}${b.title ? ` (${b.title})` : ""} <${b.uri}>${b.mimeType ? ` ${b.mimeType}` : ""}]`);
        break;
      case "resource": {
        const r = b.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
        if (typeof r.text === "string") parts.push(r.text);
        else if (typeof r.blob === "string" && r.mimeType?.startsWith("image/")) parts.push(viewImage(r.blob, r.mimeType, r.uri, ctx, images));
        else parts.push(`[resource <${r.uri}>${r.mimeType ? ` ${r.mimeType}` : ""}, ${approxBytes(r.blob ?? "")} bytes: not shown]`);
        break;
      }
      default:
        parts.push(JSON.stringify(b));
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join("\n");
  const isError = result.isError === true;
  const message = new ToolMessage({
    content: isError ? `Error: ${text || "the MCP tool reported an error without a message"}` : text || "(the tool returned no content)",
    tool_call_id: toolCallId,
    name,
    ...(isError ? { status: "error" as const } : {}),
    additional_kwargs: { [MCP_TOOL_METADATA_KEY]: { server: info.server, tool: info.tool } },
  });
  if (Object.keys(images).length === 0) return message;
  return new Command({ update: { viewed_images: images, messages: [message] } });
}

function approxBytes(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}

/** Into the view-image cache when the model can see it; the line the model reads either way. */
function viewImage(data: string, mime: string, key: string, ctx: ResultContext, images: Record<string, ViewedImage>): string {
  const bytes = Buffer.from(data, "base64");
  if (!ctx.supportsVision || !ctx.blobs) return `[image ${mime}, ${bytes.length} bytes: this model cannot see images]`;
  if (bytes.length > MAX_IMAGE_BYTES) return `[image ${mime}, ${bytes.length} bytes: too large to show (max ${MAX_IMAGE_BYTES})]`;
  const actual = sniffImageMime(bytes);
  if (!actual) return `[image ${mime}, ${bytes.length} bytes: not a supported image format]`;
  const sha256 = ctx.blobs.put(bytes, actual);
  images[key] = { mime_type: actual, size: bytes.length, sha256 };
  return `[image ${actual}, ${bytes.length} bytes: you see it in your next request]`;
}

/** The run's MCP tools by model-facing name, for the approval classes (approvals/classify.ts). */
export function mcpToolIndex(tools: readonly object[]): Map<string, McpToolInfo> {
  const index = new Map<string, McpToolInfo>();
  for (const t of tools) {
    const info = mcpToolInfo(t);
    if (info) index.set((t as { name: string }).name, info);
  }
  return index;
}
