/**
 * Which sandbox a workspace folder gets (the CLI's `--sandbox auto|local|devcontainer`, later a
 * setting):
 * - `auto`: the folder's dev container when it has `.devcontainer/devcontainer.json` or
 *   `.devcontainer.json`, local otherwise; local as well when this process already runs inside
 *   a container (VS Code attached to a dev container: the local provider is that container);
 * - `local`, `devcontainer`: as asked; `devcontainer` without a configuration is a usage error,
 *   not a silent fallback to the host.
 */
import { HarnessError } from "../errors.js";
import { devContainerConfigPath, runningInsideContainer } from "./devcontainer/detect.js";
import { DevContainerSandboxProvider, type DevContainerProviderOptions } from "./devcontainer/provider.js";
import { LocalSandboxProvider } from "./local.js";
import type { SandboxProvider } from "./provider.js";

export const SANDBOX_CHOICES = ["auto", "local", "devcontainer"] as const;
export type SandboxChoice = (typeof SANDBOX_CHOICES)[number];
export type SandboxKind = "local" | "devcontainer";

/** What `auto` looks at: the folder, and (for tests) the environment and the container marker file. */
export interface SandboxDetectionOptions {
  readonly workspaceFolder: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly dockerEnvFile?: string;
}

export interface SandboxSelectionOptions extends DevContainerProviderOptions, SandboxDetectionOptions {}

export function parseSandboxChoice(value: string): SandboxChoice {
  if ((SANDBOX_CHOICES as readonly string[]).includes(value)) return value as SandboxChoice;
  throw new HarnessError("usage", `Unknown sandbox ${JSON.stringify(value)}: use one of ${SANDBOX_CHOICES.join(", ")}.`);
}

export function resolveSandboxKind(choice: SandboxChoice, options: SandboxDetectionOptions): SandboxKind {
  if (choice === "local") return "local";
  const hasConfig = devContainerConfigPath(options.workspaceFolder) !== undefined;
  if (choice === "devcontainer") {
    if (!hasConfig) {
      throw new HarnessError(
        "usage",
        `--sandbox devcontainer: ${options.workspaceFolder} has no .devcontainer/devcontainer.json or .devcontainer.json.`,
      );
    }
    return "devcontainer";
  }
  return hasConfig && !runningInsideContainer(options.env, options.dockerEnvFile) ? "devcontainer" : "local";
}

/** No I/O beyond the config lookup: a dev container is brought up on the first acquire. */
export function createSandboxProvider(
  choice: SandboxChoice,
  options: SandboxSelectionOptions,
): { provider: SandboxProvider; kind: SandboxKind } {
  const kind = resolveSandboxKind(choice, options);
  if (kind === "local") return { provider: new LocalSandboxProvider({ workspaceFolder: options.workspaceFolder }), kind };
  const { env: _env, dockerEnvFile: _file, ...devOptions } = options;
  return { provider: new DevContainerSandboxProvider(devOptions), kind };
}
