/**
 * When the dev container sandbox applies: the folder has a dev container configuration, and we
 * are not already inside a container (then the local provider IS the container, and Docker is
 * usually not reachable from inside anyway).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

/** The two locations the Dev Containers spec looks at first, in its order. */
export function devContainerConfigPath(workspaceFolder: string): string | undefined {
  for (const candidate of [join(".devcontainer", "devcontainer.json"), ".devcontainer.json"]) {
    const path = join(workspaceFolder, candidate);
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** VS Code Remote-Containers sets REMOTE_CONTAINERS; Docker puts /.dockerenv in every container. */
export function runningInsideContainer(env: NodeJS.ProcessEnv = process.env, dockerEnvFile = "/.dockerenv"): boolean {
  return Boolean(env["REMOTE_CONTAINERS"]) || existsSync(dockerEnvFile);
}
