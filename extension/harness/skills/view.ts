/**
 * What `/mnt/skills` is on the host: an enabled-only copy of the run's skills, kept beside the
 * workspace's database (`<data-dir>/workspaces/<key>/skills-view`), DeerFlow's projection
 * (`skills/projection.py`) in miniature:
 *
 * - `<scope>/<folder>/…` for every ENABLED skill, nothing else: a disabled skill's files are not
 *   there at all, so neither a file tool nor bash (host or container) can read them;
 * - regular files and folders only. A link inside a skill folder is followed only when its real
 *   path stays inside that folder, and then copied as what it points to; any other link is left
 *   out (and said so). So nothing in the view leads anywhere else, whoever wrote the skill, and
 *   the read-only mount of a dev container and the path mapping of the local sandbox see the same
 *   bytes. Sources are opened through the trust boundary's checked open: a file swapped for a
 *   link between the check and the copy is refused;
 * - a file with more than one hard link is left out too (and said so, as a link is): its other
 *   name may be any file on the same disk, a host secret hard-linked into a skill folder by the
 *   sandbox, and no path check can see it. Checked when listed and again on the open descriptor;
 * - `.deerflow` (DeerFlow's thread data: every thread's uploads and outputs) is never copied, at
 *   any depth, compared as a case-insensitive volume sees the name. discover.ts already refuses a
 *   skill folder that holds one; this is for one found deeper, or swapped in after discovery;
 * - the root and scope folders keep their inodes, so a dev container's bind mount of the root
 *   (sandbox/devcontainer/skillsMount.ts) sees every later sync without being recreated;
 * - synced at each run's start: a file is copied again when its size or modification time differ
 *   from the source's (the copy carries the source's mtime), extra entries are removed, and
 *   anything local bash may have changed in the view is repaired. Bounded in files and bytes.
 */
