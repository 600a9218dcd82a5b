/**
 * The class of one tool call (issue 13): read, write, protected, shell or other. The write/protected
 * split is the trust boundary's own classification (trust/protectedPaths.ts), on the path
 * as written and where its links lead; this module never re-implements a path rule.
 */
import type { ThreadDirs } from "../threads/threadDirs.js";
import { isSkillsPath, mapVirtualPath } from "../sandbox/paths.js";
import { classifyWrite } from "../trust/protectedPaths.js";
import type { ToolClass } from "./policy.js";
import type { McpToolInfo } from "../mcp/tools.js";
import { checkUrl, WebFetchError } from "../tools/webRequest.js";

/** Tools that only read the thread's files, or change nothing outside the thread's own state. */
const READ_TOOLS = new Set(["ls", "read_file", "glob", "grep", "view_image", "present_files", "describe_skill"]);
/** The harness's own control tools: they end a turn or keep a list in state; nothing runs. */
const CONTROL_TOOLS = new Set(["ask_clarification", "write_todos", "tool_search"]);
const WRITE_TOOLS = new Set(["write_file", "str_replace"]);

export interface CallClass {
  class: ToolClass;
  /** Why the call has this class, as the approval card shows it. */
  reason: string;
  /**
   * The call cannot do what its class is about (bash on the host with host commands off only
   * answers that it is disabled), so it never needs a decision.
   */
  inert?: boolean;
  /**
   * The user's own configuration lets this call run without asking (an MCP server's
   * `always_allow` in a user file, issue 23): an `ask` becomes `auto`; a `deny` still refuses.
   */
  preapproved?: boolean;
  /** An MCP tool: where it comes from, for the approval card. */
  mcp?: McpToolInfo;
}

export interface ClassifyContext {
  dirs: ThreadDirs;
  sandboxKind: "local" | "devcontainer";
  allowHostCommands: boolean;
  /** This run's MCP tools by the name the model sees (their `deerflow_mcp` tag, mcp/tools.ts). */
  mcpTools?: ReadonlyMap<string, McpToolInfo>;
  /** web_fetch's `allow_private_addresses` (config/webTools.ts), so a URL it would refuse never asks. */
  webAllowPrivateAddresses?: boolean;
}

const MAX_SHOWN = 200;

function shown(text: string): string {
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text;
}

/**
 * The class a tool's calls have before their arguments are known, for what the model is offered
 * (middlewares/approval.ts unbinds a tool whose class the policy denies). A write tool counts as
 * `write`: `protected` narrows a write by its path, so a policy that denies ordinary writes
 * denies the tool; its protected calls are still refused one by one when the model calls anyway.
 */
export function toolClassOf(name: string): ToolClass {
  if (READ_TOOLS.has(name) || CONTROL_TOOLS.has(name) || name === "task") return "read";
  if (WRITE_TOOLS.has(name)) return "write";
  if (name === "bash") return "shell";
  if (name === "web_fetch") return "web";
  return "other";
}

export function classifyToolCall(call: { name: string; args?: unknown }, ctx: ClassifyContext): CallClass {
  const args = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>;
  // A skill's files never ask (the agentskills guide: skill folders are allowlisted for reads);
  // only a `deny` of reads still stops them. /mnt/skills is read-only whatever the policy.
  if (READ_TOOLS.has(call.name) && typeof args.path === "string" && isSkillsPath(args.path)) return { class: "read", reason: "reads a skill's files", inert: true };
  // An MCP tool by its tag, never by its name's shape: a server cannot name a tool `read_file`
  // and be taken for ours (the lead keeps the built-in on a collision, and this map has only MCP tools).
  const mcp = ctx.mcpTools?.get(call.name);
  if (mcp) return mcpClass(mcp);
  if (READ_TOOLS.has(call.name)) return { class: "read", reason: "reads the thread's files" };
  if (CONTROL_TOOLS.has(call.name)) return { class: "read", reason: "changes only the conversation's own state" };
  // Delegation itself runs nothing: each of the subagent's calls meets this policy (subagents/approval.ts).
  if (call.name === "task") return { class: "read", reason: "delegates to a subagent, whose every tool call is checked against this policy" };
  if (WRITE_TOOLS.has(call.name)) {
    const path = typeof args.path === "string" ? args.path : "";
    if (isSkillsPath(path)) return { class: "write", reason: `writes ${shown(path)}, which the sandbox refuses (skills are read-only)` };
    let host: string | undefined;
    try {
      host = mapVirtualPath(path, ctx.dirs);
    } catch {
      // A path the boundary refuses anyway: the tool answers with the refusal, nothing is written.
      return { class: "write", reason: `writes ${shown(path || "(no path)")}, which the sandbox refuses` };
    }
    const verdict = classifyWrite(host, ctx.dirs);
    if (verdict.protected) {
      return { class: "protected", reason: `writes ${shown(path)}, a protected path (${verdict.rule.pattern}): ${verdict.rule.reason}` };
    }
    return { class: "write", reason: `writes ${shown(path)}` };
  }
  if (call.name === "bash") {
    const command = typeof args.command === "string" ? args.command : "";
    if (ctx.sandboxKind === "devcontainer") return { class: "shell", reason: `runs a command in the dev container: ${shown(command)}` };
    if (!ctx.allowHostCommands) return { class: "shell", reason: "host commands are off: the call only answers that", inert: true };
    return { class: "shell", reason: `runs a command on this machine: ${shown(command)}` };
  }
  if (call.name === "web_fetch") return webClass(args, ctx);
  return { class: "other", reason: `${call.name} is a tool without a known class` };
}

/**
 * A web fetch (issue 35): class `web`, the card names the address. A URL the network guard
 * refuses before any lookup (not http(s), a loopback or private literal, `localhost`) never asks:
 * the call only answers with the refusal (an approval card is a promise that the call can run).
 */
function webClass(args: Record<string, unknown>, ctx: ClassifyContext): CallClass {
  const url = typeof args.url === "string" ? args.url : "";
  try {
    const parsed = checkUrl(url, ctx.webAllowPrivateAddresses ?? false);
    return { class: "web", reason: `fetches ${shown(parsed.href)} from ${parsed.hostname}` };
  } catch (err) {
    if (!(err instanceof WebFetchError)) throw err;
    return { class: "web", reason: `fetches ${shown(url || "(no URL)")}, which the network guard refuses`, inert: true };
  }
}

/**
 * An MCP call's class (issue 23): `mcp`, whatever the server's annotations say; they go on the
 * card as the server's own words. A user-config server's `always_allow` pre-approves the tool.
 */
function mcpClass(info: McpToolInfo): CallClass {
  const a = info.annotations;
  const hints = [a.readOnlyHint && "read-only", a.destructiveHint && "destructive", a.openWorldHint && "reaches outside (open world)"].filter(Boolean);
  const said = hints.length > 0 ? `; the server says it is ${hints.join(", ")}` : "";
  const from = info.scope === "user" ? "your configuration" : "a workspace file";
  return {
    class: "mcp",
    reason: `calls ${info.tool} on MCP server ${info.server} (from ${from})${said}`,
    mcp: info,
    ...(info.scope === "user" && info.alwaysAllowed ? { preapproved: true } : {}),
  };
}
