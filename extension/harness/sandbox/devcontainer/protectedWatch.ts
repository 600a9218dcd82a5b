/**
 * What the read-only mounts could not stop, seen after each command: the protected entries of the
 * workspace that are NOT a read-only mount in the container (a nested `.git` created by `git init`
 * or `git clone`, a new `.envrc`, `lefthook.yml` or `*.code-workspace`, a protected name that is a
 * link, a mount the host replaced since — a branch switch that recreated `.vscode` — and everything
 * over the mount cap) are listed before and after every command; what the command created or
 * changed is reported (FolderContainer.exec → the bash tool → the SandboxAudit middleware, which
 * ends the run before the next model step).
 *
 * The listing runs on the host, never in the container (whose tools the command may have
 * replaced). It must be cheap enough for every command: every folder is lstat'ed, but a folder is
 * read again only when its inode, mtime or ctime changed since the last listing (a new entry
 * changes both; ctime cannot be set back from user space). A folder changed within the last
 * moments is never taken from the cache: timestamps have a coarse tick, and a change in the tick
 * of the listing itself would otherwise go unseen (git's "racy index" rule).
 *
 * What it does not see: a change that is undone before the command ends, and a process left
 * running in the container that writes after its command was checked and before the next one
 * starts (that one is reported by no command). The mounts, not this watch, are the boundary.
 */
