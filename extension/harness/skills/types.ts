/**
 * Agent Skills (issue 24): what a skill is once it has been found and parsed, shared by the
 * modules of this folder (one per step of the agentskills client guide: discover, parse, disclose,
 * activate, manage) and by the middlewares, tools and the sandbox mapping that use them.
 *
 * Layout in the sandbox, as DeerFlow's (`skills/types.py` get_container_file_path): every enabled
 * skill is readable at `/mnt/skills/<scope>/<folder>/…`, its main file `…/SKILL.md`. The scopes:
 * - `project`: the workspace's `.deerflow/skills`, `.agents/skills`, `.github/skills`, `.claude/skills`;
 * - `user`: `<data-dir>/skills`, `~/.agents/skills`, `~/.claude/skills`;
 * - `custom`, `public`: DeerFlow's own categories under its `skills.path` root (so a DeerFlow
 *   checkout's skills keep their DeerFlow paths, `/mnt/skills/public/deep-research/SKILL.md`).
 */

/** DeerFlow's `skills.container_path` (`constants.py` DEFAULT_SKILLS_CONTAINER_PATH); the only one supported here. */
export const SKILLS_VIRTUAL_ROOT = "/mnt/skills";
export const SKILL_FILE = "SKILL.md";

export type SkillScope = "project" | "user" | "custom" | "public";

export type DiagnosticLevel = "error" | "warning" | "info";

/** Something an operator may want to fix; never fatal for the other skills. */
export interface SkillDiagnostic {
  level: DiagnosticLevel;
  /** Stable, for tests and the panel: e.g. `yaml_invalid`, `description_missing`, `name_mismatch`. */
  code: string;
  message: string;
}

/** The front matter as this harness reads it (the spec's keys, DeerFlow's and Claude Code's). */
export interface SkillMeta {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  /**
   * Tool names the skill may use once active, normalised to this harness's names; undefined when
   * the field is absent (no restriction), `[]` when it declares none (DeerFlow's semantics).
   */
  allowedTools?: readonly string[];
  /** DeerFlow `required-secrets`: declared, listed, never bound here (no request-scoped secrets yet). */
  requiredSecrets: readonly string[];
  /** Kept out of the model's catalogue; still readable and slash-activatable (agentskills spec). */
  disableModelInvocation: boolean;
  /** `false`: not offered for `/name` (VS Code, Claude Code). */
  userInvocable: boolean;
  argumentHint?: string;
}

/** One skill folder, parsed or not. */
export interface Skill {
  readonly meta: SkillMeta;
  readonly scope: SkillScope;
  /** The skill folder's real host path (where `SKILL.md` is). */
  readonly hostDir: string;
  /** The folder's path under `/mnt/skills/<scope>/`, nesting kept (`team/helper`; unique per scope, see catalog.ts). */
  readonly segment: string;
  /** `/mnt/skills/<scope>/<segment>` */
  readonly virtualDir: string;
  /** `/mnt/skills/<scope>/<segment>/SKILL.md` */
  readonly location: string;
  readonly enabled: boolean;
  /** The root it was found in (for `skills list` and the panel). */
  readonly root: string;
  readonly diagnostics: readonly SkillDiagnostic[];
}

/** A folder with a SKILL.md that could not be loaded (no description, unparseable YAML, …). */
export interface BrokenSkill {
  readonly scope: SkillScope;
  readonly hostDir: string;
  readonly root: string;
  readonly diagnostics: readonly SkillDiagnostic[];
}
