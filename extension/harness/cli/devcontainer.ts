/**
 * `deerflow devcontainer approve|status`: the user's yes to a folder's dev container
 * configuration, from a terminal. `approve` prints exactly what it approves (the files `up` reads,
 * the fingerprint, the commands that run on this machine, the host variables it reads, the
 * settings worth a look) and records the approval in the data directory; `status` prints the same
 * and says whether it is approved (exit 0) or not (exit 1).
 *
 * Like every subcommand, stdout carries one JSON object (the CLI's output is a contract for
 * scripts); the same facts, written for a person to review, go to stderr.
 *
 * `--fingerprint SHA` approves only if the configuration still has that fingerprint (the one a
 * refusal or `status` printed): a script approves what was reviewed, never a later edit.
 */
import { parse, workspaceArg, writeJsonLine, UsageError } from "./args.js";
import { defaultDataDir } from "../store/db.js";
import { approveCurrent, ConfigApprovals } from "../sandbox/devcontainer/approvals.js";
import { readConfigSnapshot, type ConfigSnapshot } from "../sandbox/devcontainer/configSnapshot.js";

const options = {
  workspace: { type: "string" },
  "data-dir": { type: "string" },
  fingerprint: { type: "string" },
} as const;

export function devcontainerCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  if (sub !== "approve" && sub !== "status") {
    throw new UsageError(`deerflow devcontainer: ${sub ? `unknown subcommand "${sub}"` : "approve or status?"}`);
  }
  const command = `devcontainer ${sub}`;
  const v = parse(rest, options, command);
  const workspace = workspaceArg(v.workspace, command);
  const approvals = new ConfigApprovals(v["data-dir"] ?? defaultDataDir(), workspace);
  if (sub === "status") {
    const snapshot = readConfigSnapshot(workspace);
    const approved = approvals.has(snapshot.fingerprint);
    report(snapshot, approved);
    return approved ? 0 : 1;
  }
  if (v.fingerprint !== undefined && !/^[0-9a-f]{16,64}$/.test(v.fingerprint)) {
    throw new UsageError(`deerflow ${command}: --fingerprint takes the hex fingerprint printed by a refusal or by status`);
  }
  const expected = v.fingerprint === undefined ? undefined : fullFingerprint(readConfigSnapshot(workspace), v.fingerprint);
  const snapshot = approveCurrent(approvals, expected);
  report(snapshot, true);
  return 0;
}

function report(snapshot: ConfigSnapshot, approved: boolean): void {
  process.stderr.write(`${describe(snapshot, approved ? "Approved" : "NOT approved")}\n`);
  writeJsonLine({
    workspace_folder: snapshot.workspaceFolder,
    approved,
    fingerprint: snapshot.fingerprint,
    files: snapshot.files.map((f) => ({ path: f.rel, role: f.role })),
    host_commands: snapshot.hostCommands,
    local_env: snapshot.localEnv,
    notes: snapshot.notes,
  });
}

/** A prefix (refusals print 16 digits) names the current fingerprint only if it matches it. */
function fullFingerprint(current: ConfigSnapshot, given: string): string {
  return current.fingerprint.startsWith(given) ? current.fingerprint : given;
}

/** The text the user reviews; the same facts the panel's notification shows. */
export function describe(s: ConfigSnapshot, verdict: string): string {
  const lines = [
    `${verdict}: the dev container configuration of ${s.workspaceFolder}`,
    `  fingerprint: ${s.fingerprint}`,
    "  files `devcontainer up` reads (it runs on an approved copy kept in the data directory):",
    ...s.files.map((f) => `    ${f.rel}${f.role === "config" ? "" : `  (${f.role})`}`),
    s.hostCommands.length > 0
      ? "  runs on THIS MACHINE (the host), with your environment, at every bring-up:"
      : "  runs on this machine (the host): nothing (no initializeCommand)",
    ...s.hostCommands.map((c) => `    initializeCommand: ${c}`),
  ];
  if (s.localEnv.length > 0) lines.push(`  reads host environment variables: ${s.localEnv.join(", ")}`);
  if (s.notes.length > 0) lines.push("  also review:", ...s.notes.map((n) => `    ${n}`));
  lines.push("An edit to any of these files needs a new approval before the container is brought up again.");
  return lines.join("\n");
}
