/**
 * Calls the policy never classifies (issue 22): a call with no name, or naming a tool the agent
 * does not have, gets DeerFlow's error result and never an approval card. There is nothing to
 * approve: nothing would run. The texts are DeerFlow's: its DanglingToolCall recovery text for
 * a missing name, and the ToolNode's for an unknown tool (langchain's INVALID_TOOL_NAME_ERROR_TEMPLATE,
 * which DeerFlow's agents return), listing the tools the model was offered.
 */
import type { ToolMessage } from "@langchain/core/messages";
import { EMPTY_NAME_RESULT } from "../middlewares/danglingToolCall.js";
import { refusal } from "./refusal.js";
import { toolClassOf } from "./classify.js";
import type { ApprovalPolicy } from "./policy.js";

export function invalidToolText(name: string, offered: readonly string[]): string {
  return `Error: ${name} is not a valid tool, try one of [${offered.join(", ")}].`;
}

/** The tools an agent has and offers, as its last model request carried them. */
export interface ToolNames {
  /** Every tool the agent has (what a call may name). */
  registered: ReadonlySet<string>;
  /** What the model was offered (denied tools are not). */
  offered: readonly string[];
}

export function hasName(name: unknown): name is string {
  return typeof name === "string" && name.trim() !== "";
}

/**
 * The error result for a call that names no tool or an unknown one; undefined for a call to a
 * tool the agent has. `known` says whether the name is registered; without `tools` (no model
 * request seen yet in this run) only a missing name is answered here.
 */
export function malformedCallResult(call: { id?: string; name: string }, known: boolean, tools: ToolNames | undefined): ToolMessage | undefined {
  if (!hasName(call.name)) return refusal({ id: call.id, name: "unknown_tool" }, EMPTY_NAME_RESULT, "invalid_tool_name");
  if (known || !tools) return undefined;
  return refusal(call, invalidToolText(call.name, tools.offered), "unknown_tool");
}

function nameOf(tool: unknown): string | undefined {
  const name = (tool as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : undefined;
}

/**
 * What the model is offered of `tools` (a model request's `request.tools`): every tool but those
 * whose class the policy denies (approvals/classify.ts toolClassOf). A denied tool is not bound
 * at all, so the model does not plan around a tool it may not use; a call it makes anyway is still
 * refused where it would run. Tools without a name (provider-side tools) are kept.
 */
export function permittedTools<T>(tools: readonly T[], policy: ApprovalPolicy): { offered: T[]; names: ToolNames } {
  const offered = tools.filter((t) => {
    const name = nameOf(t);
    return name === undefined || policy[toolClassOf(name)] !== "deny";
  });
  const names = (list: readonly T[]) => list.map(nameOf).filter((n): n is string => n !== undefined);
  return { offered, names: { registered: new Set(names(tools)), offered: names(offered) } };
}
