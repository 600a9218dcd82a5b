/**
 * The user's approvals of dev container configurations, per workspace folder, kept in the data
 * directory (`<data-dir>/workspaces/<key>/devcontainer/approvals.json`), never in the workspace:
 * the agent and the container can write the workspace, so an approval there could be forged.
 * The approved copies `up` runs on live beside it (approvedCopy.ts).
 *
 * An approval is a fingerprint (configSnapshot.ts). Several are kept, newest first, so going
 * back to a configuration the user already approved needs no second yes; anything else does.
 *
 * Written by the CLI (`deerflow devcontainer approve`) and by the harness (`sandbox/approve`,
 * the panel's Allow), possibly at once: each write replaces the file by rename, so a reader sees
 * the old list or the new one, never half of one.
 */
import { mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { randomUUID } from "node:crypto";
import { HarnessError } from "../../errors.js";
import { workspaceDbPath } from "../../store/db.js";
import { readConfigSnapshot, type ConfigSnapshot } from "./configSnapshot.js";

export interface ApprovalRecord {
  readonly fingerprint: string;
  /** Workspace-relative path of the devcontainer.json approved. */
  readonly config: string;
  readonly approved_at: string;
}

interface ApprovalsFile {
  workspace_folder: string;
  approvals: ApprovalRecord[];
}

const KEEP = 20;

export class ConfigApprovals {
  /** `<data-dir>/workspaces/<key>/devcontainer`: approvals.json and the approved copies. */
  readonly dir: string;
  private readonly file: string;
  readonly workspaceFolder: string;

  constructor(dataDir: string, workspaceFolder: string) {
    const { dir, folder } = workspaceDbPath(dataDir, workspaceFolder);
    this.workspaceFolder = folder;
    this.dir = join(dir, "devcontainer");
    this.file = join(this.dir, "approvals.json");
    // The container can write the workspace: approvals inside it could be forged.
    if (isInside(folder, resolve(this.dir))) {
      throw new HarnessError("storage", `The data directory ${dataDir} is inside the workspace ${folder}; choose one outside it.`);
    }
  }

  list(): ApprovalRecord[] {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return [];
    }
    try {
      const parsed = JSON.parse(text) as Partial<ApprovalsFile>;
      return Array.isArray(parsed.approvals) ? parsed.approvals.filter((a) => typeof a?.fingerprint === "string") : [];
    } catch {
      // A damaged file approves nothing; the next approval rewrites it.
      return [];
    }
  }

  has(fingerprint: string): boolean {
    return this.list().some((a) => a.fingerprint === fingerprint);
  }

  /** The latest approval, to tell "changed since approved" from "never approved". */
  latest(): ApprovalRecord | undefined {
    return this.list()[0];
  }

  record(snapshot: ConfigSnapshot): ApprovalRecord {
    const config = snapshot.files[0]?.rel ?? "";
    const entry: ApprovalRecord = { fingerprint: snapshot.fingerprint, config, approved_at: new Date().toISOString() };
    const approvals = [entry, ...this.list().filter((a) => a.fingerprint !== snapshot.fingerprint)].slice(0, KEEP);
    this.ensureDir();
    const temp = `${this.file}.${randomUUID()}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ workspace_folder: this.workspaceFolder, approvals } satisfies ApprovalsFile, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
    this.pruneCopies(new Set(approvals.map((a) => a.fingerprint)));
    return entry;
  }

  /** Copies of fingerprints no longer approved are never used again. */
  private pruneCopies(kept: ReadonlySet<string>): void {
    let names: string[];
    try {
      names = readdirSync(join(this.dir, "configs"));
    } catch {
      return;
    }
    for (const name of names) if (!kept.has(name)) rmSync(join(this.dir, "configs", name), { recursive: true, force: true });
  }

  /** Where the approved copy of a fingerprint is written. */
  copyDir(fingerprint: string): string {
    return join(this.dir, "configs", fingerprint);
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

/** For messages: a folder as a shell word the user can paste. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The refusal: what would have run, why it did not, and how to say yes. `previous` is the latest
 * approval, if any: then the configuration changed since the user last approved it.
 */
export function unapprovedError(snapshot: ConfigSnapshot, previous: ApprovalRecord | undefined): HarnessError {
  const files = snapshot.files.map((f) => f.rel).join(", ");
  const host = snapshot.hostCommands.length > 0 ? ` and run on this machine: ${snapshot.hostCommands.map((c) => `\`${c}\``).join("; ")}` : "";
  const why = previous ? "changed since it was approved" : "not approved yet";
  return new HarnessError(
    "sandbox_config_unapproved",
    `The dev container configuration of ${snapshot.workspaceFolder} is ${why}, so nothing was started: ` +
      `\`devcontainer up\` would use ${files} (fingerprint ${snapshot.fingerprint.slice(0, 16)})${host}. ` +
      `Review it, then approve it with \`deerflow devcontainer approve --workspace ${shellWord(snapshot.workspaceFolder)}\` ` +
      "or with Allow in VS Code's DeerFlow notification, and run again.",
  );
}

/** The folder's configuration as it is now, if the user approved exactly this; else the refusal. */
export function requireApproved(approvals: ConfigApprovals): ConfigSnapshot {
  const snapshot = readConfigSnapshot(approvals.workspaceFolder);
  if (!approvals.has(snapshot.fingerprint)) throw unapprovedError(snapshot, approvals.latest());
  return snapshot;
}

/**
 * Records the user's yes for the configuration as it is now. With `expected`, only if that is
 * still the fingerprint: a panel or script approves what it showed, never an edit made since.
 */
export function approveCurrent(approvals: ConfigApprovals, expected?: string): ConfigSnapshot {
  const snapshot = readConfigSnapshot(approvals.workspaceFolder);
  if (expected !== undefined && expected !== snapshot.fingerprint) {
    throw new HarnessError(
      "sandbox_config_unapproved",
      `The dev container configuration of ${snapshot.workspaceFolder} changed after it was shown (fingerprint ` +
        `${snapshot.fingerprint.slice(0, 16)}, not ${expected.slice(0, 16)}): nothing was approved. Review it again.`,
    );
  }
  approvals.record(snapshot);
  return snapshot;
}
