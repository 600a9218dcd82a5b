/**
 * The catalogue as people read it: `deerflow skills list` (one JSON line each) and the panel's
 * Skills section (`skills/list`): every folder with a SKILL.md, loaded, broken or shadowed.
 */
import { join } from "node:path";
import type { SkillView } from "../../protocol/rpc.js";
import type { SkillCatalog } from "./catalog.js";
import { SKILL_FILE } from "./types.js";

export function skillViews(c: SkillCatalog): SkillView[] {
  const loaded: SkillView[] = c.skills.map((s) => ({
    name: s.meta.name,
    scope: s.scope,
    path: join(s.hostDir, SKILL_FILE),
    location: s.location,
    description: s.meta.description,
    enabled: s.enabled,
    status: "loaded",
    allowed_tools: s.meta.allowedTools ? [...s.meta.allowedTools] : null,
    user_invocable: s.meta.userInvocable,
    model_invocable: !s.meta.disableModelInvocation,
    ...(s.meta.argumentHint ? { argument_hint: s.meta.argumentHint } : {}),
    diagnostics: [...s.diagnostics],
  }));
  const shadowed: SkillView[] = c.shadowed.map((s) => ({
    name: s.name,
    scope: s.scope,
    path: join(s.hostDir, SKILL_FILE),
    location: null,
    description: null,
    enabled: false,
    status: "shadowed",
    allowed_tools: null,
    user_invocable: false,
    model_invocable: false,
    shadowed_by: join(s.by.hostDir, SKILL_FILE),
    diagnostics: [{ level: "warning", code: "shadowed", message: `Not loaded: the ${s.by.scope} skill in ${s.by.hostDir} has the same name (the first root wins: project before user)` }],
  }));
  const broken: SkillView[] = c.broken.map((b) => ({
    name: null,
    scope: b.scope,
    path: join(b.hostDir, SKILL_FILE),
    location: null,
    description: null,
    enabled: false,
    status: "broken",
    allowed_tools: null,
    user_invocable: false,
    model_invocable: false,
    diagnostics: [...b.diagnostics],
  }));
  return [...loaded, ...shadowed, ...broken];
}
