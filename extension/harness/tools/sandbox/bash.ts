/**
 * `bash(description, command)` — DeerFlow's bash_tool (`sandbox/tools.py:1766`).
 *
 * Host (local) sandbox: refused unless the user allowed host commands; otherwise the command's
 * absolute paths are validated, virtual paths rewritten to host paths, and it runs in the
 * workspace. Container sandbox: the command runs as written (the virtual paths exist there).
 * Output: host paths masked, then middle-truncated to 20000 chars.
 *
 * A command in the dev container that created or changed a protected path its read-only mounts
 * could not cover (devcontainer/protectedWatch.ts) gets an error notice after its output, and the
 * result is flagged (`PROTECTED_CHANGES_KEY`): SandboxAudit ends the run before the next step.
 */
import { tool, type ToolRuntime } from "langchain";
import { z } from "zod";
import { HarnessError } from "../../errors.js";
import { validateLocalBashCommandPaths } from "../../sandbox/commandValidation.js";
import { maskLocalPathsInOutput, replaceVirtualPathsInCommand } from "../../sandbox/paths.js";
import { DEFAULT_COMMAND_TIMEOUT_MS } from "../../sandbox/exec.js";
import { EXIT_KEY, type CommandExit } from "../../../protocol/toolOutcome.js";
import { formatExecResult, sanitizeError, truncateBashOutput } from "./output.js";
import { runSandboxTool, type FlaggedText, type SandboxToolDeps } from "./runtime.js";
import { changesNotice } from "../../sandbox/devcontainer/protectedWatch.js";

/** additional_kwargs of a bash result: the protected paths its command created or changed. */
export const PROTECTED_CHANGES_KEY = "deerflow_protected_changes";

/** DeerFlow's LOCAL_HOST_BASH_DISABLED_MESSAGE, pointing at our switches instead of config.yaml. */
export const HOST_BASH_DISABLED_MESSAGE =
  "Host bash execution is disabled for LocalSandboxProvider because it is not a secure sandbox boundary. " +
  "Open the folder in a dev container for isolated bash access, or enable it with --allow-host-commands (CLI) " +
  "or the deerflow.allowHostCommands setting only in a fully trusted local environment.";

const DESCRIPTION = `Execute a bash command in a Linux environment.


- Use \`python\` to run Python code.
- Prefer a thread-local virtual environment in \`/mnt/user-data/workspace/.venv\`.
- Use \`python -m pip\` (inside the virtual environment) to install Python packages.
- To start a long-lived process such as a web server, ALWAYS run it in the background with its
  output redirected, e.g. \`your-command > /mnt/user-data/workspace/server.log 2>&1 &\`, then check
  the log file or poll the port. A long-lived process run in the foreground blocks the turn until
  it is killed at the command timeout.`;

const schema = z.object({
  description: z
    .string()
    .describe("Explain why you are running this command in short words. ALWAYS PROVIDE THIS PARAMETER FIRST."),
  command: z
    .string()
    .describe("The bash command to execute. Always use absolute paths for files and directories."),
});

export function createBashTool(deps: SandboxToolDeps) {
  return tool(
    (input, runtime: ToolRuntime) =>
      runSandboxTool("bash", deps, runtime, async ({ sandbox, dirs, signal }) => {
        if (deps.provider.commandsDisabledReason) return `Error: ${deps.provider.commandsDisabledReason}`;
        let command = input.command;
        if (sandbox.pathMode === "host") {
          if (!deps.allowHostCommands) return `Error: ${HOST_BASH_DISABLED_MESSAGE}`;
          try {
            validateLocalBashCommandPaths(command);
          } catch (err) {
            if (err instanceof HarnessError) return `Error: ${err.message}`;
            throw err;
          }
          command = replaceVirtualPathsInCommand(command, dirs);
        }
        try {
          const result = await sandbox.execCommand(command, {
            timeoutMs: deps.bashTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
            ...(signal ? { signal } : {}),
          });
          const text = truncateBashOutput(maskLocalPathsInOutput(formatExecResult(result), dirs));
          const changes = result.protectedChanges;
          // A non-zero exit is still a result the model reads (as in DeerFlow); the panel shows it failed.
          const exit: Record<string, unknown> = result.timedOut || (result.exitCode !== 0 && result.exitCode !== null)
            ? { [EXIT_KEY]: { code: result.timedOut ? null : result.exitCode, timed_out: result.timedOut } satisfies CommandExit }
            : {};
          if (!changes || changes.length === 0) return Object.keys(exit).length === 0 ? text : ({ text, kwargs: exit } satisfies FlaggedText);
          return { text: text + changesNotice(changes), kwargs: { ...exit, [PROTECTED_CHANGES_KEY]: changes } } satisfies FlaggedText;
        } catch (err) {
          // A sandbox that failed in a known way (no engine, container lost) says so in its own
          // words; anything else is unexpected.
          if (err instanceof HarnessError) return `Error: ${maskLocalPathsInOutput(err.message, dirs)}`;
          return `Error: Unexpected error executing command: ${sanitizeError(err, dirs)}`;
        }
      }),
    { name: "bash", description: DESCRIPTION, schema },
  );
}
