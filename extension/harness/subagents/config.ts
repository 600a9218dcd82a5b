/**
 * Subagent settings (DeerFlow `config/subagents_config.py`, reference §9.4) and the two built-in
 * types (`subagents/builtins/`). Custom types (`subagents.custom_agents` in DeerFlow) are not
 * ported yet: the `task` tool knows `general-purpose` and `bash` only.
 */
import { z } from "zod";

/** DeerFlow clamps rather than rejects: max_concurrent to 1..4, max_total_per_run to 1..50. */
export const MIN_CONCURRENT = 1;
export const MAX_CONCURRENT = 4;
export const MIN_TOTAL = 1;
export const MAX_TOTAL = 50;

const PerTypeZ = z
  .object({
    max_turns: z.number().int().min(1).optional(),
    timeout_seconds: z.number().positive().optional(),
    token_budget: z.number().int().min(0).optional(),
  })
  .strict();

/** The config file's `subagents` key. */
export const SubagentsConfigZ = z
  .object({
    /** Register the `task` tool; a run's `--subagents` (or the panel's setting) turns it on too. */
    enabled: z.boolean().default(false),
    /** `task` calls kept per model response (DeerFlow `max_concurrent_subagents`, default 3). */
    max_concurrent: z.number().int().default(3),
    /** `task` calls per run (DeerFlow `max_total_subagents_per_run`, default 6). */
    max_total_per_run: z.number().int().default(6),
    /** Wall clock per subagent (DeerFlow `subagents.timeout_seconds`, default 1800). */
    timeout_seconds: z.number().positive().default(1800),
    /** Total tokens per subagent before its hard stop (DeerFlow `subagents.token_budget`, 2M without summarization); 0 = none. */
    token_budget: z.number().int().min(0).default(2_000_000),
    /** Per-type overrides (DeerFlow `subagents.agents.<name>`). */
    agents: z.record(z.string(), PerTypeZ).default({}),
  })
  .strict();
export type SubagentsConfig = z.infer<typeof SubagentsConfigZ>;

export const SUBAGENTS_DEFAULTS: SubagentsConfig = SubagentsConfigZ.parse({});

/** What one run's subagents may do: the config with DeerFlow's clamps applied. */
export interface SubagentSettings {
  maxConcurrent: number;
  maxTotalPerRun: number;
  timeoutSeconds: number;
  tokenBudget: number;
  agents: SubagentsConfig["agents"];
}

export function subagentSettings(c: SubagentsConfig = SUBAGENTS_DEFAULTS): SubagentSettings {
  return {
    maxConcurrent: Math.min(MAX_CONCURRENT, Math.max(MIN_CONCURRENT, c.max_concurrent)),
    maxTotalPerRun: Math.min(MAX_TOTAL, Math.max(MIN_TOTAL, c.max_total_per_run)),
    timeoutSeconds: c.timeout_seconds,
    tokenBudget: c.token_budget,
    agents: c.agents,
  };
}

export interface SubagentType {
  name: string;
  description: string;
  systemPrompt: string;
  /** Tool names it gets; undefined = the parent's tools minus `disallowed`. */
  tools?: readonly string[];
  disallowed: readonly string[];
  maxTurns: number;
}

const WORKING_DIRECTORY = `<working_directory>
You share the parent agent's sandbox and files:
- /mnt/user-data/uploads: the user's uploaded files
- /mnt/user-data/workspace: the working directory; prefer paths relative to it
- /mnt/user-data/outputs: files meant for the user
</working_directory>`;

const GENERAL_PURPOSE: SubagentType = {
  name: "general-purpose",
  description: "A capable agent for a bounded, independent piece of exploration or action, run in its own context.",
  systemPrompt: `You are a general-purpose subagent. The lead agent delegated one task to you; complete it on your own and report back.

<guidelines>
- Stay within the delegated task and use the tools you have.
- You cannot ask the user anything: work with what the task says, and state your assumptions.
- When something fails, say what and why.
- Finish with a concise report: what you did, what you found, and any files you created or changed.
</guidelines>

<tool_restrictions>
You are a subagent: the \`task\` tool is not available and you must not try to delegate further.
</tool_restrictions>

${WORKING_DIRECTORY}`,
  disallowed: ["task", "ask_clarification", "present_files"],
  maxTurns: 150,
};

const BASH: SubagentType = {
  name: "bash",
  description: "A command-execution specialist for a bounded shell workflow, run in its own context.",
  systemPrompt: `You are a subagent that runs shell commands for the lead agent. Execute what the task asks, carefully, and report the results.

<guidelines>
- Run dependent commands in order; say what each one did and whether it succeeded.
- Include the relevant part of stdout and stderr, summarised when long.
- Be careful with destructive commands (rm, overwrites).
- You cannot ask the user anything and you cannot delegate further.
</guidelines>

${WORKING_DIRECTORY}`,
  tools: ["bash", "ls", "read_file", "write_file", "str_replace"],
  disallowed: ["task", "ask_clarification", "present_files"],
  maxTurns: 60,
};

export const BUILTIN_SUBAGENTS: readonly SubagentType[] = [GENERAL_PURPOSE, BASH];

export function subagentType(name: string): SubagentType | undefined {
  return BUILTIN_SUBAGENTS.find((t) => t.name === name);
}

/** The limits one subagent of this type runs under: per-type overrides, then the global settings, then the type's defaults. */
export function limitsFor(type: SubagentType, s: SubagentSettings): { maxTurns: number; timeoutMs: number; tokenBudget: number } {
  const o = s.agents[type.name] ?? {};
  return {
    maxTurns: o.max_turns ?? type.maxTurns,
    timeoutMs: (o.timeout_seconds ?? s.timeoutSeconds) * 1000,
    tokenBudget: o.token_budget ?? s.tokenBudget,
  };
}
