/**
 * The container's writes cannot reach what the host executes: in the approved copy `up` runs on,
 * every protected path of the workspace (trust/protectedPaths.ts, the one list) is mounted a
 * second time, read-only, over itself. Inside the container a write, a rename or a hard link into
 * `.git`, `.vscode`, `.husky`, `.devcontainer`, … then fails (EROFS, EXDEV, EBUSY), while the rest
 * of the workspace stays writable. Why each piece:
 *
 * - `.git` as a whole, not only config/hooks/info/modules: git reads `$GIT_DIR/commondir` and then
 *   takes its config (core.fsmonitor, hooks) from the folder it names, so any file the container
 *   could create in `.git` can make host git run code. Git in the container is read-only for it.
 * - Found at any depth at bring-up: nested repositories' `.git` (a folder, or a file naming a
 *   gitdir, which is mounted too when it lies in the workspace), `sub/.vscode`, `*.code-workspace`, …
 *   A protected name that is a link is mounted where it leads (inside the workspace only: a host
 *   folder outside must not appear in the container) and its name is watched (protectedWatch.ts).
 * - Absent at the root: `.git`, `.vscode`, `.devcontainer` and `.husky` are created EMPTY on the host
 *   and mounted read-only, so the container cannot create one the host then trusts (no `.vscode`
 *   yet → no `tasks.json` with a folderOpen task). An empty folder changes nothing: git ignores
 *   empty folders and skips an empty `.git` when it looks for a repository; VS Code reads nothing
 *   from an empty `.vscode`. Files (`.envrc`, `lefthook.yml`, …) are not created (an empty
 *   `.pre-commit-config.yaml` would break the user's commits): a new one is what the after-command
 *   watch catches.
 * - `--mount-workspace-git-root false` (devcontainerCli.ts): otherwise the CLI mounts the
 *   repository root when the folder is a subfolder of it, and the parent's `.git` would be
 *   writable in the container.
 *
 * Every container made this way carries the label `deerflow.protection=<hash of the mounts>`. A
 * container without it (made before, or by VS Code's Dev Containers) is recreated when stopped and
 * refused when running (mounts cannot be added to a running container); after `up` the mounts are
 * checked in the engine's own description of the container before any command runs.
 */
import { createHash } from "node:crypto";
import { lstat, mkdir, readFile, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { HarnessError } from "../../errors.js";
import { isWithin } from "../paths.js";
import { ruleOfSegment } from "../../trust/protectedPaths.js";
import { walkTree, type TreeEntry } from "../../trust/treeWalk.js";
import type { ContainerInspect, ContainerSummary } from "./engineApi.js";

export const PROTECTION_LABEL = "deerflow.protection";
const PROTECTION_VERSION = "deerflow-protection/1";
/** Created empty at the workspace root when absent, so that the container cannot create them. */
export const ROOT_PLACEHOLDERS = [".git", ".vscode", ".devcontainer", ".husky"] as const;
/** More than this many protected entries (a vendored tree full of `.git`) and the rest is watched, not mounted. */
const MAX_MOUNTS = 256;
const MAX_GITFILE_BYTES = 4096;

export interface ProtectedMount {
  /** Workspace-relative, `/` separators: where it is mounted under the container's workspace folder. */
  readonly rel: string;
  /** The host path mounted. */
  readonly source: string;
  /** An empty folder DeerFlow creates because nothing was there. */
  readonly placeholder: boolean;
}

export interface ProtectionPlan {
  readonly folder: string;
  /** The workspace folder inside the container; undefined when the config mounts no workspace. */
  readonly target: string | undefined;
  readonly mounts: readonly ProtectedMount[];
  /** Protected entries that are not mounted (a link's name, over the cap, an unmountable name): watched. */
  readonly unmounted: readonly string[];
  /** sha256 over the mounts: the container's `deerflow.protection` label. */
  readonly hash: string;
}

export function unprotected(folder: string, why: string): HarnessError {
  return new HarnessError(
    "sandbox_unprotected",
    `DeerFlow runs no command in the dev container of ${folder}: ${why}. Without its read-only mounts the container could ` +
      "write .git, .vscode and the other paths that make this machine run code.",
  );
}

/** Where the config mounts the workspace in the container (the CLI's default, or its `workspaceMount`). */
export function workspaceTarget(config: Readonly<Record<string, unknown>>, folder: string): string | undefined {
  if (config.dockerComposeFile !== undefined) {
    throw unprotected(folder, "its configuration uses Docker Compose, where DeerFlow cannot add read-only mounts yet (use an image or a Dockerfile)");
  }
  const mount = config.workspaceMount;
  if (mount === undefined) return posix.join("/workspaces", basename(folder));
  if (mount === null || mount === "") return undefined;
  if (typeof mount !== "string") throw unprotected(folder, "its workspaceMount is not a mount string");
  const text = mount.replaceAll("${localWorkspaceFolderBasename}", basename(folder)).replaceAll("${localWorkspaceFolder}", folder);
  if (text.includes("${")) throw unprotected(folder, `its workspaceMount uses a variable DeerFlow does not resolve (${mount})`);
  const fields = new Map(splitMountFields(text).map((f) => [f.slice(0, f.indexOf("=") < 0 ? f.length : f.indexOf("=")), f.slice(f.indexOf("=") + 1)]));
  const source = fields.get("source") ?? fields.get("src");
  const target = fields.get("target") ?? fields.get("dst") ?? fields.get("destination");
  if ((fields.get("type") ?? "bind") !== "bind" || !source || !target || resolve(source) !== folder) {
    throw unprotected(folder, `its workspaceMount (${mount}) does not bind exactly this folder, so DeerFlow cannot tell where its protected paths are`);
  }
  return posix.normalize(target);
}

/** docker's --mount syntax: comma-separated fields, a field in double quotes may hold commas. */
function splitMountFields(text: string): string[] {
  const fields: string[] = [];
  let current = "";
  let quoted = false;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    else if (c === "," && !quoted) {
      fields.push(current);
      current = "";
    } else current += c;
  }
  fields.push(current);
  return fields.map((f) => f.trim()).filter((f) => f !== "");
}

