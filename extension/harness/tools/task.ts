/**
 * `task(description, prompt, subagent_type)` (DeerFlow `tools/builtins/task_tool.py`, reference
 * §9.4): delegate a bounded task to a subagent with its own context, and answer with DeerFlow's
 * result text and `subagent_*` status fields (subagents/statusContract.ts).
 *
 * Registered only when the run has subagents enabled. The types are the built-ins and the config's
 * custom ones (subagents/config.ts). An unknown type, `bash` where bash is not allowed, or a custom
 * type whose model is not available, is answered as a failed task without running anything, with
 * DeerFlow's text. DeerFlow
 * runs the subagent on a background pool and polls it every 5 s; here the tool awaits it
 * (subagents/executor.ts) and the subagent's events reach the journal as they happen, so there is
 * no polling and no "polling timed out" outcome. Parallel `task` calls of one model response run
 * concurrently: the tool node runs a response's calls together.
 */
import { tool } from "langchain";
import type { ToolRuntime } from "langchain";
import { Command } from "@langchain/langgraph";
import { ToolMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { assembleDeferredTools, type ToolSearchSettings } from "../mcp/deferred.js";
import { mcpPromptSections } from "../mcp/prompt.js";
import { z } from "zod";
import { availableSubagents, limitsFor, skillsFor, subagentType, type SubagentSettings, type SubagentType } from "../subagents/config.js";
import { createChatModel, withKey, type KeyFor } from "../models/factory.js";
import { formatSubagentResult, subagentAdditionalKwargs, type SubagentOutcome, type SubagentUsage } from "../subagents/statusContract.js";
import { runSubagent, type SubagentRunRequest, type TaskEventWriter } from "../subagents/executor.js";
import { viewImageTool } from "./viewImage.js";
import { describeSkillTool } from "./describeSkill.js";
import type { RunSkills } from "../skills/service.js";
import { subagentSkills, type SubagentSkills } from "../skills/subagent.js";
import { diagnostics } from "../diagnostics.js";

/** DeerFlow `LOCAL_BASH_SUBAGENT_DISABLED_MESSAGE`, with our ways out (as HOST_BASH_DISABLED_MESSAGE words them). */
export const BASH_SUBAGENT_DISABLED_MESSAGE =
  "Bash subagent is disabled for LocalSandboxProvider because host bash execution is not a secure sandbox boundary. " +
  "Open the folder in a dev container for isolated bash access, or enable it with --allow-host-commands (CLI) " +
  "or the deerflow.allowHostCommands setting only in a fully trusted local environment.";

const schema = z.object({
  description: z.string().describe("A short (3-5 word) description of the task for logging/display. ALWAYS PROVIDE THIS PARAMETER FIRST."),
  prompt: z.string().describe("The task description for the subagent. Be specific and clear about what needs to be done. ALWAYS PROVIDE THIS PARAMETER SECOND."),
  subagent_type: z.string().describe("The type of subagent to use. ALWAYS PROVIDE THIS PARAMETER THIRD."),
});

/** The tool's description, with the run's custom types listed after the built-ins. */
export function taskDescription(custom: readonly SubagentType[] = []): string {
  const extra = custom.map((t) => `\n- ${t.name}: ${t.description}`).join("");
  return `Delegate a bounded task to a specialized subagent that works in its own context and reports back.

Delegate only when the benefit clearly exceeds the overhead: independent tasks that save wall-clock time when run in parallel, or a bounded, context-heavy investigation that would otherwise crowd your own context.

Subagent types:
- general-purpose: a capable agent for bounded exploration and action, with your tools except task, ask_clarification and present_files.
- bash: a command-execution specialist (bash, ls, read_file, write_file, str_replace); only where bash is allowed.${extra}

Do not delegate dependent steps to parallel subagents, work that needs the user, or work you can do more cheaply yourself. An unknown subagent_type fails with the list of available types.`;
}

export interface TaskToolDeps {
  model: BaseChatModel;
  modelName: string;
  /** Which key a custom type's own model gets (the run's RunContext.keyFor); absent → the environment. */
  keyFor?: KeyFor;
  /** The lead's own tools (not middleware tools): what a subagent type picks from. */
  parentTools: readonly StructuredToolInterface[];
  /** MCP deferral (issue 23): a subagent defers its own MCP tools behind tool_search, as the lead (DeerFlow's shared assembly). */
  toolSearch?: ToolSearchSettings;
  /** Host bash allowed, or a sandbox that is its own boundary (DeerFlow `is_host_bash_allowed`). */
  bashAllowed: boolean;
  settings: SubagentSettings;
  /** The run's skills (issue 24); each subagent gets the ones its type's `skills` names. Absent → none. */
  skills?: RunSkills;
  chain: SubagentRunRequest["chain"] extends infer C ? Omit<C, "alwaysAllowed"> : never;
  threadId: string;
}

/**
 * The tools of one subagent: the type's picks from the lead's (or all but its disallowed ones),
 * with `view_image` following the subagent's own model: dropped on a text-only model, added on a
 * vision model the lead (text-only) did not get it for, when the type may have it.
 */
function subagentTools(deps: TaskToolDeps, type: SubagentType, vision: boolean, skills: SubagentSkills | undefined): StructuredToolInterface[] {
  // DeerFlow's `_filter_tools`: the whitelist (when there is one), then the deny list.
  const allowed = (name: string) => (!type.tools || type.tools.includes(name)) && !type.disallowed.includes(name);
  const tools = deps.parentTools.filter((t) => allowed(t.name) && (vision || t.name !== "view_image") && t.name !== "describe_skill");
  if (vision && allowed("view_image") && !tools.some((t) => t.name === "view_image")) tools.push(viewImageTool(deps.chain.dirs, deps.chain.blobs));
  // The lead's describe_skill answers from the whole catalogue: a subagent's answers from its own skills.
  if (skills?.describe && allowed("describe_skill")) tools.push(describeSkillTool(skills.catalog));
  return tools;
}

function answer(toolCallId: string, o: SubagentOutcome & { modelName?: string; usage?: SubagentUsage }, sandbox?: { sandbox_id: string }): Command {
  const { content, error } = formatSubagentResult(o);
  return new Command({
    update: {
      ...(sandbox ? { sandbox } : {}),
      messages: [new ToolMessage({ content, tool_call_id: toolCallId, name: "task", additional_kwargs: subagentAdditionalKwargs(o, error) })],
    },
  });
}

export function taskTool(deps: TaskToolDeps) {
  return tool(
    async ({ description, prompt, subagent_type }, runtime: ToolRuntime) => {
      const toolCallId = runtime.toolCallId;
      const type = subagentType(subagent_type, deps.settings);
      if (!type) {
        const available = availableSubagents(deps.settings).map((t) => t.name).join(", ");
        return answer(toolCallId, { status: "failed", error: `Unknown subagent type '${subagent_type}'. Available: ${available}` });
      }
      if (type.name === "bash" && !deps.bashAllowed) return answer(toolCallId, { status: "failed", error: BASH_SUBAGENT_DISABLED_MESSAGE });
      const own = deps.settings.models[type.name];
      if (own && "error" in own) return answer(toolCallId, { status: "failed", error: own.error });
      // A type's own model (its `model`, or `agents.<type>.model`; `inherit` is the lead's), thinking
      // off as DeerFlow runs subagents. Its key comes from its own source (its api_key_env, held by
      // the harness server or in the environment): the lead's key is never sent to another endpoint.
      const model =
        own && own.resolved.name !== deps.modelName
          ? { model: createChatModel(own.resolved, { thinkingEnabled: false, ...withKey(deps.keyFor, own.resolved) }), modelName: own.resolved.name }
          : { model: deps.model, modelName: deps.modelName };
      // DeerFlow builds a subagent's tools for the model it runs on: view_image only for a vision model.
      const vision = own ? own.resolved.supportsVision : deps.chain.supportsVision;
      const skills = deps.skills ? subagentSkills(deps.skills, skillsFor(type, deps.settings)) : undefined;
      if (skills && skills.unknown.length > 0) diagnostics.warn(`Subagent type '${type.name}' names skills this workspace does not have: ${skills.unknown.join(", ")} (its other skills are used).`);
      const tools = subagentTools(deps, type, vision, skills);
      const deferred = assembleDeferredTools(tools, deps.toolSearch);
      const extraSections = [skills?.section ?? "", mcpPromptSections(tools, deferred)].filter(Boolean).join("\n\n");
      const state = (runtime.state ?? {}) as { sandbox?: unknown; thread_data?: unknown; approval_always_allow?: unknown };
      const writer = runtime.writer as ((chunk: unknown) => void) | undefined;
      const write: TaskEventWriter = (data) => writer?.(data);
      const result = await runSubagent({
        taskId: toolCallId,
        description,
        type: extraSections ? { ...type, systemPrompt: `${type.systemPrompt}\n\n${extraSections}` } : type,
        prompt,
        model: model.model,
        modelName: model.modelName,
        tools,
        chain: { ...deps.chain, supportsVision: vision, alwaysAllowed: state.approval_always_allow ?? [], ...(deferred.hash ? { deferred: { names: deferred.names, hash: deferred.hash } } : {}),
          ...(skills && deps.skills ? { skills: { catalog: deps.skills.catalog, available: skills.available } } : {}),
        },
        limits: limitsFor(type, deps.settings),
        parentState: { sandbox: state.sandbox, thread_data: state.thread_data },
        threadId: deps.threadId,
        signal: runtime.signal,
        write,
      });
      // The lead run is stopping (cancel, timeout): its runner closes the task in the journal.
      if (runtime.signal?.aborted) throw runtime.signal.reason instanceof Error ? runtime.signal.reason : new Error("Cancelled by user");
      return answer(toolCallId, { ...result, modelName: model.modelName }, result.sandbox);
    },
    { name: "task", description: taskDescription(deps.settings.custom), schema },
  );
}