import { lstat, readdir, readlink } from "node:fs/promises";
import type { BigIntStats } from "node:fs";
import { join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { PROTECTED_RULES, ruleOfSegment, type ProtectedChange, type ProtectedRuleId } from "../../trust/protectedPaths.js";

/** A folder's listing is cached only once its ctime is at least this old. */
const RACY_MS = 2_000;
/** Folders listed at once. */
const BATCH = 64;

interface Pending {
  readonly path: string;
  readonly rel: string;
  readonly rule: ProtectedRuleId | undefined;
}

interface Listed {
  readonly name: string;
  readonly isDir: boolean;
}

interface CachedFolder {
  readonly ino: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  readonly entries: readonly Listed[];
}

interface Seen {
  readonly rule: ProtectedRuleId;
  readonly signature: string;
}

export type ProtectedSnapshot = ReadonlyMap<string, Seen>;

export interface WatchedMount {
  /** Workspace-relative, `/` separators. */
  readonly rel: string;
  readonly dev: number;
  readonly ino: number;
}

export class ProtectedWatch {
  private readonly cache = new Map<string, CachedFolder>();

  private constructor(
    private readonly folder: string,
    private readonly mounted: ReadonlyMap<string, WatchedMount>,
  ) {}

  /** `mounted`: the read-only mounts the container really has; each is skipped while it is still the same folder. */
  static async create(folder: string, mounted: readonly { readonly rel: string }[]): Promise<ProtectedWatch> {
    const known = new Map<string, WatchedMount>();
    for (const m of mounted) {
      const info = await lstat(join(folder, ...m.rel.split("/"))).catch(() => undefined);
      if (info) known.set(m.rel, { rel: m.rel, dev: info.dev, ino: info.ino });
    }
    return new ProtectedWatch(folder, known);
  }

  async snapshot(signal?: AbortSignal): Promise<ProtectedSnapshot> {
    const seen = new Map<string, Seen>();
    const pending: Pending[] = [{ path: this.folder, rel: "", rule: undefined }];
    // Folders in batches: the cost is one lstat per folder, so they are issued together rather
    // than one round trip to the thread pool at a time.
    while (pending.length > 0) {
      signal?.throwIfAborted();
      const batch = pending.splice(0, BATCH);
      const found = await Promise.all(batch.map((p) => this.visit(p, seen)));
      for (const children of found) pending.push(...children);
      await yieldToEventLoop();
    }
    return seen;
  }

  /** One folder: its protected entries into `seen`; the subfolders to visit next. */
  private async visit({ path, rel, rule }: Pending, seen: Map<string, Seen>): Promise<Pending[]> {
    const info = await lstat(path, { bigint: true }).catch(() => undefined);
    if (!info?.isDirectory()) return [];
    const next: Pending[] = [];
    for (const entry of await this.list(path, info)) {
      const childPath = join(path, entry.name);
      const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
      const childRule = rule ?? ruleOfSegment(entry.name)?.id;
      if (childRule === undefined) {
        if (entry.isDir) next.push({ path: childPath, rel: childRel, rule: undefined });
        continue;
      }
      const child = await lstat(childPath, { bigint: true }).catch(() => undefined);
      if (!child) continue;
      const mount = this.mounted.get(childRel);
      // Still the folder the container has mounted read-only: nothing below can change from inside.
      if (mount && BigInt(mount.ino) === child.ino && BigInt(mount.dev) === child.dev) continue;
      seen.set(childRel, { rule: childRule, signature: await signatureOf(childPath, child) });
      if (child.isDirectory()) next.push({ path: childPath, rel: childRel, rule: childRule });
    }
    return next;
  }

  private async list(path: string, info: BigIntStats): Promise<readonly Listed[]> {
    const cached = this.cache.get(path);
    if (cached && cached.ino === info.ino && cached.mtimeNs === info.mtimeNs && cached.ctimeNs === info.ctimeNs) return cached.entries;
    const readAt = Date.now();
    let dirents;
    try {
      dirents = await readdir(path, { withFileTypes: true });
    } catch {
      return [];
    }
    const entries: Listed[] = [];
    for (const d of dirents) {
      let isDir = d.isDirectory();
      // No type from the file system (DT_UNKNOWN): ask, without following.
      if (!isDir && !d.isFile() && !d.isSymbolicLink() && !d.isFIFO() && !d.isSocket() && !d.isBlockDevice() && !d.isCharacterDevice()) {
        isDir = await lstat(join(path, d.name)).then((s) => s.isDirectory(), () => false);
      }
      entries.push({ name: d.name, isDir });
    }
    if (Number(info.ctimeNs / 1_000_000n) < readAt - RACY_MS) this.cache.set(path, { ino: info.ino, mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs, entries });
    else this.cache.delete(path);
    return entries;
  }
}

async function signatureOf(path: string, info: BigIntStats): Promise<string> {
  if (info.isDirectory()) return `d:${info.ino}`;
  if (info.isSymbolicLink()) return `l:${info.ino}:${await readlink(path).catch(() => "")}`;
  const kind = info.isFile() ? "f" : "o";
  return `${kind}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}:${info.mode}`;
}

/** What `after` has that `before` did not, or has differently; removals are not a danger. */
export function protectedChanges(before: ProtectedSnapshot, after: ProtectedSnapshot): ProtectedChange[] {
  const changes: ProtectedChange[] = [];
  for (const [rel, now] of after) {
    const was = before.get(rel);
    if (was === undefined) changes.push({ rel, rule: now.rule, change: "created" });
    else if (was.signature !== now.signature) changes.push({ rel, rule: now.rule, change: "changed" });
  }
  // A new folder's own contents are implied by the folder: name the topmost new entries first.
  return changes.sort((a, b) => a.rel.split("/").length - b.rel.split("/").length || (a.rel < b.rel ? -1 : 1));
}

const SHOWN = 8;

/** The changes as a person reads them: the topmost paths, each with what would run on the host. */
export function describeChanges(changes: readonly ProtectedChange[]): string {
  const top = changes.filter((c) => !changes.some((o) => o !== c && o.change === "created" && c.rel.startsWith(`${o.rel}/`)));
  const shown = top.slice(0, SHOWN).map((c) => `${c.rel} (${c.change}: ${PROTECTED_RULES[c.rule].reason})`);
  const more = top.length > SHOWN ? `, and ${top.length - SHOWN} more` : "";
  return `${shown.join("; ")}${more}`;
}

/** The end of the bash result the model reads. */
export function changesNotice(changes: readonly ProtectedChange[]): string {
  return (
    `\n\nError: This command created or changed files that make the user's machine run code, which the dev container's ` +
    `read-only mounts could not stop: ${describeChanges(changes)}. DeerFlow stops the run here; the user has to check these files first.`
  );
}

/** Why the run ended, for the user. */
export function stoppedMessage(changes: readonly ProtectedChange[]): string {
  return (
    `DeerFlow stopped the run: a command in the dev container created or changed files that make this machine run code: ` +
    `${describeChanges(changes)}. Nothing of them ran through DeerFlow. Check them, and delete what you did not expect, ` +
    "before you run git in this folder or open it in an editor; then continue the thread."
  );
}
