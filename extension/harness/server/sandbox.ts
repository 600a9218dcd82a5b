/**
 * The editor's dev container workflows: `sandbox/info` (what "Open Sandbox Terminal" attaches
 * to) and `sandbox/rebuild` ("Rebuild Sandbox Container" after devcontainer.json changed).
 * Both use the folder's one provider (workspaces.ts), so the terminal sees the very container
 * the agent's commands run in, and a rebuild replaces it for the runs that follow.
 */
import type { RequestParams, RequestResult } from "../../protocol/rpc.js";
import { HarnessError } from "../errors.js";
import { DevContainerSandboxProvider } from "../sandbox/devcontainer/provider.js";
import type { Logger } from "./logger.js";
import type { Session } from "./session.js";
import { requireThread } from "./threads.js";
import type { OpenWorkspace, Workspaces } from "./workspaces.js";

export const NO_DEVCONTAINER_MESSAGE = "This folder has no dev container sandbox";

/** Long enough for a container that was stopped behind our back to be brought up again. */
const PROBE_TIMEOUT_MS = 30_000;

export async function sandboxInfo(workspaces: Workspaces, p: RequestParams<"sandbox/info">): Promise<RequestResult<"sandbox/info">> {
  const ws = workspaces.get(p.workspaceFolder);
  if (p.threadId !== undefined) requireThread(ws, p.threadId);
  const provider = devContainerOf(workspaces, ws);
  if (!provider) return { kind: "local" };
  if (p.threadId !== undefined) {
    // Through the thread's sandbox rather than a bare bring-up: a trivial command takes the
    // exec path, which brings up again a container stopped or removed behind our back (the fast
    // path never inspects it), and points /mnt/user-data/{uploads,outputs} at this thread.
    const id = await provider.acquire(p.threadId);
    try {
      const sandbox = await provider.get(id);
      const probe = await sandbox?.execCommand("true", { timeoutMs: PROBE_TIMEOUT_MS });
      if (probe && probe.exitCode !== 0) {
        throw new HarnessError("sandbox_runtime", `The dev container does not run commands: ${probe.stderr.trim() || `exit code ${probe.exitCode}`}`);
      }
    } finally {
      // No lease held for the terminal: the container's idle timeout applies as after a run.
      await provider.release(id);
    }
  } else {
    await provider.ensureUp();
  }
  const up = provider.containerInfo();
  if (!up) throw new HarnessError("sandbox_container_lost", "The dev container stopped right after it was brought up; try again.");
  return { kind: "devcontainer", state: "ready", containerId: up.containerId, remoteUser: up.remoteUser, shell: up.shell, env: [...up.env], dockerPath: provider.dockerPath };
}

export async function rebuildSandbox(
  workspaces: Workspaces,
  session: Session,
  log: Logger,
  p: RequestParams<"sandbox/rebuild">,
): Promise<RequestResult<"sandbox/rebuild">> {
  const ws = workspaces.get(p.workspaceFolder);
  if (!session.settings.workspace_trusted) {
    throw new HarnessError("usage", `${NO_DEVCONTAINER_MESSAGE}: the workspace is not trusted, so its devcontainer.json is not used.`);
  }
  const provider = devContainerOf(workspaces, ws);
  if (!provider) {
    throw new HarnessError("usage", `${NO_DEVCONTAINER_MESSAGE} (the sandbox is local: see the setting deerflow.sandboxProvider).`);
  }
  // Any process's runs (the database knows them all, the CLI's too): a rebuild kills the commands
  // in flight, which would fail the run midway.
  const active = ws.manager.runs.listActive();
  if (active.length > 0) {
    throw new HarnessError(
      "sandbox_busy",
      `A run is active on this folder (${active.length === 1 ? `run ${active[0]!.run_id}` : `${active.length} runs`}): ` +
        "rebuild the sandbox container when it has ended, or cancel it first.",
    );
  }
  log.info(`Rebuilding the dev container of ${ws.folder}.`);
  await provider.rebuild();
  log.info(`Rebuilt the dev container of ${ws.folder}: ${provider.containerInfo()?.containerId.slice(0, 12) ?? "(down again)"}.`);
  return null;
}

/** The folder's dev container provider, or undefined when its sandbox is local (or untrusted). */
function devContainerOf(workspaces: Workspaces, ws: OpenWorkspace): DevContainerSandboxProvider | undefined {
  const { provider, kind } = workspaces.sandbox(ws);
  return kind === "devcontainer" && provider instanceof DevContainerSandboxProvider ? provider : undefined;
}
