/**
 * Step 1 of the agentskills client guide: find the folders that hold a SKILL.md, in the issue's
 * roots, in order (project before user; the first of a name wins, see catalog.ts):
 *
 *   project (only in a trusted workspace): .deerflow/skills, .agents/skills, .github/skills, .claude/skills
 *   user: <data-dir>/skills, ~/.agents/skills, ~/.claude/skills
 *   DeerFlow's skills.path (else DEER_FLOW_SKILLS_PATH): its custom/ then public/ (DeerFlow's
 *   categories; custom wins, as `test_load_skills_prefers_custom_over_public_with_same_name`)
 *
 * A folder holding SKILL.md is a skill, and a package boundary: nested SKILL.md files are its
 * resources (DeerFlow). Other folders are namespaces, entered down to a bounded depth. Hidden
 * folders, `node_modules` and `__pycache__` are skipped; every root's walk is bounded in folders.
 *
 * Links. A user root may be linked anywhere (users keep skills in a dotfiles repository). A project
 * root, namespace or skill folder is followed only while it stays inside the workspace: the
 * workspace is the sandbox's to write, and a link it plants must not pull the user's files into
 * `/mnt/skills` (view.ts applies the same rule inside each skill folder). Async and bounded, as
 * every walk of a tree the sandbox may have shaped (trust/README.md, the threat model).
 *
 * Refused folders (issue 31). Whatever a skill folder holds is copied into `/mnt/skills`, which
 * every thread of the workspace reads, so no skill folder of any root (by its real path) may be:
 * the workspace folder itself or a folder above it; a folder holding `.deerflow` (a workspace's
 * thread data: other threads' uploads and outputs); or a folder inside the workspace under a
 * protected path (trust/protectedPaths.ts: `.git`, `.vscode`, `.devcontainer`, …, and `.deerflow`
 * outside `.deerflow/skills`, the one project root that lives there). A refused skill folder is
 * listed as broken with the reason (`skill_folder_refused`); its SKILL.md is not even read.
 * A project root, and a namespace below one, is held to the same rule (a link the sandbox
 * planted: `root_refused`, `folder_refused`, warnings about the roots). A user root or namespace
 * is the user's choice and is not: a skill author may open `~/.claude/skills` as the workspace,
 * and its skill folders are still checked one by one.
 */
import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join, relative, sep } from "node:path";
import { THREAD_DATA_DIR_NAME, isWithin } from "../sandbox/paths.js";
import { openForRead } from "../trust/openChecked.js";
import { foldSegment, ruleWithinWorkspace } from "../trust/protectedPaths.js";
import { SKILL_FILE, type SkillDiagnostic, type SkillScope } from "./types.js";

export interface SkillRoot {
  readonly path: string;
  readonly scope: SkillScope;
  /** Links under this root may not lead outside this folder (the workspace, for project roots). */
  readonly confine?: string;
  /** The workspace folder, for every root: no folder of any root may be it or lie in its protected paths. */
  readonly workspace?: string;
}

export interface FoundSkill {
  readonly scope: SkillScope;
  readonly root: string;
  /** Real path of the skill folder. */
  readonly hostDir: string;
  /** The folder's name as found (a link's own name, not its target's). */
  readonly folderName: string;
  /** Its path below the root, `/`-separated (`team/helper`): DeerFlow's `relative_path`, kept in /mnt/skills. */
  readonly relPath: string;
  /** SKILL.md, when it could be read; else `diagnostics` says why. */
  readonly text?: string;
  readonly diagnostics: readonly SkillDiagnostic[];
}

export interface Discovery {
  readonly found: readonly FoundSkill[];
  /** About roots as a whole (a project root linked out of the workspace, a walk cut short). */
  readonly diagnostics: readonly SkillDiagnostic[];
}

export const PROJECT_SKILL_DIRS = [".deerflow/skills", ".agents/skills", ".github/skills", ".claude/skills"] as const;
const MAX_DEPTH = 4;
const MAX_FOLDERS_PER_ROOT = 2000;
const MAX_SKILL_MD_BYTES = 1024 * 1024;
const SKIPPED = new Set(["node_modules", "__pycache__"]);

export interface RootsInput {
  workspaceFolder?: string;
  /** VS Code workspace trust; the CLI's workspace is the operator's own choice (trusted). */
  workspaceTrusted: boolean;
  dataDir: string;
  /** DeerFlow's `skills.path`. */
  skillsPath?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
}

