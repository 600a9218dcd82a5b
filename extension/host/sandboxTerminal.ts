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
  /**
   * The values of the variables named by `-e NAME` in shellArgs, for the docker client's own
   * environment (the terminal's `env`): a value on a command line is visible to every process
   * on the machine (ps), and remoteEnv can carry secrets the approved config read from the host.
   */
  env: Record<string, string>;
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
 *
 * The container sees what the agent's commands see (the harness's exec, containerExec.ts): its
 * own environment, the approved config's remoteEnv and PWD. `docker exec` forwards only the
 * variables named with `-e`, so nothing else of the editor's environment crosses over.
 */
export function dockerExecCommand(info: SandboxInfo, options: { interactive?: boolean; exists?: (path: string) => boolean } = {}): DockerExecCommand {
  if (info.kind !== "devcontainer" || !info.containerId || !info.remoteUser) {
    throw new Error("The harness did not name a dev container to attach to.");
  }
  const env: Record<string, string> = {};
  for (const entry of [`PWD=${WORKSPACE_DIR}`, ...(info.env ?? [])]) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return {
    shellPath: dockerClient(info.dockerPath, options.exists),
    shellArgs: [
      "exec",
      ...(options.interactive === false ? [] : ["-it"]),
      "-u", info.remoteUser,
      "-w", WORKSPACE_DIR,
      ...Object.keys(env).flatMap((name) => ["-e", name]),
      info.containerId,
      info.shell ?? "sh",
    ],
    env,
  };
}
