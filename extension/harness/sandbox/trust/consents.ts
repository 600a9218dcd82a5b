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
 */
import { mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { randomUUID } from "node:crypto";
import { HarnessError } from "../../errors.js";
import { workspaceDbPath } from "../../store/db.js";

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
    const temp = `${this.file}.${randomUUID()}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ workspace_folder: this.workspaceFolder, approvals } satisfies ConsentsFile<T>, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
    return approvals;
  }

  ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (isInside(this.workspaceFolder, realpathSync(this.dir))) {
      throw new HarnessError("storage", `The approvals folder ${this.dir} resolves into the workspace ${this.workspaceFolder}; choose another data directory.`);
    }
  }
}

function isInside(folder: string, path: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}