/** The roots, in precedence order. */
export function skillRoots(o: RootsInput): SkillRoot[] {
  const env = o.env ?? process.env;
  const home = o.home ?? (env.HOME || homedir());
  const roots: SkillRoot[] = [];
  const workspace = o.workspaceFolder ? { workspace: o.workspaceFolder } : {};
  if (o.workspaceFolder && o.workspaceTrusted) {
    for (const rel of PROJECT_SKILL_DIRS) roots.push({ path: join(o.workspaceFolder, rel), scope: "project", confine: o.workspaceFolder, ...workspace });
  }
  roots.push({ path: join(o.dataDir, "skills"), scope: "user", ...workspace });
  if (home) roots.push({ path: join(home, ".agents", "skills"), scope: "user", ...workspace }, { path: join(home, ".claude", "skills"), scope: "user", ...workspace });
  const deerflowRoot = o.skillsPath ?? env.DEER_FLOW_SKILLS_PATH;
  if (deerflowRoot) roots.push({ path: join(deerflowRoot, "custom"), scope: "custom", ...workspace }, { path: join(deerflowRoot, "public"), scope: "public", ...workspace });
  return roots;
}

const diag = (level: SkillDiagnostic["level"], code: string, message: string): SkillDiagnostic => ({ level, code, message });

/** The real path of a folder, or undefined when it is missing, not a folder, or leaves `confine`. */
async function realFolder(path: string, confine: string | undefined): Promise<{ real?: string; outside?: boolean }> {
  let real: string;
  try {
    real = await realpath(path);
    if (!(await stat(real)).isDirectory()) return {};
  } catch {
    return {};
  }
  if (confine !== undefined) {
    const confineReal = await realpath(confine).catch(() => confine);
    if (!isWithin(real, confineReal)) return { outside: true };
  }
  return { real };
}

/**
 * Why the folder at `real` (a real path) may not be a skill root, namespace or skill folder (see
 * the header), or undefined. `workspace`: the workspace folder's real path, when there is one.
 */
async function folderRefusal(real: string, workspace: string | undefined): Promise<string | undefined> {
  const purpose = "its files would be in /mnt/skills, which every thread reads";
  if (workspace !== undefined && isWithin(workspace, real)) {
    return real === workspace ? `it is the workspace folder itself (${purpose})` : `it holds the workspace folder (${purpose})`;
  }
  if (await lstat(join(real, THREAD_DATA_DIR_NAME)).then(() => true, () => false)) {
    return `it holds ${THREAD_DATA_DIR_NAME}, DeerFlow's thread data with every thread's uploads and outputs (${purpose})`;
  }
  if (workspace === undefined || !isWithin(real, workspace)) return undefined;
  // `.deerflow/skills` is a project root (PROJECT_SKILL_DIRS): below it, only the other rules count.
  const [first, second] = relative(workspace, real).split(sep);
  const inSkillsRoot = first !== undefined && second !== undefined && foldSegment(first) === THREAD_DATA_DIR_NAME && foldSegment(second) === "skills";
  const rule = ruleWithinWorkspace(real, inSkillsRoot ? join(workspace, first, second) : workspace);
  return rule ? `it lies in a protected path of the workspace (${rule.pattern}: ${rule.reason}; ${purpose})` : undefined;
}

/**
 * SKILL.md of a skill folder: a regular file (or a link to one inside the folder), bounded, UTF-8,
 * opened through the trust boundary's checked open. `bytes` for a caller that hashes the file.
 * A SKILL.md with more than one hard link is refused, as view.ts leaves such files out of
 * `/mnt/skills`: its other name may be any file of the same disk (no path check can tell).
 */
