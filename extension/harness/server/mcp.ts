/**
 * `mcp/list` and `mcp/approve` (issue 23): the panel's MCP Servers section and the notification's
 * Allow, on the folder's registry for its runs' sandbox (workspaces.ts), the one its runs use.
 */
import type { RequestParams, RequestResult } from "../../protocol/rpc.js";
import { HarnessError } from "../errors.js";
import { McpConfigChanged } from "../mcp/registry.js";
import type { Workspaces } from "./workspaces.js";

export async function mcpList(workspaces: Workspaces, p: RequestParams<"mcp/list">): Promise<RequestResult<"mcp/list">> {
  const ws = workspaces.get(p.workspaceFolder);
  const registry = workspaces.mcpRegistry(ws, workspaces.sandbox(ws));
  return p.start ? registry.start() : registry.list();
}

export function mcpApprove(workspaces: Workspaces, p: RequestParams<"mcp/approve">): RequestResult<"mcp/approve"> {
  const ws = workspaces.get(p.workspaceFolder);
  const registry = workspaces.mcpRegistry(ws, workspaces.sandbox(ws));
  const listed = registry.list().servers.find((s) => s.name === p.server);
  if (!listed) throw new HarnessError("mcp_server_not_found", `No MCP server '${p.server}' in the configuration of ${ws.folder}.`);
  if (listed.source.scope === "user") throw new HarnessError("usage", `MCP server '${p.server}' is from your own configuration (${listed.source.label}): it needs no approval.`);
  try {
    return registry.approve(p.server, p.fingerprint)!;
  } catch (err) {
    if (err instanceof McpConfigChanged) throw new HarnessError("mcp_config_changed", err.message);
    throw err;
  }
}
