/**
 * Subagent settings (DeerFlow `config/subagents_config.py`, reference §9.4), the two built-in
 * types (`subagents/builtins/`) and the custom types of the config file's
 * `subagents.custom_agents` (DeerFlow's key): each with its system prompt, its tools (picked from
 * the lead's, never `task`), its model (a configured model's name, or DeerFlow's `inherit`: the
 * lead's), its turn cap, wall clock and token budget. This module owns what a type is and which
 * types a run has; the `task` tool (tools/task.ts) and the lead's prompt (./prompt.ts) ask it.
 *
 * DeerFlow's keys, with DeerFlow's meaning (`subagents_config.py`, `registry.py`): the global
 * `timeout_seconds` and `max_turns` apply to the built-in types; a custom type has its own
 * (defaults 900 s and 50 turns); `agents.<name>` overrides any type's `timeout_seconds`,
 * `max_turns`, `model`, `token_budget` and `skills`. `token_budget` is DeerFlow's object (`enabled`,
 * `max_tokens`) or the project's number (0 = none). `skills` is DeerFlow's whitelist of skill
 * names (absent or null = every enabled skill, [] = none; the override wins over a custom type's
 * own): what the subagent's `<skill_system>` lists and which skills it may activate
 * (skills/subagent.ts). The project's own keys: `enabled` (the `task` tool without
 * `--subagents`) and `max_concurrent` (DeerFlow's runtime `max_concurrent_subagents`).
 */
import { z } from "zod";
import type { ResolvedModel } from "../models/resolvedModel.js";

/** DeerFlow clamps rather than rejects: max_concurrent to 1..4, max_total_per_run to 1..50. */
export const MIN_CONCURRENT = 1;
export const MAX_CONCURRENT = 4;
export const MIN_TOTAL = 1;
export const MAX_TOTAL = 50;

/** A subagent token budget: the project's number (0 = none), or DeerFlow's `{enabled, max_tokens}` (config/deerflowKeys.ts drops its thresholds). */
const BudgetZ = z.union([
  z.number().int().min(0),
  z.strictObject({ enabled: z.boolean().default(true), max_tokens: z.number().int().min(1).default(2_000_000) }),
]);

/** The tokens a budget allows; 0 = none. */
function budgetTokens(b: z.infer<typeof BudgetZ> | undefined): number | undefined {
  if (b === undefined || typeof b === "number") return b;
  return b.enabled ? b.max_tokens : 0;
}

/** DeerFlow's skills whitelist: absent or null = every enabled skill, [] = none, else only these names. */
const SkillsZ = z.array(z.string().min(1)).nullable().optional();

/** DeerFlow's model value for "the lead agent's model". */
export const INHERIT = "inherit";

const PerTypeZ = z
  .object({
    max_turns: z.number().int().min(1).optional(),
    timeout_seconds: z.number().positive().optional(),
    token_budget: BudgetZ.optional(),
    /** A configured model's name, or `inherit` (DeerFlow: the per-agent model override). */
    model: z.string().min(1).optional(),
    /** Overrides the type's skills (DeerFlow `agents.<name>.skills`); absent/null = the type's own. */
    skills: SkillsZ,
  })
  .strict();

/** Tools no subagent gets: it cannot delegate further, ask the user, or present files to them. */
export const SUBAGENT_DISALLOWED_TOOLS = ["task", "ask_clarification", "present_files"] as const;

const CUSTOM_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/** One `subagents.custom_agents.<name>` entry. */
const CustomAgentZ = z
  .object({
    /** What the lead reads about it in the `task` tool's description and its prompt. */
    description: z.string().trim().min(1).max(500).optional(),
    system_prompt: z.string().trim().min(1, "a custom subagent needs a system_prompt"),
    /** Tool names picked from the lead's tools; absent = the lead's tools minus the disallowed ones. */
    tools: z
      .array(z.string().min(1))
      .optional()
      .refine((t) => !t?.some((n) => (SUBAGENT_DISALLOWED_TOOLS as readonly string[]).includes(n)), {
        message: `a subagent cannot have ${SUBAGENT_DISALLOWED_TOOLS.join(", ")}`,
      }),
    /** DeerFlow `disallowed_tools`: names it never gets; task, ask_clarification and present_files always. */
    disallowed_tools: z.array(z.string().min(1)).optional(),
    /** A configured model's name (`models[].name`), or `inherit` (DeerFlow's default): the lead's model. */
    model: z.string().min(1).default(INHERIT),
    /** Model calls before it stops with `turn_capped` (DeerFlow's custom default, 50). */
    max_turns: z.number().int().min(1).default(50),
    /** DeerFlow's custom default, 900 s (the global `timeout_seconds` is the built-ins'). */
    timeout_seconds: z.number().positive().default(900),
    token_budget: BudgetZ.optional(),
    /** The skills it gets (DeerFlow `custom_agents.<name>.skills`): absent/null = every enabled skill, [] = none. */
    skills: SkillsZ,
  })
  .strict();
