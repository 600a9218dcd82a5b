/**
 * `ls(description, path)` — DeerFlow's ls_tool (`sandbox/tools.py:1850`): a two-level listing,
 * directories suffixed `/`, default ignores applied (and `.deerflow`, see search.ts), virtual paths.
 */
import { tool, type ToolRuntime } from "langchain";
import { z } from "zod";
import { fileErrorKind } from "../../sandbox/files.js";
import { maskLocalPathsInOutput } from "../../sandbox/paths.js";
import { sanitizeError, truncateLsOutput, permissionDenied } from "./output.js";
import { runSandboxTool, type SandboxToolDeps } from "./runtime.js";
import { disabledSkillRefusal } from "./skillPaths.js";

const schema = z.object({
  description: z
    .string()
    .describe("Explain why you are listing this directory in short words. ALWAYS PROVIDE THIS PARAMETER FIRST."),
  path: z.string().describe("The **absolute** path to the directory to list."),
});

export function createLsTool(deps: SandboxToolDeps) {
  return tool(
    (input, runtime: ToolRuntime) =>
      disabledSkillRefusal(input.path, deps.dirs) ??
      runSandboxTool("ls", deps, runtime, async ({ files, dirs, signal }) => {
        const requested = input.path;
        try {
          const children = await files.listDir(requested, 2, signal);
          if (children.length === 0) return "(empty)";
          return truncateLsOutput(maskLocalPathsInOutput(children.join("\n"), dirs));
        } catch (err) {
          switch (fileErrorKind(err)) {
            case "not_found":
              return `Error: Directory not found: ${requested}`;
            case "permission":
              return permissionDenied("Error: Permission denied", requested, err);
            case "not_directory":
              // DeerFlow's list_dir returns nothing for a file.
              return "(empty)";
            default:
              return `Error: Unexpected error listing directory: ${sanitizeError(err, dirs)}`;
          }
        }
      }),
    { name: "ls", description: "List the contents of a directory up to 2 levels deep in tree format.", schema },
  );
}
