/**
 * `describe_skill(name)` — DeerFlow's `skills/describe.py` `build_describe_skill_tool`: in the
 * deferred-discovery mode (a large catalogue, skills/prompt.ts), the model sees only names in
 * `<skill_index>` and fetches a skill's description, allowed tools and location here before it
 * reads the SKILL.md. Same query forms as `tool_search` (skills/search.ts). Every field is
 * escaped: front matter is untrusted. Read-only: it answers from the run's catalogue.
 */
import { tool } from "langchain";
import { z } from "zod";
import type { SkillCatalog } from "../skills/catalog.js";
import { escapeText, modelVisibleSkills, mutabilityLabel } from "../skills/prompt.js";
import { searchSkills } from "../skills/search.js";
import type { Skill } from "../skills/types.js";

const DESCRIPTION = `Fetch usage metadata for installed skills so you can decide whether to load them.

Skills appear by name in <skill_index> in the system prompt.  Until
fetched, only the name is known.  This tool matches a query against
installed skills and returns their full metadata — description, allowed
tools, and file location — so you can decide whether to load the
SKILL.md via read_file.

Query forms:
  - "select:data-analysis,deep-research" -- fetch these exact skills (no cap)
  - "chart visualization" -- keyword search, best matches (up to 5)
  - "+podcast gen" -- require "podcast" in the name, rank by remaining terms (up to 5)`;

/** DeerFlow's `_render_skill_metadata`. */
export function renderSkillMetadata(skills: readonly Skill[]): string {
  return skills
    .map((s) => {
      const tools = s.meta.allowedTools && s.meta.allowedTools.length > 0 ? s.meta.allowedTools.join(", ") : "(all)";
      return `## Skill: ${escapeText(s.meta.name)}\n- Description: ${escapeText(s.meta.description)} ${mutabilityLabel(s.scope)}\n- Allowed tools: ${escapeText(tools)}\n- Location: ${escapeText(s.location)}`;
    })
    .join("\n\n");
}

export function describeSkillTool(catalog: SkillCatalog) {
  const skills = modelVisibleSkills(catalog);
  return tool(
    async ({ name }, runtime) => {
      const matched = await searchSkills(skills, name, (runtime as { signal?: AbortSignal } | undefined)?.signal);
      return matched.length === 0 ? `No skills matched: ${name}` : renderSkillMetadata(matched);
    },
    {
      name: "describe_skill",
      description: DESCRIPTION,
      schema: z.object({ name: z.string().describe("A skill name or a query (see the query forms).") }),
    },
  );
}
