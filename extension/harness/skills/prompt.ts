/**
 * Step 3 of the agentskills client guide, as DeerFlow discloses skills: its `<skill_system>`
 * section (`agents/lead_agent/prompt.py` `_get_cached_skills_prompt_section`, text verbatim), or,
 * past a catalogue size, its `<skill_index>` form (`skills/describe.py`
 * `get_skill_index_prompt_section`) with the `describe_skill` tool (tools/describeSkill.ts).
 *
 * Pure and stable: the same catalogue renders the same bytes (sorted by name, no time, no run
 * value), so the system prompt's prefix stays cacheable across a thread's runs. Every field that
 * comes from a SKILL.md (name, description) or a folder name (location) is HTML-escaped as
 * DeerFlow escapes it (`html.escape(quote=False)`), so no front matter can close a tag and forge
 * a block (test_skill_metadata_prompt_injection.py).
 *
 * Where we differ, on purpose: the mutability label. DeerFlow says `[custom, editable]` because
 * its `skill_manage` tool edits custom skills; nothing edits a skill here (`/mnt/skills` is
 * read-only), so a scope other than `public` ([built-in]) is labelled `[<scope>, read-only]`,
 * DeerFlow's form for its legacy category.
 */
import { SKILLS_VIRTUAL_PATH } from "../sandbox/paths.js";
import type { SkillCatalog } from "./catalog.js";
import type { Skill } from "./types.js";

/** Past this many skills the model sees, the index form is used unless the config says otherwise. */
export const DEFERRED_DISCOVERY_MIN_SKILLS = 50;
/** …or past this many characters of `<available_skills>` (descriptions may be 1024 characters each). */
export const DEFERRED_DISCOVERY_MIN_CHARS = 24_000;

/** Python's `html.escape(text, quote=False)`. */
export function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function mutabilityLabel(scope: Skill["scope"]): string {
  return scope === "public" ? "[built-in]" : `[${scope}, read-only]`;
}

/** What the model may be offered: enabled, and not `disable-model-invocation`. */
export function modelVisibleSkills(c: SkillCatalog): Skill[] {
  return c.skills.filter((s) => s.enabled && !s.meta.disableModelInvocation);
}

function renderItem(s: Skill): string {
  return `    <skill>\n        <name>${escapeText(s.meta.name)}</name>\n        <description>${escapeText(s.meta.description)} ${mutabilityLabel(s.scope)}</description>\n        <location>${escapeText(s.location)}</location>\n    </skill>`;
}

function availableSkillsBlock(skills: readonly Skill[]): string {
  return skills.length > 0 ? `<available_skills>\n${skills.map(renderItem).join("\n")}\n</available_skills>` : "";
}

/** DeerFlow's `skills.deferred_discovery`: true/false as set, or past the catalogue size when unset. */
export function usesDeferredDiscovery(c: SkillCatalog, deferred: boolean | undefined): boolean {
  if (deferred !== undefined) return deferred;
  const visible = modelVisibleSkills(c);
  return visible.length > DEFERRED_DISCOVERY_MIN_SKILLS || availableSkillsBlock(visible).length > DEFERRED_DISCOVERY_MIN_CHARS;
}

/** The full-metadata section; "" when there is nothing to say (no skill, none disabled). */
export function skillSystemSection(c: SkillCatalog): string {
  const visible = modelVisibleSkills(c);
  const disabled = c.skills.filter((s) => !s.enabled);
  if (visible.length === 0 && disabled.length === 0) return "";
  const skillsList = availableSkillsBlock(visible);
  const disabledSection =
    disabled.length > 0
      ? `<disabled_skills>
The following skills are INSTALLED but DISABLED. You MUST NOT read,
reference, or use any of these skills — including their SKILL.md,
supporting resources, or workflows — even if their files exist on disk.
Accessing a disabled skill violates user preferences.
${disabled.map((s) => `    - ${escapeText(s.meta.name)} (${s.scope})`).join("\n")}
</disabled_skills>`
      : "";
  const skillEvolutionSection = "";
  return `<skill_system>
You have access to skills that provide optimized workflows for specific tasks. Each skill contains best practices, frameworks, and references to additional resources.

**Progressive Loading Pattern:**
1. When a user query matches a skill's use case, immediately call \`read_file\` on the skill's main file using the path attribute provided in the skill tag below
2. Read and understand the skill's workflow and instructions
3. The skill file contains references to external resources under the same folder
4. Load referenced resources only when needed during execution
5. Follow the skill's instructions precisely

**Explicit Slash Skill Activation:**
- If the user starts a request with \`/<skill-name>\`, that skill was explicitly requested for the current turn.
- Follow the activated skill before choosing a general workflow.
- The runtime injects the activated skill content for explicit slash activations; do not call \`read_file\` for that SKILL.md again unless the injected skill references supporting resources you need.

**Skills are located at:** ${SKILLS_VIRTUAL_PATH}
${skillEvolutionSection}
${skillsList}
${disabledSection}

</skill_system>`;
}

/** The index form; "" when no skill is offered. */
export function skillIndexSection(c: SkillCatalog): string {
  const names = modelVisibleSkills(c).map((s) => escapeText(s.meta.name)).sort();
  if (names.length === 0) return "";
  const evolution = "";
  return `<skill_system>
You have access to skills that provide optimized workflows for specific tasks.

**Skill Discovery:**
1. Check <skill_index> for a skill name that matches your task
2. Call describe_skill(name) to fetch its description and capabilities
3. If the skill matches, call read_file on the returned location to load full instructions
4. Follow the skill's instructions precisely

**Explicit Slash Skill Activation:**
- If the user starts a request with \`/<skill-name>\`, that skill was explicitly requested.
- The runtime injects the activated skill content; do not call \`read_file\` for that SKILL.md again unless the injected skill references supporting resources you need.
${evolution}
<skill_index>
${names.join(", ")}
</skill_index>

Skills are located at: ${SKILLS_VIRTUAL_PATH}
</skill_system>`;
}
