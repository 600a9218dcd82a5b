/**
 * The command line of "Open Sandbox Terminal" for a dev container: `docker exec` into the
 * container as the agent's commands run there (same user, same directory, same remoteEnv). No
 * `vscode` import, so the dev container tests run the very same arguments against a real engine.
 */
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { SandboxInfo } from "../protocol/rpc.js";

export const WORKSPACE_DIR = "/mnt/user-data/workspace";

export interface DockerExecCommand {
  shellPath: string;
  shellArgs: string[];
}

/**
 * The harness may name a bare "docker" (resolved on its own PATH); the terminal is started by the
 * editor, with another PATH, so the distro's client is preferred then.
 */
export function dockerClient(dockerPath: string | undefined, exists: (path: string) => boolean = existsSync): string {
  if (dockerPath && isAbsolute(dockerPath)) return dockerPath;
  return exists("/usr/bin/docker") ? "/usr/bin/docker" : "docker";
}

/**
 * `interactive: false` drops `-it`, for a test without a TTY. PWD is passed because the workspace
 * is a symlink to the mounted folder inside the container: without it the shell would print the
 * folder's real path, not the one the agent sees.
 */
export function dockerExecCommand(info: SandboxInfo, options: { interactive?: boolean; exists?: (path: string) => boolean } = {}): DockerExecCommand {
  if (info.kind !== "devcontainer" || !info.containerId || !info.remoteUser) {
    throw new Error("The harness did not name a dev container to attach to.");
  }
  const env = [`PWD=${WORKSPACE_DIR}`, ...(info.env ?? [])].flatMap((e) => ["-e", e]);
  return {
    shellPath: dockerClient(info.dockerPath, options.exists),
    shellArgs: ["exec", ...(options.interactive === false ? [] : ["-it"]), "-u", info.remoteUser, "-w", WORKSPACE_DIR, ...env, info.containerId, info.shell ?? "sh"],
  };
}
