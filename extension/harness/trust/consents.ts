/**
 * The user's yes to a piece of workspace configuration that would run code on this machine, by
 * fingerprint (VS Code's `trustedAtNonce`): a dev container configuration (devcontainer/approvals.ts)
 * and an MCP server from a workspace file (mcp/approvals.ts). One store, one rule for both:
 *
 * - it lives in the data directory (`<data-dir>/workspaces/<key>/<kind>/approvals.json`), never in
 *   the workspace: the agent and a container can write the workspace, so a consent there could be
 *   forged. A data directory inside the workspace is refused;
 * - a consent is for one fingerprint: a changed configuration has another one and asks again.
 *   Several are kept, newest first, so going back to what the user already approved needs no
 *   second yes;
 * - written by the CLI and by the harness, possibly at once: each write replaces the file by
 *   rename, so a reader sees the old list or the new one, never half of one. A damaged file
 *   approves nothing; the next consent rewrites it.
 * - what a consented command line names in the workspace is part of what is approved
 *   (`namedWorkspaceFiles`, `withNamedFiles`): an MCP server's `node server.js` runs that file,
 *   which the agent can edit (write=auto) like any other, so its bytes are in the fingerprint and
 *   an edit asks again, as an edit of the entry does (issue 31 item 3). The dev container's
 *   `initializeCommand` scripts are read by its own snapshot (devcontainer/configSnapshot.ts),
 *   which refuses a link instead of following it.
 */
import { lstatSync, mkdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { createHash } from "node:crypto";
import { HarnessError, errorMessage } from "../errors.js";
import { workspaceDbPath } from "../store/db.js";
import { isWithin } from "../sandbox/paths.js";
import { writeJsonAtomic } from "./atomicWrite.js";
import { readFileCheckedSync } from "./openChecked.js";

export type ConsentRecord<T extends object> = T & { readonly fingerprint: string; readonly approved_at: string };

interface ConsentsFile<T extends object> {
  workspace_folder: string;
  approvals: Array<ConsentRecord<T>>;
}

export class FingerprintConsents<T extends object> {
  /** `<data-dir>/workspaces/<key>/<kind>`: approvals.json and whatever the kind keeps beside it. */
  readonly dir: string;
  private readonly file: string;
  readonly workspaceFolder: string;

  constructor(
    dataDir: string,
    workspaceFolder: string,
    kind: string,
    private readonly keep: number,
  ) {
    const { dir, folder } = workspaceDbPath(dataDir, workspaceFolder);
    this.workspaceFolder = folder;
    this.dir = join(dir, kind);
    this.file = join(this.dir, "approvals.json");
    // The container and the agent can write the workspace: consents inside it could be forged.
    if (isInside(folder, resolve(this.dir))) {
      throw new HarnessError("storage", `The data directory ${dataDir} is inside the workspace ${folder}; choose one outside it.`);
    }
  }

  list(): Array<ConsentRecord<T>> {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return [];
    }
    try {
      const parsed = JSON.parse(text) as Partial<ConsentsFile<T>>;
      return Array.isArray(parsed.approvals) ? parsed.approvals.filter((a) => typeof a?.fingerprint === "string") : [];
    } catch {
      return [];
    }
  }

  has(fingerprint: string): boolean {
    return this.list().some((a) => a.fingerprint === fingerprint);
  }

  /** The latest consent (matching `where`), to tell "changed since approved" from "never approved". */
  latest(where?: (r: ConsentRecord<T>) => boolean): ConsentRecord<T> | undefined {
    return this.list().find((r) => where?.(r) ?? true);
  }

  /** Records the yes; returns the records kept (newest first). */
  record(fingerprint: string, fields: T): Array<ConsentRecord<T>> {
    const entry = { ...fields, fingerprint, approved_at: new Date().toISOString() } as ConsentRecord<T>;
    const approvals = [entry, ...this.list().filter((a) => a.fingerprint !== fingerprint)].slice(0, this.keep);
    this.ensureDir();
    writeJsonAtomic(this.file, { workspace_folder: this.workspaceFolder, approvals } satisfies ConsentsFile<T>, { mode: 0o600 });
    return approvals;
  }

  ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (isInside(this.workspaceFolder, realpathSync(this.dir))) {
      throw new HarnessError("storage", `The approvals folder ${this.dir} resolves into the workspace ${this.workspaceFolder}; choose another data directory.`);
    }
  }
}

/** A workspace file a consented command line names, as it is now. */
export interface NamedFile {
  /** Workspace-relative, `/` separators: what the person approving reads. */
  readonly rel: string;
  /** sha256 of its bytes; of its identity (size, inode, times) when it is over MAX_NAMED_FILE_BYTES. */
  readonly digest: string;
}

/** Hashed whole up to this size; a larger file (a bundle) by identity: a write changes its ctime, which cannot be set back. */
const MAX_NAMED_FILE_BYTES = 16 * 1024 * 1024;
const NAMED_FILES_VERSION = "deerflow-consent-named-files/1";

/**
 * The existing regular files inside the workspace that `words` (a command and its arguments)
 * name: each word, and the value of a `--flag=value` word, resolved against `cwd` (where the
 * command starts; an absolute word as it is). A file counts when its path or where its links
 * lead is inside the folder. Any other word is a plain argument. What a named file loads in turn
 * (a script's imports) is not seen here: the approval text names the files that are covered.
 */
export function namedWorkspaceFiles(words: readonly string[], o: { readonly workspaceFolder: string; readonly cwd: string }): NamedFile[] {
  const folder = resolve(o.workspaceFolder);
  const realFolder = realOr(folder);
  const found = new Map<string, NamedFile>();
  for (const word of words.flatMap((w) => [w, /^--?[^=]+=(.+)$/s.exec(w)?.[1]])) {
    if (!word) continue;
    const path = resolve(o.cwd, word);
    let real: string;
    try {
      if (!statSync(path).isFile()) continue;
      real = realpathSync(path);
    } catch {
      continue;
    }
    const rel = isWithin(path, folder) ? relative(folder, path) : isWithin(real, realFolder) ? relative(realFolder, real) : undefined;
    if (rel === undefined || found.has(real)) continue;
    found.set(real, { rel: rel.split(sep).join("/"), digest: digestOf(real) });
  }
  return [...found.values()].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** The consent's fingerprint: `base` (the configuration's) with the named files' digests; `base` itself when none is named. */
export function withNamedFiles(base: string, files: readonly NamedFile[]): string {
  // Unchanged without files, so a consent recorded before files counted still holds for `npx pkg`.
  if (files.length === 0) return base;
  const hash = createHash("sha256").update(`${NAMED_FILES_VERSION}\n${base}\n`);
  for (const f of files) hash.update(`${f.rel}\0${f.digest}\n`);
  return hash.digest("hex");
}

function digestOf(real: string): string {
  try {
    const info = lstatSync(real);
    if (info.size > MAX_NAMED_FILE_BYTES) return `identity:${info.size}:${info.dev}:${info.ino}:${info.mtimeMs}:${info.ctimeMs}`;
    // The checked open: never blocks on a FIFO swapped in, never follows a link swapped in.
    return createHash("sha256").update(readFileCheckedSync(real, MAX_NAMED_FILE_BYTES + 1)).digest("hex");
  } catch (err) {
    // Unreadable now: approved as such, and readable bytes later are a change that asks again.
    return `unreadable:${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`;
  }
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function isInside(folder: string, path: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}
