/**
 * The skills of one workspace, as every entry point needs them: `deerflow skills list`, the
 * harness's `skills/list` (the panel), and each run (runs/worker.ts), which takes its snapshot
 * once, at its start: the catalogue (discover → parse → enabled state) and the sandbox view.
 * Nothing is cached between calls: a SKILL.md edited, a skill disabled from the panel or from
 * extensions_config.json, counts from the next run on (DeerFlow re-reads on every load).
 */
import { existsSync } from "node:fs";
import type { SkillsMount } from "../threads/threadDirs.js";
import { buildCatalog, type SkillCatalog } from "./catalog.js";
import { discoverSkills, skillRoots } from "./discover.js";
import { extensionsConfigFiles, readEnabledState } from "./enabledState.js";
import { usesDeferredDiscovery } from "./prompt.js";
import { skillsViewRoot, syncSkillsView } from "./view.js";
import type { SkillsConfig } from "./config.js";

export interface SkillsContext {
  workspaceFolder: string;
  /** VS Code workspace trust (the harness's settings); the CLI's workspace is trusted. */
  workspaceTrusted: boolean;
  dataDir: string;
  config?: SkillsConfig;
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** Warnings worth a log line (a shadowed skill, once per process). */
  warn?: (message: string) => void;
}

export async function loadSkillCatalog(ctx: SkillsContext, signal?: AbortSignal): Promise<SkillCatalog> {
  const roots = skillRoots({
    workspaceFolder: ctx.workspaceFolder,
    workspaceTrusted: ctx.workspaceTrusted,
    dataDir: ctx.dataDir,
    ...(ctx.config?.path ? { skillsPath: ctx.config.path } : {}),
    ...(ctx.env ? { env: ctx.env } : {}),
    ...(ctx.home ? { home: ctx.home } : {}),
  });
  const discovery = await discoverSkills(roots, signal);
  const state = readEnabledState(extensionsConfigFiles({ dataDir: ctx.dataDir, workspaceFolder: ctx.workspaceFolder, workspaceTrusted: ctx.workspaceTrusted, ...(ctx.env ? { env: ctx.env } : {}) }));
  return buildCatalog(discovery, state, ctx.warn ? { onShadow: ctx.warn } : {});
}

/** One run's skills: what the prompt, the middlewares, the tools and the sandbox mapping share. */
export interface RunSkills {
  readonly catalog: SkillCatalog;
  readonly mount: SkillsMount;
  /** `<skill_index>` + describe_skill instead of `<available_skills>`. */
  readonly deferred: boolean;
}

/** The run's snapshot; undefined when the workspace has no skill at all (nothing to say or map). */
export async function prepareRunSkills(ctx: SkillsContext, signal?: AbortSignal): Promise<RunSkills | undefined> {
  const catalog = await loadSkillCatalog(ctx, signal);
  const root = skillsViewRoot(ctx.dataDir, ctx.workspaceFolder);
  // No skill: no view is made (most workspaces); one left from earlier skills is emptied, since a
  // dev container may still mount it.
  if (catalog.skills.length === 0) {
    if (existsSync(root)) await syncSkillsView(root, [], signal);
    return undefined;
  }
  const notes = await syncSkillsView(root, catalog.skills, signal);
  for (const [name, list] of notes) for (const d of list) ctx.warn?.(`Skill "${name}": ${d.message}`);
  const disabled = new Map(catalog.skills.filter((s) => !s.enabled).map((s) => [s.virtualDir, s.meta.name]));
  return { catalog, mount: { root, disabled }, deferred: usesDeferredDiscovery(catalog, ctx.config?.deferred_discovery) };
}
