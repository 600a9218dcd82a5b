/**
 * The approved copy `devcontainer up` runs on: the bytes of an approved snapshot, written under
 * the data directory, so an edit of the workspace's files between the approval check and `up`
 * cannot slip in (the CLI reads the copy, not the workspace).
 *
 * How the CLI is pointed at it (@devcontainers/cli 0.89, `up`):
 * - `--config <copy>/…/devcontainer.json`: the CLI resolves the config's relative paths (local
 *   features, the Dockerfile) against the config file it reads. With `--override-config` it would
 *   read the copy's JSON but resolve those paths against the workspace's devcontainer.json,
 *   which is exactly the file we must not trust.
 * - `--id-label devcontainer.local_folder=<folder>` and `devcontainer.config_file=<the
 *   workspace's devcontainer.json>`: the labels the CLI would have computed itself, so the
 *   folder's existing container (ours, or the one VS Code's Dev Containers made) is found and
 *   reused instead of a second one being created for every approved copy.
 *
 * The copy mirrors the workspace-relative layout (local features keep their relative ids). In
 * the copied devcontainer.json, `build.dockerfile` names the copied Dockerfile and
 * `build.context` the workspace's real context folder (the context is the container's content,
 * not code that runs on the host); compose files are named by their absolute workspace paths,
 * because compose resolves their own relative paths against where they are: they are in the
 * fingerprint and re-read right before `up`, which is the narrowest window we can give them.
 *
 * The copy also carries DeerFlow's own protection (protectedMounts.ts): the read-only mounts of
 * the workspace's protected paths, appended to the config's `mounts`, and the
 * `deerflow.protection` label through `runArgs`. They are not part of what the user approves (the
 * fingerprint is of the user's files only, so an approval given before they existed still holds):
 * they depend on the tree at each bring-up, and they only take away what the container may write.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { ConfigApprovals } from "./approvals.js";
import type { ConfigSnapshot } from "./configSnapshot.js";
import { mountArgs, PROTECTION_LABEL, type ProtectionPlan } from "./protectedMounts.js";

export interface ApprovedCopy {
  /** The copied devcontainer.json, for `--config`. */
  readonly configPath: string;
  /** For `--id-label`: the labels the CLI derives from the workspace's own config. */
  readonly idLabels: readonly string[];
}

export function writeApprovedCopy(approvals: ConfigApprovals, snapshot: ConfigSnapshot, protection: ProtectionPlan): ApprovedCopy {
  approvals.ensureDir();
  const root = approvals.copyDir(snapshot.fingerprint);
  const folder = snapshot.workspaceFolder;
  const configDir = dirname(snapshot.configPath);
  const copyOf = (rel: string): string => join(root, ...rel.split("/"));
  const config: Record<string, unknown> = { ...snapshot.config };

  for (const file of snapshot.files) {
    if (file.role === "config" || file.role === "compose" || file.role === "compose-env" || file.role === "host-script") continue;
    const target = copyOf(file.rel);
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    writeFileSync(target, file.bytes, { mode: 0o600 });
  }
  const dockerfile = snapshot.files.find((f) => f.role === "dockerfile");
  if (dockerfile) {
    const build = { ...((config.build ?? {}) as Record<string, unknown>) };
    const context = typeof build.context === "string" ? build.context : typeof config.context === "string" ? config.context : ".";
    delete config.dockerFile;
    delete config.context;
    config.build = {
      ...build,
      dockerfile: copyOf(dockerfile.rel),
      // A context that uses a variable other than the folder's is left to the CLI to resolve.
      context: context.includes("${") && !context.includes("${localWorkspaceFolder") ? context : resolve(configDir, localFolder(context, folder)),
    };
  }
  const composeFiles = snapshot.files.filter((f) => f.role === "compose").map((f) => f.abs);
  if (composeFiles.length > 0) config.dockerComposeFile = composeFiles;
  config.mounts = [...(Array.isArray(config.mounts) ? (config.mounts as unknown[]) : []), ...mountArgs(protection)];
  config.runArgs = [...(Array.isArray(config.runArgs) ? (config.runArgs as unknown[]) : []), "--label", `${PROTECTION_LABEL}=${protection.hash}`];

  // Same relative place and name as in the workspace: the CLI accepts only (.)devcontainer.json.
  const configPath = copyOf(snapshot.files[0]!.rel);
  mkdirSync(dirname(configPath), { recursive: true, mode: 0o700 });
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return {
    configPath,
    idLabels: [`devcontainer.local_folder=${folder}`, `devcontainer.config_file=${snapshot.configPath}`],
  };
}

function localFolder(value: string, folder: string): string {
  return value.replaceAll("${localWorkspaceFolderBasename}", basename(folder)).replaceAll("${localWorkspaceFolder}", folder);
}
