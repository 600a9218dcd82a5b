/**
 * The names the model sees for MCP tools (issue 23): DeerFlow's `<server>_<tool>` (its
 * `tool_name_prefix`, default on), within `^[A-Za-z0-9_-]{1,64}$` — what function-calling APIs
 * accept (OpenAI's 64) and what VS Code's `^[\w-]+$` allows. Characters outside it become `_`;
 * a longer name keeps its head and gets an 8-hex sha256 suffix of the full name, so two long
 * names never shorten to the same one (Cline's `name-transform.ts`). A name still taken (two
 * servers' tools meeting, or a built-in's name) is a collision: reported, and the later tool is
 * left out, as DeerFlow's "Duplicate tool name … skipped".
 *
 * The name is for the model only: a call is routed by the tool object, which keeps its server
 * and its original name (tools.ts), never by parsing this name back (DeerFlow's mcp/AGENTS.md).
 */
import { createHash } from "node:crypto";

export const MAX_TOOL_NAME = 64;
export const VALID_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function sanitizeName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, "_");
}

export function modelToolName(server: string, tool: string, prefix: boolean): string {
  const full = prefix ? `${sanitizeName(server)}_${sanitizeName(tool)}` : sanitizeName(tool);
  if (full.length === 0) return `mcp_${hash8(`${server}\0${tool}`)}`;
  if (full.length <= MAX_TOOL_NAME) return full;
  const suffix = hash8(prefix ? `${server}\0${tool}` : tool);
  return `${full.slice(0, MAX_TOOL_NAME - 9)}_${suffix}`;
}

function hash8(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}
