/**
 * The lead agent, assembled per run (DeerFlow's `make_lead_agent`): model + tools + the ordered
 * middleware chain + system prompt + ThreadState, on our checkpointer, as the agent graph of
 * ./graph/build.ts (one node per hook point; a run bounded by its turn budget).
 *
 * The middleware order, and why, is in middlewareChain.ts.
 */
import { buildAgentGraph } from "./graph/build.js";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { threadStateFields } from "../state/threadState.js";
import { buildMiddlewareChain } from "./middlewareChain.js";
import { buildSystemPrompt } from "./prompt.js";
import { createSandboxTools } from "../tools/sandbox/index.js";
import { presentFilesTool } from "../tools/presentFiles.js";
import { viewImageTool } from "../tools/viewImage.js";
import type { SandboxProvider } from "../sandbox/provider.js";
import type { ThreadDirs } from "../threads/threadDirs.js";
import type { BlobStore } from "../store/blobs.js";
import type { SandboxFiles } from "../sandbox/files.js";
import { defaultPolicy, type ApprovalPolicy } from "../approvals/policy.js";
import type { SubagentSettings } from "../subagents/config.js";
import type { KeyFor } from "../models/factory.js";
import { subagentPromptSection } from "../subagents/prompt.js";
import { taskTool } from "../tools/task.js";
import type { MemoryRunHooks } from "../memory/hooks.js";
import type { SummarizationOptions } from "../middlewares/summarization.js";
import type { BaseMessage } from "@langchain/core/messages";
import { DEFAULT_MAX_TURNS } from "../config/harnessConfig.js";
import { assembleDeferredTools, type ToolSearchSettings } from "../mcp/deferred.js";
import { mcpToolIndex } from "../mcp/tools.js";
import { mcpPromptSections } from "../mcp/prompt.js";
import { diagnostics } from "../diagnostics.js";
import type { ChainSettings } from "../config/sections.js";
import type { RunSkills } from "../skills/service.js";
import { skillIndexSection, skillSystemSection } from "../skills/prompt.js";
import { describeSkillTool } from "../tools/describeSkill.js";
import { webFetchTool } from "../tools/webFetch.js";

export interface LeadAgentOptions {
  model: BaseChatModel;
  supportsVision: boolean;
  dirs: ThreadDirs;
  sandboxProvider: SandboxProvider;
  /** "local" runs on the host; a container provider is itself the security boundary. */
  sandboxKind: "local" | "devcontainer";
  allowHostCommands: boolean;
  bashTimeoutMs?: number;
  blobs: BlobStore;
  checkpointer: BaseCheckpointSaver;
  planMode: boolean;
  /** A configured title model; absent → the local title fallback. */
  titleModel?: BaseChatModel;
  /** The file tools' host files for this run: the change-recording decorator (changes/tracker.ts). */
  hostFiles?: SandboxFiles;
  /** Which tool calls run, ask or are refused (approvals/policy.ts); absent → the defaults for the sandbox's kind. */
  approvalPolicy?: ApprovalPolicy;
  /**
   * This run's protected writes the approval middleware cleared, shared with the file tools.
   * Created per agent when absent.
   */
  protectedWritesAllowed?: Set<string>;
  /** The run may delegate (issue 14): the `task` tool, SubagentLimit and the prompt section. */
  subagents?: { settings: SubagentSettings; modelName: string; keyFor?: KeyFor };
  /** Long-term memory is on for this run (issue 15): injection at the thread's first run, extraction after each. */
  memory?: MemoryRunHooks;
  /** Tokens this run may use (issue 15; middlewares/tokenBudget.ts); absent or 0 → no budget. `chainSettings.tokenBudget` wins. */
  maxTokensPerRun?: number;
  /** DeerFlow's middleware sections of the config (config/sections.ts), for the lead's chain and its subagents'; absent → DeerFlow's defaults. */
  chainSettings?: ChainSettings;
  /** Summarization and DurableContext (issue 15): settings and summary models (runs/compaction.ts). */
  summarization?: Omit<SummarizationOptions, "beforeSummarize">;
  /** Called with the messages about to be summarized, once their summary exists (e.g. a memory flush). */
  beforeSummarize?: (messages: BaseMessage[]) => Promise<void>;
  /** The run's turn budget (model calls) and DeerFlow's step ceiling; absent → DEFAULT_MAX_TURNS. */
  turns?: { maxTurns: number; maxRecursionLimit?: number };
  /** The run's skills (issue 24): `/mnt/skills`, the prompt section, activation and tool policy; absent → none. */
  skills?: RunSkills;
  /** This run's MCP tools (issue 23, mcp/registry.ts `toolsFor`) and when to defer them behind tool_search. */
  mcp?: { tools: readonly StructuredToolInterface[]; toolSearch?: ToolSearchSettings };
}