const quoted = (field: string): string => (field.includes(",") ? `"${field}"` : field);

/** The `mounts` entries the approved copy adds: read-only binds of each protected path over itself. */
export function mountArgs(plan: ProtectionPlan): string[] {
  if (plan.target === undefined) return [];
  const target = plan.target;
  return plan.mounts.map((m) => `type=bind,${quoted(`source=${m.source}`)},${quoted(`target=${posix.join(target, m.rel)}`)},readonly`);
}

/** Reads the tree (bounded, async, links not followed) and says what to mount read-only. */
export async function planProtection(folder: string, config: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<ProtectionPlan> {
  const target = workspaceTarget(config, folder);
  const found: TreeEntry[] = [];
  const isProtected = (entry: TreeEntry): boolean => ruleOfSegment(basename(entry.path)) !== undefined;
  await walkTree(
    folder,
    (entry) => {
      if (isProtected(entry)) found.push(entry);
      return true;
    },
    { enter: (entry) => !isProtected(entry), ...(signal ? { signal } : {}) },
  );
  const mounts: ProtectedMount[] = [];
  const unmounted: string[] = [];
  const add = (source: string, placeholder = false): void => {
    const rel = relative(folder, source).split(sep).join("/");
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel) || /["\n\r]/.test(source)) return;
    mounts.push({ rel, source, placeholder });
  };
  for (const entry of found) {
    if (entry.isSymlink) {
      unmounted.push(entry.rel);
      const real = await realpath(entry.path).catch(() => undefined);
      if (real !== undefined && isWithin(real, folder) && real !== folder) add(real);
    } else if (entry.isDir || entry.isFile) {
      add(entry.path);
      if (entry.isFile && basename(entry.path) === ".git") for (const dir of await gitdirsOf(entry.path, folder)) add(dir);
    } else {
      unmounted.push(entry.rel);
    }
  }
  for (const name of ROOT_PLACEHOLDERS) {
    const path = join(folder, name);
    const absent = await lstat(path).then(
      () => false,
      (err: NodeJS.ErrnoException) => err.code === "ENOENT",
    );
    if (absent) add(path, true);
  }
  const kept = coveredRemoved(mounts).sort((a, b) => depth(a) - depth(b) || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  for (const m of kept.slice(MAX_MOUNTS)) unmounted.push(m.rel);
  const chosen = kept.slice(0, MAX_MOUNTS);
  const hash = createHash("sha256").update(`${PROTECTION_VERSION}\n${target ?? ""}\n`);
  for (const m of chosen) hash.update(`${m.rel}\0${m.source}\n`);
  return { folder, target, mounts: chosen, unmounted: [...new Set(unmounted)].sort(), hash: hash.digest("hex").slice(0, 32) };
}

const depth = (m: ProtectedMount): number => m.rel.split("/").length;

/** A mount inside another mount is already read-only. */
function coveredRemoved(mounts: readonly ProtectedMount[]): ProtectedMount[] {
  const unique = [...new Map(mounts.map((m) => [m.source, m])).values()];
  return unique.filter((m) => !unique.some((o) => o !== m && o.source !== m.source && isWithin(m.source, o.source)));
}

/**
 * A `.git` FILE names the repository's real gitdir (`gitdir: ../.git/modules/x`, a worktree's
 * `.git/worktrees/y`), and that gitdir may name a common dir: host git reads config and hooks
 * from both, so both are mounted when they lie in the workspace.
 */
async function gitdirsOf(gitFile: string, folder: string): Promise<string[]> {
  const dirs: string[] = [];
  const pointer = async (file: string, pattern: RegExp): Promise<string | undefined> => {
    const text = await readFile(file, "utf8").catch(() => "");
    if (text.length > MAX_GITFILE_BYTES) return undefined;
    const named = pattern.exec(text)?.[1]?.trim();
    if (!named) return undefined;
    const real = await realpath(resolve(dirname(file), named)).catch(() => undefined);
    return real !== undefined && isWithin(real, folder) ? real : undefined;
  };
  const gitdir = await pointer(gitFile, /^gitdir:\s*(.+)$/m);
  if (gitdir === undefined) return dirs;
  dirs.push(gitdir);
  const common = await pointer(join(gitdir, "commondir"), /^(.+)$/m);
  if (common !== undefined) dirs.push(common);
  return dirs;
}

/** Makes the placeholder folders (empty, on the host) right before `up` needs them as mount sources. */
export async function createPlaceholders(plan: ProtectionPlan): Promise<void> {
  for (const m of plan.mounts) {
    if (!m.placeholder) continue;
    try {
      await mkdir(m.source, { mode: 0o755 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const info = await lstat(m.source);
    if (!info.isDirectory()) throw unprotected(plan.folder, `${m.rel} appeared as something other than a folder while DeerFlow prepared it`);
  }
}

export interface ProtectionCheck {
  /** Why the container may not be used; empty when it is protected. */
  readonly problems: readonly string[];
  /** The planned mounts the container really has read-only (what the watch may skip). */
  readonly mounted: readonly ProtectedMount[];
}

/**
 * The container as the engine describes it, against the plan. `fresh`: made or started from this
 * plan now, so every mount must be there. A container of ours that was already running, made
 * from an earlier plan (a protected folder appeared on the host since), cannot get mounts added:
 * what it lacks is watched after every command instead (protectedWatch.ts).
 */
export function checkProtection(info: ContainerInspect, plan: ProtectionPlan, fresh: boolean): ProtectionCheck {
  const problems: string[] = [];
  const mounts = info.Mounts ?? [];
  if (info.Config.Labels?.[PROTECTION_LABEL] === undefined) problems.push("it was not created by DeerFlow with read-only mounts");
  for (const m of mounts) {
    if (m.Type !== "bind" || !m.RW) continue;
    const source = resolve(m.Source);
    if (isWithin(plan.folder, source)) {
      if (source !== plan.folder || m.Destination !== plan.target) problems.push(`it mounts ${m.Source} writable at ${m.Destination}`);
    } else if (isWithin(source, plan.folder)) {
      const rel = relative(plan.folder, source).split(sep);
      if (rel.some((s) => ruleOfSegment(s) !== undefined) || plan.mounts.some((p) => isWithin(p.source, source))) {
        problems.push(`it mounts ${m.Source}, which holds protected paths, writable at ${m.Destination}`);
      }
    }
  }
  const mounted: ProtectedMount[] = [];
  if (plan.target !== undefined) {
    const target = plan.target;
    for (const p of plan.mounts) {
      const present = mounts.some((m) => m.Type === "bind" && !m.RW && m.Destination === posix.join(target, p.rel) && resolve(m.Source) === p.source);
      if (present) mounted.push(p);
      else if (fresh) problems.push(`${p.rel} is not mounted read-only in it`);
    }
  }
  return { problems, mounted };
}

/**
 * What to do with the container `up` would reuse (found by the same id labels). Mounts are fixed
 * when a container is created, so one made without ours, or from another plan, cannot simply be
 * started: a stopped one is recreated; a running one without our label is refused (someone may be
 * using it: VS Code's Dev Containers made it), one of ours from an older plan is used as it is.
 * `fresh`: the container will be created or started now, so it must have every planned mount.
 */
export function reuseVerdict(existing: readonly ContainerSummary[], plan: ProtectionPlan, removeExisting: boolean): { recreate: boolean; fresh: boolean } {
  let recreate = removeExisting;
  for (const c of existing) {
    const label = c.Labels[PROTECTION_LABEL];
    if (c.State === "running" && label === undefined && !removeExisting) {
      const id = c.Id.slice(0, 12);
      throw unprotected(
        plan.folder,
        `its container ${id} is running without DeerFlow's read-only mounts (it was made earlier, or by VS Code's Dev Containers). ` +
          `Stop it (docker stop ${id}) or rebuild it, and DeerFlow makes it again with them`,
      );
    }
    if (c.State !== "running" && label !== plan.hash) recreate = true;
  }
  return { recreate, fresh: recreate || !existing.some((c) => c.State === "running") };
}