export type CustomAgentConfig = z.infer<typeof CustomAgentZ>;

/** The config file's `subagents` key. */
export const SubagentsConfigZ = z
  .object({
    /** Register the `task` tool; a run's `--subagents` (or the panel's setting) turns it on too. */
    enabled: z.boolean().default(false),
    /** `task` calls kept per model response (DeerFlow `max_concurrent_subagents`, default 3). */
    max_concurrent: z.number().int().default(3),
    /** `task` calls per run (DeerFlow `max_total_subagents_per_run`, default 6). */
    max_total_per_run: z.number().int().default(6),
    /** Wall clock per built-in subagent (DeerFlow `subagents.timeout_seconds`, default 1800). */
    timeout_seconds: z.number().positive().default(1800),
    /** DeerFlow's global max-turn override for the built-in types (absent: general-purpose 150, bash 60). */
    max_turns: z.number().int().min(1).optional(),
    /** Total tokens per subagent before its hard stop (DeerFlow `subagents.token_budget`, 2M without summarization); 0 = none. */
    token_budget: BudgetZ.default(2_000_000),
    /** Per-type overrides (DeerFlow `subagents.agents.<name>`). */
    agents: z.record(z.string(), PerTypeZ).default({}),
    /** Custom types by name (DeerFlow `subagents.custom_agents`). */
    custom_agents: z
      .record(z.string(), CustomAgentZ)
      .default({})
      // Names are checked here rather than by the record's key schema, whose error does not say why.
      // A built-in's name is accepted (DeerFlow's registry: the built-in wins, subagentSettings).
      .superRefine((agents, ctx) => {
        for (const name of Object.keys(agents)) {
          if (!CUSTOM_NAME.test(name)) {
            ctx.addIssue({ code: "custom", path: [name], message: "a custom subagent's name is lowercase letters, digits, '-' or '_', starting with a letter (at most 64)" });
          }
        }
      }),
  })
  .strict();
export type SubagentsConfig = z.infer<typeof SubagentsConfigZ>;

export const SUBAGENTS_DEFAULTS: SubagentsConfig = SubagentsConfigZ.parse({});

/** What one run's subagents may do: the config with DeerFlow's clamps applied. */
export interface SubagentSettings {
  maxConcurrent: number;
  maxTotalPerRun: number;
  timeoutSeconds: number;
  /** DeerFlow's global `max_turns` for the built-in types. */
  maxTurns?: number;
  tokenBudget: number;
  agents: Record<string, { max_turns?: number; timeout_seconds?: number; token_budget?: number; skills?: readonly string[] }>;
  /** The config's custom types, in the order the file lists them. */
  custom: readonly SubagentType[];
  /**
   * A type's own model (a custom type's `model`, or `agents.<name>.model`), resolved when the run
   * starts (plain data: names and where its key comes from, never a key), or the reason it cannot
   * be used; absent for types on the lead's model (`inherit`).
   */
  models: Readonly<Record<string, { resolved: ResolvedModel } | { error: string }>>;
}

/**
 * The run's subagent settings: the config with DeerFlow's clamps applied, and its custom types.
 * `resolve` finds a custom type's model among the configured ones (models/factory.ts
 * resolveModel); one it cannot find fails only the tasks of that type, with the reason.
 */