export async function readSkillFile(dir: string): Promise<{ text?: string; bytes?: Buffer; diagnostic?: SkillDiagnostic; present: boolean }> {
  const path = join(dir, SKILL_FILE);
  let info;
  try {
    info = await lstat(path);
  } catch {
    return { present: false };
  }
  let real = path;
  if (info.isSymbolicLink()) {
    real = await realpath(path).catch(() => "");
    if (!real || !isWithin(real, dir)) return { present: true, diagnostic: diag("error", "skill_file_link", "SKILL.md is a link that leads out of its skill folder; the skill is not loaded") };
    info = await stat(real);
  }
  // A folder named SKILL.md does not make a skill; a FIFO or a device is reported.
  if (info.isDirectory()) return { present: false };
  if (!info.isFile()) return { present: true, diagnostic: diag("error", "skill_file_invalid", "SKILL.md is not a regular file") };
  if (info.size > MAX_SKILL_MD_BYTES) return { present: true, diagnostic: diag("error", "skill_file_too_large", `SKILL.md is ${info.size} bytes; at most ${MAX_SKILL_MD_BYTES} are read`) };
  try {
    const handle = await openForRead(real);
    try {
      const links = (await handle.stat()).nlink;
      if (links > 1) return { present: true, diagnostic: diag("error", "skill_file_hard_linked", `SKILL.md has ${links} hard links: its other names may be any file on this disk, so it is not read; the skill is not loaded`) };
      const bytes = await handle.readFile();
      return { present: true, bytes, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
    } finally {
      await handle.close();
    }
  } catch (err) {
    const why = err instanceof TypeError ? "it is not UTF-8 text" : err instanceof Error ? err.message : String(err);
    return { present: true, diagnostic: diag("error", "skill_file_unreadable", `SKILL.md cannot be read: ${why}`) };
  }
}

async function walkRoot(root: SkillRoot, found: FoundSkill[], diagnostics: SkillDiagnostic[], signal?: AbortSignal): Promise<void> {
  const start = await realFolder(root.path, root.confine);
  if (start.outside) {
    diagnostics.push(diag("warning", "root_outside_workspace", `${root.path} leads out of the workspace through a link; project skills are read only inside it`));
    return;
  }
  if (!start.real) return;
  const workspace = root.workspace !== undefined ? await realpath(root.workspace).catch(() => root.workspace) : undefined;
  const rootRefused = root.confine !== undefined ? await folderRefusal(start.real, workspace) : undefined;
  if (rootRefused) {
    diagnostics.push(diag("warning", "root_refused", `${root.path} is not searched for skills: ${rootRefused}`));
    return;
  }
  const seen = new Set<string>();
  let folders = 0;
  const queue: Array<{ dir: string; depth: number; rel: string }> = [{ dir: start.real, depth: 0, rel: "" }];
  while (queue.length > 0) {
    signal?.throwIfAborted();
    const { dir, depth, rel } = queue.shift()!;
    if (seen.has(dir)) continue;
    seen.add(dir);
    if (++folders > MAX_FOLDERS_PER_ROOT) {
      diagnostics.push(diag("warning", "root_too_large", `${root.path} has more than ${MAX_FOLDERS_PER_ROOT} folders; the rest were not searched for skills`));
      return;
    }
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      if (name.startsWith(".") || SKIPPED.has(name)) continue;
      const child = await realFolder(join(dir, name), root.confine);
      if (child.outside) {
        diagnostics.push(diag("warning", "link_outside_workspace", `${join(dir, name)} is a link out of the workspace; it is not followed`));
        continue;
      }
      if (!child.real) continue;
      const hasSkillFile = await lstat(join(child.real, SKILL_FILE)).then(() => true, () => false);
      const refused = hasSkillFile || root.confine !== undefined ? await folderRefusal(child.real, workspace) : undefined;
      if (refused) {
        const relPath = rel ? `${rel}/${name}` : name;
        if (hasSkillFile) {
          const message = `${join(dir, name)} is not read as a skill: ${refused}`;
          found.push({ scope: root.scope, root: root.path, hostDir: child.real, folderName: name, relPath, diagnostics: [diag("error", "skill_folder_refused", message)] });
        } else if (depth + 1 < MAX_DEPTH) {
          diagnostics.push(diag("warning", "folder_refused", `${join(dir, name)} is not searched for skills: ${refused}`));
        }
        continue;
      }
      const skill = await readSkillFile(child.real);
      if (skill.present) {
        found.push({
          scope: root.scope,
          root: root.path,
          hostDir: child.real,
          folderName: name,
          relPath: rel ? `${rel}/${name}` : name,
          ...(skill.text !== undefined ? { text: skill.text } : {}),
          diagnostics: skill.diagnostic ? [skill.diagnostic] : [],
        });
      } else if (depth + 1 < MAX_DEPTH) {
        queue.push({ dir: child.real, depth: depth + 1, rel: rel ? `${rel}/${name}` : name });
      }
    }
  }
}

/** Every skill folder under `roots`, in root order, then by path. */
export async function discoverSkills(roots: readonly SkillRoot[], signal?: AbortSignal): Promise<Discovery> {
  const found: FoundSkill[] = [];
  const diagnostics: SkillDiagnostic[] = [];
  for (const root of roots) await walkRoot(root, found, diagnostics, signal);
  return { found, diagnostics };
}