export function buildLeadTools(o: LeadAgentOptions & { protectedWritesAllowed: Set<string> }): StructuredToolInterface[] {
  const tools: StructuredToolInterface[] = [
    ...createSandboxTools({
      dirs: o.dirs,
      provider: o.sandboxProvider,
      allowHostCommands: o.allowHostCommands,
      protectedWritesAllowed: o.protectedWritesAllowed,
      ...(o.hostFiles ? { hostFiles: o.hostFiles } : {}),
      ...(o.bashTimeoutMs !== undefined ? { bashTimeoutMs: o.bashTimeoutMs } : {}),
    }),
    presentFilesTool(o.dirs),
  ];
  // DeerFlow registers view_image only for vision models: others cannot use the bytes.
  if (o.supportsVision) tools.push(viewImageTool(o.dirs, o.blobs));
  if (o.skills?.deferred) tools.push(describeSkillTool(o.skills.catalog));
  // Only with DeerFlow's `tools:` entry `name: web_fetch` (config/webTools.ts); its calls are class `web`.
  if (o.chainSettings?.webFetch) tools.push(webFetchTool(o.chainSettings.webFetch));
  // MCP tools after the built-ins (DeerFlow's dedup order): a server cannot replace one of ours.
  for (const t of o.mcp?.tools ?? []) {
    if (tools.some((b) => b.name === t.name)) diagnostics.warn(`Duplicate tool name '${t.name}' detected and skipped (an MCP tool named like a built-in).`);
    else tools.push(t);
  }
  return tools;
}

export function buildLeadAgent(options: LeadAgentOptions) {
  // With skills, every tool, middleware and subagent of the run sees /mnt/skills (paths.ts).
  const dirs = options.skills ? { ...options.dirs, skills: options.skills.mount } : options.dirs;
  const o = { ...options, dirs, protectedWritesAllowed: options.protectedWritesAllowed ?? new Set<string>() };
  const tools = buildLeadTools(o);
  const bashEnabled = o.allowHostCommands || o.sandboxKind !== "local";
  const approval = {
    policy: o.approvalPolicy ?? defaultPolicy(o.sandboxKind),
    dirs: o.dirs,
    sandboxKind: o.sandboxKind,
    allowHostCommands: o.allowHostCommands,
    protectedWritesAllowed: o.protectedWritesAllowed,
    mcpTools: mcpToolIndex(tools),
    ...(o.chainSettings?.webFetch ? { webAllowPrivateAddresses: o.chainSettings.webFetch.allowPrivateAddresses } : {}),
  };
  const parentTools = [...tools];
  // Past a size (or when configured), MCP schemas wait behind tool_search (mcp/deferred.ts); subagents assemble their own.
  const deferred = assembleDeferredTools(tools, o.mcp?.toolSearch);
  if (o.subagents) {
    tools.push(
      taskTool({
        model: o.model,
        modelName: o.subagents.modelName,
        ...(o.subagents.keyFor ? { keyFor: o.subagents.keyFor } : {}),
        parentTools,
        ...(o.mcp?.toolSearch ? { toolSearch: o.mcp.toolSearch } : {}),
        bashAllowed: bashEnabled,
        settings: o.subagents.settings,
        ...(o.skills ? { skills: o.skills } : {}),
        chain: { dirs: o.dirs, blobs: o.blobs, supportsVision: o.supportsVision, approval, ...(o.chainSettings ? { settings: o.chainSettings } : {}) },
        threadId: o.dirs.threadId,
      }),
    );
  }
  // A shell the policy denies is never bound for the model (the approval middleware), so the
  // prompt does not offer it either.
  const shellDenied = approval.policy.shell === "deny";
  const skillsSection = o.skills ? (o.skills.deferred ? skillIndexSection(o.skills.catalog) : skillSystemSection(o.skills.catalog)) : "";
  const mcpSections = mcpPromptSections(tools, deferred);
  const prompt = [buildSystemPrompt({ hasBash: !shellDenied && tools.some((t) => t.name === "bash"), bashEnabled, hasVision: o.supportsVision, planMode: o.planMode, skills: skillsSection }), mcpSections].filter(Boolean).join("\n\n");
  return buildAgentGraph({
    model: o.model,
    tools,
    systemPrompt: o.subagents ? `${prompt}\n\n${subagentPromptSection(o.subagents.settings.maxConcurrent, bashEnabled, o.subagents.settings.custom)}` : prompt,
    stateFields: threadStateFields,
    maxTurns: o.turns?.maxTurns ?? DEFAULT_MAX_TURNS,
    ...(o.turns?.maxRecursionLimit !== undefined ? { maxRecursionLimit: o.turns.maxRecursionLimit } : {}),
    middleware: buildMiddlewareChain({
      dirs: o.dirs,
      blobs: o.blobs,
      model: o.model,
      ...(o.titleModel ? { titleModel: o.titleModel } : {}),
      supportsVision: o.supportsVision,
      planMode: o.planMode,
      approval,
      ...(o.subagents ? { subagentLimit: { maxConcurrent: o.subagents.settings.maxConcurrent, maxTotal: o.subagents.settings.maxTotalPerRun } } : {}),
      ...(o.memory ? { memory: o.memory } : {}),
      ...(o.maxTokensPerRun ? { tokenBudget: { maxTokens: o.maxTokensPerRun } } : {}),
      ...(o.summarization ? { summarization: o.summarization } : {}),
      ...(o.beforeSummarize ? { beforeSummarize: o.beforeSummarize } : {}),
      ...(deferred.hash ? { deferred: { ...deferred, hash: deferred.hash, topK: o.mcp?.toolSearch?.autoPromoteTopK ?? 3 } } : {}),
      ...(o.chainSettings ? { settings: o.chainSettings } : {}),
      ...(o.skills ? { skills: { catalog: o.skills.catalog, available: null } } : {}),
    }),
    checkpointer: o.checkpointer,
  });
}

export type LeadAgent = ReturnType<typeof buildLeadAgent>;
