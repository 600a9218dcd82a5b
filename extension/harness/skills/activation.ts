/**
 * Step 4 of the agentskills client guide, user-explicit: `/skill-name task` (DeerFlow
 * `skills/slash.py` and `skill_activation_middleware.py` `_resolve_activation`,
 * `_build_activation_reminder`): which skill, DeerFlow's answer when it cannot be activated, and
 * the hidden `<slash_skill_activation>` text carrying the SKILL.md, escaped, and its sha256.
 *
 * The sha256 is of the file's bytes as read, and the content injected is those bytes decoded
 * (no newline rewriting), so the hash names exactly what the model was given.
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { parseSlashSkill } from "../../protocol/slashSkill.js";
import { readSkillFile } from "./discover.js";
import type { SkillCatalog } from "./catalog.js";
import { escapeText } from "./prompt.js";
import type { Skill } from "./types.js";

/** What the journal's `skill_activated` event and the hidden message carry. */
export interface Activation {
  readonly skill: Skill;
  /** The task text after the command. */
  readonly rest: string;
  readonly content: string;
  readonly sha256: string;
}

export type Resolution = { activation: Activation } | { failure: string };

export const NO_TASK_TEXT =
  "No additional task text was provided after the slash skill command. Ask the user what they want to do with this skill if the next step is unclear.";

/** DeerFlow's answers, verbatim. */
export const SLASH_FAILURES = {
  notInstalled: (n: string) => `Skill \`/${n}\` is not installed.`,
  disabled: (n: string) => `Skill \`/${n}\` is installed but disabled. Enable it before using slash activation.`,
  notAvailable: (n: string) => `Skill \`/${n}\` is not available for this agent.`,
  unresolved: (n: string) => `Skill \`/${n}\` could not be resolved.`,
  unsafe: (n: string) => `Skill \`/${n}\` could not be loaded safely. Please check the skill installation.`,
} as const;

/**
 * `text` (the genuine user text) as a slash activation against the run's catalogue; undefined
 * when it is not one. `available`: the names this agent may use (a subagent's `skills`), null = all.
 */
export async function resolveActivation(text: string, catalog: SkillCatalog, available: ReadonlySet<string> | null): Promise<Resolution | undefined> {
  const ref = parseSlashSkill(text);
  if (!ref) return undefined;
  const skill = catalog.skills.find((s) => s.meta.name === ref.name);
  if (!skill) {
    // A folder of that name is there but could not be loaded: say so, not "not installed".
    if (catalog.broken.some((b) => basename(b.hostDir) === ref.name)) return { failure: SLASH_FAILURES.unsafe(ref.name) };
    return { failure: SLASH_FAILURES.notInstalled(ref.name) };
  }
  if (!skill.enabled) return { failure: SLASH_FAILURES.disabled(ref.name) };
  if ((available && !available.has(ref.name)) || !skill.meta.userInvocable) return { failure: SLASH_FAILURES.notAvailable(ref.name) };
  const file = await readSkillFile(skill.hostDir).catch(() => undefined);
  if (!file?.bytes || file.text === undefined) return { failure: SLASH_FAILURES.unsafe(ref.name) };
  return { activation: { skill, rest: ref.rest, content: file.text, sha256: createHash("sha256").update(file.bytes).digest("hex") } };
}

const escapeAttr = (text: string): string => escapeText(text).replace(/"/g, "&quot;").replace(/'/g, "&#x27;");

/** DeerFlow's `_build_activation_reminder`, verbatim (`editable` is false: nothing edits a skill here). */
export function activationText(a: Activation): string {
  const name = escapeAttr(a.skill.meta.name);
  return `<slash_skill_activation>
The user explicitly activated the \`${name}\` skill for this turn.
Treat the task text as:
<user_request>
${escapeText(a.rest || NO_TASK_TEXT)}
</user_request>

Follow this skill before choosing a general workflow. Load supporting resources from the same skill directory only when needed.

<skill name="${name}" category="${escapeAttr(a.skill.scope)}" path="${escapeAttr(a.skill.location)}" sha256="${escapeAttr(a.sha256)}" editable="false">
<skill_content encoding="xml-escaped">
${escapeText(a.content)}
</skill_content>
</skill>
</slash_skill_activation>`;
}
