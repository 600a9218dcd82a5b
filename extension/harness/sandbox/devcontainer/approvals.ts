/**
 * The user's approvals of dev container configurations, per workspace folder, kept in the data
 * directory (`<data-dir>/workspaces/<key>/devcontainer/approvals.json`), never in the workspace:
 * the agent and the container can write the workspace, so an approval there could be forged.
 * The approved copies `up` runs on live beside it (approvedCopy.ts).
 *
 * An approval is a fingerprint (configSnapshot.ts), kept in the trust boundary's consent store
 * (trust/consents.ts: newest first, written by rename), which MCP servers from workspace
 * files use too. Written by the CLI (`deerflow devcontainer approve`) and by the harness
 * (`sandbox/approve`, the panel's Allow).
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { HarnessError } from "../../errors.js";
import { FingerprintConsents, type ConsentRecord } from "../../trust/consents.js";
import { readConfigSnapshot, type ConfigSnapshot } from "./configSnapshot.js";

/** One approval: the fingerprint, and the workspace-relative path of the devcontainer.json approved. */
export type ApprovalRecord = ConsentRecord<{ readonly config: string }>;

const KEEP = 20;

/** The consent store (trust/consents.ts) of the folder's dev container configurations, and their approved copies. */
export class ConfigApprovals {
  /** `<data-dir>/workspaces/<key>/devcontainer`: approvals.json and the approved copies. */
  readonly dir: string;
  readonly workspaceFolder: string;
  private readonly consents: FingerprintConsents<{ readonly config: string }>;

  constructor(dataDir: string, workspaceFolder: string) {
    this.consents = new FingerprintConsents(dataDir, workspaceFolder, "devcontainer", KEEP);
    this.dir = this.consents.dir;
    this.workspaceFolder = this.consents.workspaceFolder;
  }

  list(): ApprovalRecord[] {
    return this.consents.list();
  }

  has(fingerprint: string): boolean {
    return this.consents.has(fingerprint);
  }

  /** The latest approval, to tell "changed since approved" from "never approved". */
  latest(): ApprovalRecord | undefined {
    return this.consents.latest();
  }

  record(snapshot: ConfigSnapshot): ApprovalRecord {
    const kept = this.consents.record(snapshot.fingerprint, { config: snapshot.files[0]?.rel ?? "" });
    this.pruneCopies(new Set(kept.map((a) => a.fingerprint)));
    return kept[0]!;
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
    this.consents.ensureDir();
  }
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
