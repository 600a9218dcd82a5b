/**
 * SkillToolPolicyMiddleware (DeerFlow `skill_tool_policy_middleware.py`, chain slot [16], right
 * after SkillActivation): an active skill's `allowed-tools` restricts the agent's tools, never
 * widens them (skills/policy.ts has the rules). Wrap-only, so it adds no graph step:
 *
 * - `wrapModelCall`: the tools the policy does not allow are not offered to the model.
 * - `wrapToolCall`: a call the policy does not allow gets DeerFlow's error result and never runs;
 *   tool_search's answer loses the schemas and promotions of the tools it does not allow;
 *   and a successful read_file of a skill's SKILL.md records it in `skill_context` (the Command's
 *   state update; DeerFlow stamps the read in ToolErrorHandling and captures it in
 *   DurableContext's before_model, one hook point later).
 *
 * Which skills are active is read from the thread's state at every call, so every model call and
 * every tool call of a run agrees, and a run that carries an approval decision (whose tools run
 * before any model call) is held to the same policy:
 * - the slash activation of the latest genuine user message (its hidden activation message,
 *   written by SkillActivation) dominates for the rest of that turn;
 * - otherwise the skills in `skill_context`;
 * - each reference resolved by path in the run's catalogue: enabled and available to this agent,
 *   else it counts as unresolvable (fail closed, policy.ts).
 */
import { posix } from "node:path";
import { createMiddleware } from "langchain";
import { ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { Command, StateSchema, isCommand } from "@langchain/langgraph";
import { threadStateFields } from "../state/threadState.js";
import type { SkillCatalog } from "../skills/catalog.js";
import { skillAt } from "../skills/catalog.js";
import { allowedToolNames, BLOCKED_TOOL_MESSAGE } from "../skills/policy.js";
import { restrictToolSearchResult, TOOL_SEARCH_NAME } from "../mcp/deferred.js";
import { SKILL_READ_TOOL_NAMES, skillContextEntry, type SkillContextEntry } from "../skills/context.js";
import type { Skill } from "../skills/types.js";
import { contentText, isGenuineUserMessage } from "./shared/messages.js";
import { activationOf } from "./skillActivation.js";

export interface SkillToolPolicyOptions {
  catalog: SkillCatalog;
  /** The skills this agent may use (a subagent's `skills`); null = every enabled skill. */
  available: ReadonlySet<string> | null;
}

interface PolicyState {
  messages?: BaseMessage[];
  skill_context?: SkillContextEntry[] | null;
}

/** The skill at `path`, if this agent may use it now. */
function usable(o: SkillToolPolicyOptions, path: string): Skill | undefined {
  const p = posix.normalize(path);
  const s = skillAt(o.catalog, p);
  if (!s || s.location !== p || !s.enabled) return undefined;
  if (o.available && !o.available.has(s.meta.name)) return undefined;
  return s;
}

/** The slash activation that holds: the one of the latest genuine user message. */
function slashSource(messages: readonly BaseMessage[]): string | undefined {
  let target = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isGenuineUserMessage(messages[i]!)) {
      target = i;
      break;
    }
  }
  if (target < 0) return undefined;
  const id = messages[target]!.id;
  for (let i = target + 1; i < messages.length; i++) {
    const a = activationOf(messages[i]!);
    if (a && a.target === id) return a.path;
  }
  return undefined;
}

export function activeAllowedTools(state: PolicyState, o: SkillToolPolicyOptions): Set<string> | null {
  const slash = slashSource(state.messages ?? []);
  if (slash !== undefined) return allowedToolNames([usable(o, slash)]);
  const loaded = (state.skill_context ?? []).map((e) => usable(o, e.path));
  return allowedToolNames(loaded);
}

function blockedBySkill(call: { id?: string; name: string }, allowed: ReadonlySet<string> | null): ToolMessage | undefined {
  if (!allowed || allowed.has(call.name)) return undefined;
  return new ToolMessage({ content: BLOCKED_TOOL_MESSAGE(call.name), tool_call_id: call.id ?? "missing_tool_call_id", name: call.name, status: "error" });
}

/**
 * DeerFlow's error result for a call the active skills' `allowed-tools` do not allow in this
 * state; undefined when it may run. The middleware answers with it, and the approval preflight
 * (approvals/preflight.ts) too, so such a call is never offered for approval.
 */
export function skillPolicyRefusal(call: { id?: string; name: string }, state: unknown, o: SkillToolPolicyOptions): ToolMessage | undefined {
  return blockedBySkill(call, activeAllowedTools((state ?? {}), o));
}

const nameOf = (tool: unknown): string | undefined => {
  const n = (tool as { name?: unknown } | null)?.name;
  return typeof n === "string" ? n : undefined;
};

/** The ToolMessage of a result (a plain message, or the one a sandbox tool's Command carries). */
function resultMessage(result: ToolMessage | Command): ToolMessage | undefined {
  if (ToolMessage.isInstance(result)) return result;
  const messages = (result.update as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? messages.find((m): m is ToolMessage => ToolMessage.isInstance(m)) : undefined;
}

function withSkillContext(result: ToolMessage | Command, entry: SkillContextEntry): ToolMessage | Command {
  if (!isCommand(result)) return new Command({ update: { messages: [result], skill_context: [entry] } });
  const update = (result.update ?? {}) as Record<string, unknown>;
  return new Command({ update: { ...update, skill_context: [entry] } });
}

const policyState = new StateSchema({ skill_context: threadStateFields.skill_context });

export function skillToolPolicyMiddleware(o: SkillToolPolicyOptions) {
  return createMiddleware({
    name: "SkillToolPolicyMiddleware",
    stateSchema: policyState,
    wrapModelCall: (request, handler) => {
      const allowed = activeAllowedTools(request.state, o);
      if (!allowed) return handler(request);
      const tools = (request.tools ?? []).filter((t) => {
        const n = nameOf(t);
        return n === undefined || allowed.has(n);
      });
      return handler(tools.length === (request.tools ?? []).length ? request : { ...request, tools });
    },
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall;
      const state = request.state as PolicyState;
      const allowed = activeAllowedTools(state, o);
      const blocked = blockedBySkill(call, allowed);
      if (blocked) return blocked;
      const result = await handler(request);
      // tool_search stays available under a restrictive skill; its answer may not show what the skill denies.
      if (allowed && call.name === TOOL_SEARCH_NAME) return restrictToolSearchResult(result, allowed, call.id ?? "missing_tool_call_id");
      if (!SKILL_READ_TOOL_NAMES.has(call.name)) return result;
      const path = (call.args as { path?: unknown } | undefined)?.path;
      if (typeof path !== "string") return result;
      const msg = resultMessage(result);
      if (!msg || msg.status === "error" || contentText(msg.content).trimStart().startsWith("Error:")) return result;
      const entry = skillContextEntry(usable(o, path), path, state.messages?.length ?? 0);
      return entry ? withSkillContext(result, entry) : result;
    },
  });
}
