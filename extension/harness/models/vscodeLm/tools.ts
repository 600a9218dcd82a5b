/**
 * Tool schemas as the LM API takes them (`LanguageModelChatTool`): a name matching ^[\w-]+$ of at
 * most 64 characters, a description, a JSON schema; at most 128 tools per request (Copilot refuses
 * more: "Cannot have more than 128 tools per request"). Our tool names are already plain
 * (`bash`, `read_file`), an MCP tool's may not be (`server.tool`): such a name is sent with the
 * other characters as `_` and mapped back on the call, so the tool the model names is the one run.
 */
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import type { LmTool } from "../../../protocol/lm.js";

/** Copilot's cap (wave3-anchors §3.2); a consumer cannot see whether a model lifts it. */
export const MAX_LM_TOOLS = 128;
const NAME = /^[\w-]{1,64}$/;

/** A request's tools, and the way back from the names the model sees to ours. */
export interface LmToolSet {
  tools: LmTool[];
  /** LM name → our tool name (only where they differ). */
  original: Map<string, string>;
}

/** Thrown before any request is sent: the run ends with this text (it says what to do). */
export class LmToolsError extends Error {
  readonly code = "lm_tools";
  constructor(message: string) {
    super(message);
    this.name = "LmToolsError";
  }
}

export function toLmTools(tools: readonly unknown[]): LmToolSet {
  if (tools.length > MAX_LM_TOOLS) {
    throw new LmToolsError(
      `This run offers the model ${tools.length} tools, and a vscode.lm model takes at most ${MAX_LM_TOOLS} per request. Turn off some MCP servers (or their tools) for this workspace, or pick a model from deerflow.models.`,
    );
  }
  const original = new Map<string, string>();
  const out: LmTool[] = [];
  for (const tool of tools) {
    const fn = convertToOpenAITool(tool as Parameters<typeof convertToOpenAITool>[0]).function;
    const name = NAME.test(fn.name) ? fn.name : fn.name.replace(/[^\w-]/g, "_").slice(0, 64);
    if (original.has(name) || out.some((t) => t.name === name)) {
      throw new LmToolsError(`Two tools of this run have the same name for a vscode.lm model ("${name}"): rename one, or pick a model from deerflow.models.`);
    }
    if (name !== fn.name) original.set(name, fn.name);
    out.push({ name, description: fn.description ?? "", ...(fn.parameters ? { inputSchema: fn.parameters } : {}) });
  }
  return { tools: out, original };
}
