/**
 * The run's skill catalogue (DeerFlow `skills/catalog.py`'s SkillCatalog, plus what its storage
 * classes decide): immutable, built once per run from what discover.ts found, so the prompt, the
 * sandbox view, the activation and the tool policy of one run all agree.
 *
 * - Parsed with parse.ts; a folder that cannot be loaded is kept as `broken` with its diagnostics,
 *   and the rest load.
 * - A name is taken by the first root that has it (project before user, discover.ts); a later
 *   skill of the same name is `shadowed`: listed with a diagnostic, warned once per process
 *   through `onShadow`, not loaded.
 * - Each skill gets its folder `/mnt/skills/<scope>/<path below its root>` (DeerFlow's
 *   `get_container_path`: `custom/team/helper` stays `/mnt/skills/custom/team/helper`), or, when
 *   another root of the same scope already holds that path (or one above or below it), the same
 *   path with its first segment made `<segment>-2`, …: two skills never share or nest folders.
 * - Sorted by name (DeerFlow's load_skills), so everything rendered from it is stable.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { SKILLS_VIRTUAL_PATH } from "../sandbox/paths.js";
import type { Discovery } from "./discover.js";
import type { EnabledState } from "./enabledState.js";
import { parseSkillMd } from "./parse.js";
import { SKILL_FILE, type BrokenSkill, type Skill, type SkillDiagnostic, type SkillScope } from "./types.js";

export interface ShadowedSkill {
  readonly name: string;
  readonly scope: SkillScope;
  readonly hostDir: string;
  readonly root: string;
  /** The skill that keeps the name. */
  readonly by: { scope: SkillScope; hostDir: string };
}

export interface SkillCatalog {
  /** Loaded skills, enabled or not, by name. */
  readonly skills: readonly Skill[];
  readonly broken: readonly BrokenSkill[];
  readonly shadowed: readonly ShadowedSkill[];
  /** About the roots and the enabled-state files, not one skill. */
  readonly diagnostics: readonly SkillDiagnostic[];
  /** sha256 over what the model is told (names, descriptions, locations, enabled): equal catalogues, equal prompts. */
  readonly hash: string;
}

const shadowWarned = new Set<string>();

export interface CatalogOptions {
  /** Called the first time this process sees a shadowed skill (the "warned once" of issue 24). */
  onShadow?: (message: string) => void;
}

export function buildCatalog(discovery: Discovery, state: EnabledState, options: CatalogOptions = {}): SkillCatalog {
  const skills: Skill[] = [];
  const broken: BrokenSkill[] = [];
  const shadowed: ShadowedSkill[] = [];
  const byName = new Map<string, Skill>();
  const taken = new Set<string>();
  for (const f of discovery.found) {
    const parsed = f.text !== undefined ? parseSkillMd(f.text, f.folderName) : undefined;
    const diagnostics = [...f.diagnostics, ...(parsed?.diagnostics ?? [])];
    if (!parsed?.meta) {
      broken.push({ scope: f.scope, hostDir: f.hostDir, root: f.root, diagnostics });
      continue;
    }
    const first = byName.get(parsed.meta.name);
    if (first) {
      shadowed.push({ name: parsed.meta.name, scope: f.scope, hostDir: f.hostDir, root: f.root, by: { scope: first.scope, hostDir: first.hostDir } });
      const key = `${parsed.meta.name}\0${f.hostDir}\0${first.hostDir}`;
      if (!shadowWarned.has(key)) {
        shadowWarned.add(key);
        options.onShadow?.(`Skill "${parsed.meta.name}" in ${f.hostDir} is shadowed by the ${first.scope} skill in ${first.hostDir} (the first root wins: project before user).`);
      }
      continue;
    }
    const segment = freeSegment(taken, f.scope, f.relPath);
    taken.add(`${f.scope}/${segment}`);
    const virtualDir = posix.join(SKILLS_VIRTUAL_PATH, f.scope, segment);
    const skill: Skill = {
      meta: parsed.meta,
      scope: f.scope,
      hostDir: f.hostDir,
      segment,
      virtualDir,
      location: posix.join(virtualDir, SKILL_FILE),
      enabled: !state.disabled.has(parsed.meta.name),
      root: f.root,
      diagnostics,
    };
    byName.set(parsed.meta.name, skill);
    skills.push(skill);
  }
  skills.sort((a, b) => (a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0));
  const hash = createHash("sha256");
  for (const s of skills) hash.update(`${s.meta.name}\0${s.meta.description}\0${s.location}\0${s.enabled}\0${s.meta.disableModelInvocation}\0${(s.meta.allowedTools ?? ["*"]).join(",")}\n`);
  return { skills, broken, shadowed, diagnostics: [...discovery.diagnostics, ...state.diagnostics], hash: hash.digest("hex").slice(0, 16) };
}

/** `rel`, or the first variant of it that neither equals, contains nor lies inside a taken one of `scope`. */
function freeSegment(taken: ReadonlySet<string>, scope: string, rel: string): string {
  const clashes = (candidate: string) => {
    const key = `${scope}/${candidate}`;
    for (const t of taken) if (t === key || t.startsWith(`${key}/`) || key.startsWith(`${t}/`)) return true;
    return false;
  };
  const [first, ...rest] = rel.split("/");
  let candidate = rel;
  for (let n = 2; clashes(candidate); n++) candidate = [`${first}-${n}`, ...rest].join("/");
  return candidate;
}

export function enabledSkills(c: SkillCatalog): Skill[] {
  return c.skills.filter((s) => s.enabled);
}

export function skillByName(c: SkillCatalog, name: string): Skill | undefined {
  return c.skills.find((s) => s.meta.name === name);
}

/** The loaded skill whose folder holds `virtualPath` (`/mnt/skills/<scope>/<folder>/…`). */
export function skillAt(c: SkillCatalog, virtualPath: string): Skill | undefined {
  const p = posix.normalize(virtualPath);
  return c.skills.find((s) => p === s.virtualDir || p.startsWith(`${s.virtualDir}/`));
}

/** A catalogue limited to `names` (a subagent's `skills` list, DeerFlow's available_skills); null = all. */
export function restrictCatalog(c: SkillCatalog, names: readonly string[] | null | undefined): SkillCatalog {
  if (names === null || names === undefined) return c;
  const allowed = new Set(names);
  return { ...c, skills: c.skills.filter((s) => allowed.has(s.meta.name)) };
}
