/**
 * One subagent's skills (DeerFlow `subagents/executor.py` `_load_skills`): the run's catalogue
 * limited to the type's `skills` whitelist (subagents/config.ts skillsFor). Absent = every skill
 * the lead has; [] = none (no `<skill_system>`, no activation, no describe_skill); a list = only
 * those names. A name the catalogue does not have is reported, not fatal: the subagent runs with
 * the names that resolved (DeerFlow filters silently; a typo is worth a log line here).
 *
 * What it limits: the prompt section, describe_skill's answers, and the activation and tool
 * policy middlewares' `available` set, so a subagent cannot load a skill it was not given into
 * its `skill_context` or slash-activate it. The `/mnt/skills` view itself is the run's (one
 * folder per workspace, mounted once into the dev container), so its files stay readable as
 * plain files, as in DeerFlow, whose subagents share the lead's sandbox mounts.
 */
import { restrictCatalog, skillByName, type SkillCatalog } from "./catalog.js";
import { modelVisibleSkills, skillIndexSection, skillSystemSection } from "./prompt.js";
import type { RunSkills } from "./service.js";

export interface SubagentSkills {
  /** The catalogue the subagent is told about. */
  readonly catalog: SkillCatalog;
  /** For the middlewares: the whitelist, or null for every enabled skill. */
  readonly available: ReadonlySet<string> | null;
  /** Its `<skill_system>` (or `<skill_index>`) section; "" for none. */
  readonly section: string;
  /** describe_skill is offered: the index form with at least one skill to describe. */
  readonly describe: boolean;
  /** Whitelisted names the run's catalogue has no skill for. */
  readonly unknown: readonly string[];
}

export function subagentSkills(run: RunSkills, names: readonly string[] | undefined): SubagentSkills {
  const catalog = restrictCatalog(run.catalog, names);
  const section = run.deferred ? skillIndexSection(catalog) : skillSystemSection(catalog);
  return {
    catalog,
    available: names === undefined ? null : new Set(names),
    section,
    describe: run.deferred && modelVisibleSkills(catalog).length > 0,
    unknown: (names ?? []).filter((n) => !skillByName(run.catalog, n)),
  };
}