export function subagentSettings(c: SubagentsConfig = SUBAGENTS_DEFAULTS, resolve?: (name: string) => ResolvedModel): SubagentSettings {
  // DeerFlow `get_subagent_config`: a built-in type is looked up first, so a custom one of the same name never runs (config/deerflowKeys.ts says so on load).
  const custom = Object.entries(c.custom_agents)
    .filter(([name]) => !isBuiltinSubagent(name))
    .map(([name, a]) => customType(name, a));
  const models: Record<string, { resolved: ResolvedModel } | { error: string }> = {};
  // DeerFlow's order: the per-agent override, then the custom type's own `model`; `inherit` = the lead's.
  const wanted = new Map<string, string>();
  for (const [name, a] of Object.entries(c.custom_agents)) wanted.set(name, a.model);
  for (const [name, o] of Object.entries(c.agents)) if (o.model) wanted.set(name, o.model);
  for (const [name, model] of wanted) {
    if (model === INHERIT) continue;
    try {
      if (!resolve) throw new Error(`Model "${model}" cannot be resolved here.`);
      models[name] = { resolved: resolve(model) };
    } catch (err) {
      models[name] = { error: `Subagent type '${name}' uses a model that is not available: ${(err as Error).message}` };
    }
  }
  const agents = Object.fromEntries(
    Object.entries(c.agents).map(([name, o]) => {
      const tokens = budgetTokens(o.token_budget);
      return [name, { ...(o.max_turns !== undefined ? { max_turns: o.max_turns } : {}), ...(o.timeout_seconds !== undefined ? { timeout_seconds: o.timeout_seconds } : {}), ...(tokens !== undefined ? { token_budget: tokens } : {}), ...(o.skills ? { skills: o.skills } : {}) }];
    }),
  );
  return {
    maxConcurrent: Math.min(MAX_CONCURRENT, Math.max(MIN_CONCURRENT, c.max_concurrent)),
    maxTotalPerRun: Math.min(MAX_TOTAL, Math.max(MIN_TOTAL, c.max_total_per_run)),
    timeoutSeconds: c.timeout_seconds,
    ...(c.max_turns !== undefined ? { maxTurns: c.max_turns } : {}),
    tokenBudget: budgetTokens(c.token_budget) ?? 2_000_000,
    agents,
    custom,
    models,
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
  /** A custom type: its limits are its own, never the global built-in ones (DeerFlow's registry). */
  custom?: boolean;
  /** A custom type's own wall clock and token budget (else the global ones). */
  timeoutSeconds?: number;
  tokenBudget?: number;
  /** A custom type's model name, or `inherit` (settings.models holds it resolved). */
  model?: string;
  /** The skill names it gets; undefined = every enabled skill (skillsFor applies the override). */
  skills?: readonly string[];
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
  disallowed: SUBAGENT_DISALLOWED_TOOLS,
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
  disallowed: SUBAGENT_DISALLOWED_TOOLS,
  maxTurns: 60,
};

export const BUILTIN_SUBAGENTS: readonly SubagentType[] = [GENERAL_PURPOSE, BASH];

export function isBuiltinSubagent(name: string): boolean {
  return BUILTIN_SUBAGENTS.some((t) => t.name === name);
}

/** A custom type from its config entry. Its prompt gets the same working-directory block as the built-ins: the paths are the sandbox's, not the user's to know. */
function customType(name: string, a: CustomAgentConfig): SubagentType {
  return {
    name,
    description: a.description ?? `A custom subagent (${name}).`,
    systemPrompt: `${a.system_prompt}\n\n${WORKING_DIRECTORY}`,
    ...(a.tools ? { tools: a.tools } : {}),
    disallowed: [...new Set([...SUBAGENT_DISALLOWED_TOOLS, ...(a.disallowed_tools ?? [])])],
    maxTurns: a.max_turns,
    custom: true,
    timeoutSeconds: a.timeout_seconds,
    ...(budgetTokens(a.token_budget) !== undefined ? { tokenBudget: budgetTokens(a.token_budget)! } : {}),
    model: a.model,
    ...(a.skills ? { skills: a.skills } : {}),
  };
}

/** Every type a run with these settings has: the built-ins, then the custom ones. */
export function availableSubagents(s?: Pick<SubagentSettings, "custom">): readonly SubagentType[] {
  return [...BUILTIN_SUBAGENTS, ...(s?.custom ?? [])];
}

export function subagentType(name: string, s?: Pick<SubagentSettings, "custom">): SubagentType | undefined {
  return availableSubagents(s).find((t) => t.name === name);
}

/**
 * The limits one subagent of this type runs under (DeerFlow's registry): the per-type overrides
 * (`subagents.agents`), then for a built-in type the global `max_turns` / `timeout_seconds`, for a
 * custom type its own; the token budget: the override, the type's own, the global one.
 */
export function limitsFor(type: SubagentType, s: SubagentSettings): { maxTurns: number; timeoutMs: number; tokenBudget: number } {
  const o = s.agents[type.name] ?? {};
  const global = type.custom ? {} : { maxTurns: s.maxTurns, timeoutSeconds: s.timeoutSeconds };
  return {
    maxTurns: o.max_turns ?? global.maxTurns ?? type.maxTurns,
    timeoutMs: (o.timeout_seconds ?? global.timeoutSeconds ?? type.timeoutSeconds ?? s.timeoutSeconds) * 1000,
    tokenBudget: o.token_budget ?? type.tokenBudget ?? s.tokenBudget,
  };
}

/** The skill names a subagent of this type gets (DeerFlow `get_skills_for`, then the type's own); undefined = every enabled skill. */
export function skillsFor(type: SubagentType, s: Pick<SubagentSettings, "agents">): readonly string[] | undefined {
  return s.agents[type.name]?.skills ?? type.skills;
}
