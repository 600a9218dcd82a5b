/**
 * `allowed-tools` restricts, never grants (DeerFlow `skills/tool_policy.py`,
 * `skill_tool_policy_middleware.py`): which of the agent's tools an ACTIVE skill leaves it.
 *
 * - Active means slash-activated for the turn, or loaded into `skill_context` by a read_file of its
 *   SKILL.md. Merely enabled skills never restrict (passive).
 * - A slash activation dominates: while it holds, skills read afterwards cannot widen it.
 * - Otherwise the union of the active skills' declarations; once one declares the field, a skill
 *   without it contributes nothing; none declaring it → no restriction.
 * - DeerFlow's framework tools stay available: read_file, describe_skill, review_skill_package,
 *   tool_search. `task` must be declared (a restricted skill cannot delegate around its policy).
 * - Fail closed: an active reference that resolves to no usable skill (disabled, gone, outside the
 *   agent's skills) leaves only the framework tools, unless another active skill is valid.
 *
 * Nothing here reaches the approval policy: a tool a skill allows still asks, or is denied, as
 * the user's policy says; a cloned repository's skill can only take tools away.
 */
import type { Skill } from "./types.js";

export const ALWAYS_AVAILABLE_TOOL_NAMES: ReadonlySet<string> = new Set(["describe_skill", "read_file", "review_skill_package", "tool_search"]);

export const BLOCKED_TOOL_MESSAGE = (name: string): string => `Error: Tool '${name}' is not allowed by the active skill policy.`;

/** DeerFlow `allowed_tool_names_for_skills`: the union of declarations, or null (no restriction). */
export function allowedToolNamesForSkills(skills: readonly Skill[]): Set<string> | null {
  let declared = false;
  const allowed = new Set<string>();
  for (const s of skills) {
    if (s.meta.allowedTools === undefined) continue;
    declared = true;
    for (const name of s.meta.allowedTools) allowed.add(name);
  }
  return declared ? allowed : null;
}

/**
 * The tool names the agent may use, or null for all. `references`: the active paths' skills as
 * resolved (undefined for a reference that resolved to nothing usable).
 */
export function allowedToolNames(references: ReadonlyArray<Skill | undefined>): Set<string> | null {
  if (references.length === 0) return null;
  const active = [...new Map(references.filter((s): s is Skill => s !== undefined).map((s) => [s.meta.name, s])).values()];
  if (active.length === 0) return new Set(ALWAYS_AVAILABLE_TOOL_NAMES);
  const allowed = allowedToolNamesForSkills(active);
  if (allowed === null) return null;
  for (const name of ALWAYS_AVAILABLE_TOOL_NAMES) allowed.add(name);
  return allowed;
}