import { chmod, lstat, mkdir, readdir, realpath, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { randomBytes } from "node:crypto";
import { THREAD_DATA_DIR_NAME, isWithin } from "../sandbox/paths.js";
import { openForRead } from "../trust/openChecked.js";
import { foldSegment } from "../trust/protectedPaths.js";
import type { Skill, SkillDiagnostic } from "./types.js";

const MAX_DEPTH = 8;
const MAX_FILES_PER_SKILL = 1000;
const MAX_BYTES_PER_SKILL = 32 * 1024 * 1024;
const MAX_FILES = 10_000;
const MAX_BYTES = 256 * 1024 * 1024;
const SKIPPED = new Set([".git", "node_modules", "__pycache__", ".DS_Store"]);

export { skillsViewRoot } from "./viewRoot.js";

interface Wanted {
  src: string;
  size: number;
  mtimeMs: number;
  executable: boolean;
}

const diag = (code: string, message: string): SkillDiagnostic => ({ level: "warning", code, message });

const hardLinkNote = (rel: string, links: number) =>
  `${rel} has ${links} hard links (its other names may be any file on this disk); it is not in /mnt/skills`;

/** Thrown by copyInto for a source that gained a hard link since it was listed. */
class HardLinkedSource extends Error {
  constructor(readonly links: number) {
    super(`the source has ${links} hard links`);
  }
}

/** A real folder at `path` (a link or a file there is replaced), its inode kept when it already is one. */
async function ensureFolder(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (info?.isDirectory()) return;
  if (info) await rm(path, { recursive: true, force: true });
  await mkdir(path, { mode: 0o755 });
}

/** Walk one skill folder (real path), collecting what the view should hold for it. */
async function collect(skill: Skill, files: Map<string, Wanted>, dirs: Set<string>, totals: { files: number; bytes: number }, signal?: AbortSignal): Promise<SkillDiagnostic[]> {
  const out: SkillDiagnostic[] = [];
  const base = posix.join(skill.scope, skill.segment);
  // Every folder from the scope down to the skill: a nested skill (`custom/team/helper`) keeps its path.
  base.split("/").forEach((_, i, parts) => dirs.add(parts.slice(0, i + 1).join("/")));
  const seen = new Set<string>();
  let count = 0;
  let bytes = 0;
  let capped = false;
  const queue: Array<{ dir: string; rel: string; depth: number }> = [{ dir: skill.hostDir, rel: base, depth: 0 }];
  while (queue.length > 0 && !capped) {
    signal?.throwIfAborted();
    const { dir, rel, depth } = queue.shift()!;
    const names = (await readdir(dir).catch(() => [] as string[])).sort();
    for (const name of names) {
      if (SKIPPED.has(name) || foldSegment(name) === THREAD_DATA_DIR_NAME) continue;
      const path = join(dir, name);
      let info = await lstat(path).catch(() => undefined);
      if (!info) continue;
      let real = path;
      if (info.isSymbolicLink()) {
        real = (await realpath(path).catch(() => "")) || "";
        if (!real || !isWithin(real, skill.hostDir)) {
          out.push(diag("link_outside_skill", `${posix.join(rel.slice(base.length + 1), name) || name} is a link that leads out of the skill folder; it is not in /mnt/skills`));
          continue;
        }
        info = await stat(real).catch(() => undefined);
        if (!info) continue;
      }
      const childRel = posix.join(rel, name);
      if (info.isDirectory()) {
        const key = `${info.dev}:${info.ino}`;
        if (seen.has(key) || depth + 1 > MAX_DEPTH) continue;
        seen.add(key);
        dirs.add(childRel);
        queue.push({ dir: real, rel: childRel, depth: depth + 1 });
      } else if (info.isFile()) {
        if (info.nlink > 1) {
          out.push(diag("hard_link", hardLinkNote(posix.join(rel.slice(base.length + 1), name) || name, info.nlink)));
          continue;
        }
        if (count + 1 > MAX_FILES_PER_SKILL || bytes + info.size > MAX_BYTES_PER_SKILL || totals.files + 1 > MAX_FILES || totals.bytes + info.size > MAX_BYTES) {
          out.push(diag("skill_too_large", `The skill has more than ${MAX_FILES_PER_SKILL} files or ${MAX_BYTES_PER_SKILL / (1024 * 1024)} MiB (or all skills together more than ${MAX_FILES} / ${MAX_BYTES / (1024 * 1024)} MiB); only part of it is in /mnt/skills`));
          capped = true;
          break;
        }
        count++;
        bytes += info.size;
        totals.files++;
        totals.bytes += info.size;
        files.set(childRel, { src: real, size: info.size, mtimeMs: info.mtimeMs, executable: (info.mode & 0o100) !== 0 });
      }
    }
  }
  return out;
}

async function copyInto(dest: string, w: Wanted): Promise<void> {
  const handle = await openForRead(w.src);
  let bytes: Buffer;
  try {
    const links = (await handle.stat()).nlink;
    if (links > 1) throw new HardLinkedSource(links);
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  const tmp = `${dest}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, bytes, { mode: 0o644, flag: "wx" });
  await chmod(tmp, w.executable ? 0o755 : 0o644);
  await utimes(tmp, new Date(), new Date(w.mtimeMs));
  const existing = await lstat(dest).catch(() => undefined);
  if (existing && !existing.isFile()) await rm(dest, { recursive: true, force: true });
  await rename(tmp, dest);
}

/** Remove what the view holds beyond `files` and `dirs` (links included, never followed). */
async function prune(root: string, rel: string, files: Map<string, Wanted>, dirs: Set<string>): Promise<void> {
  for (const name of await readdir(join(root, rel)).catch(() => [] as string[])) {
    const childRel = rel ? posix.join(rel, name) : name;
    const path = join(root, childRel);
    const info = await lstat(path).catch(() => undefined);
    if (!info) continue;
    if (info.isDirectory() && dirs.has(childRel)) await prune(root, childRel, files, dirs);
    else if (!(info.isFile() && files.has(childRel))) await rm(path, { recursive: true, force: true });
  }
}

const inFlight = new Map<string, Promise<unknown>>();

/**
 * Make `root` hold exactly the enabled `skills` (see the header); returns per skill name what was
 * left out. Syncs of one root in this process run one after another.
 */
export function syncSkillsView(root: string, skills: readonly Skill[], signal?: AbortSignal): Promise<Map<string, SkillDiagnostic[]>> {
  const previous = inFlight.get(root) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => sync(root, skills, signal));
  inFlight.set(root, next);
  void next.finally(() => {
    if (inFlight.get(root) === next) inFlight.delete(root);
  }).catch(() => undefined);
  return next;
}

async function sync(root: string, skills: readonly Skill[], signal?: AbortSignal): Promise<Map<string, SkillDiagnostic[]>> {
  await mkdir(join(root, ".."), { recursive: true, mode: 0o700 });
  await ensureFolder(root);
  const files = new Map<string, Wanted>();
  const dirs = new Set<string>();
  const totals = { files: 0, bytes: 0 };
  const notes = new Map<string, SkillDiagnostic[]>();
  for (const skill of skills.filter((s) => s.enabled)) {
    const d = await collect(skill, files, dirs, totals, signal);
    if (d.length > 0) notes.set(skill.meta.name, d);
  }
  for (const rel of [...dirs].sort((a, b) => a.split("/").length - b.split("/").length)) await ensureFolder(join(root, rel));
  for (const [rel, w] of files) {
    signal?.throwIfAborted();
    const dest = join(root, rel);
    const have = await lstat(dest).catch(() => undefined);
    if (have?.isFile() && have.size === w.size && Math.trunc(have.mtimeMs) === Math.trunc(w.mtimeMs)) continue;
    try {
      await copyInto(dest, w);
    } catch (err) {
      const skill = skills.find((s) => rel.startsWith(`${s.scope}/${s.segment}/`));
      const name = skill?.meta.name ?? rel;
      let note: SkillDiagnostic;
      if (err instanceof HardLinkedSource) {
        // Linked since it was listed: no earlier copy of that name stays either.
        await rm(dest, { force: true });
        note = diag("hard_link", hardLinkNote(skill ? rel.slice(`${skill.scope}/${skill.segment}/`.length) : rel, err.links));
      } else {
        note = diag("copy_failed", `${rel} could not be put in /mnt/skills: ${err instanceof Error ? err.message : String(err)}`);
      }
      notes.set(name, [...(notes.get(name) ?? []), note]);
    }
  }
  await prune(root, "", files, dirs);
  return notes;
}
