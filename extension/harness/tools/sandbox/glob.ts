/**
 * `glob(description, pattern, path, include_dirs=false, max_results=200)` — DeerFlow's glob_tool
 * (`sandbox/tools.py:1918`; cap 1000). Results are virtual paths; common dirs are ignored.
 */
import { tool, type ToolRuntime } from "langchain";
import { z } from "zod";
import { fileErrorKind } from "../../sandbox/files.js";
import {
  DEFAULT_GLOB_MAX_RESULTS,
  MAX_GLOB_MAX_RESULTS,
  clampMaxResults,
  formatGlobResults,
  sanitizeError,
  permissionDenied,
} from "./output.js";
import { runSandboxTool, type SandboxToolDeps } from "./runtime.js";
import { disabledSkillRefusal } from "./skillPaths.js";

const schema = z.object({
  description: z
    .string()
    .describe("Explain why you are searching for these paths in short words. ALWAYS PROVIDE THIS PARAMETER FIRST."),
  pattern: z.string().describe("The glob pattern to match relative to the root path, for example `**/*.py`."),
  path: z.string().describe("The **absolute** root directory to search under."),
  include_dirs: z
    .boolean()
    .default(false)
    .describe("Whether matching directories should also be returned. Default is False."),
  max_results: z
    .number()
    .int()
    .default(DEFAULT_GLOB_MAX_RESULTS)
    .describe("Maximum number of paths to return. Default is 200."),
});

export function createGlobTool(deps: SandboxToolDeps) {
  return tool(
    (input, runtime: ToolRuntime) =>
      disabledSkillRefusal(input.path, deps.dirs) ??
      runSandboxTool("glob", deps, runtime, async ({ files, dirs, signal }) => {
        const requested = input.path;
        const max = clampMaxResults(input.max_results, DEFAULT_GLOB_MAX_RESULTS, MAX_GLOB_MAX_RESULTS);
        try {
          const { matches, truncated } = await files.glob(requested, input.pattern, input.include_dirs ?? false, max, signal);
          return formatGlobResults(requested, matches, truncated);
        } catch (err) {
          switch (fileErrorKind(err)) {
            case "not_found":
              return `Error: Directory not found: ${requested}`;
            case "not_directory":
              return `Error: Path is not a directory: ${requested}`;
            case "invalid_glob":
              return `Error: Invalid glob pattern: ${err instanceof Error ? err.message : String(err)}`;
            case "permission":
              return permissionDenied("Error: Permission denied", requested, err);
            default:
              return `Error: Unexpected error searching paths: ${sanitizeError(err, dirs)}`;
          }
        }
      }),
    {
      name: "glob",
      description: "Find files or directories that match a glob pattern under a root directory.",
      schema,
    },
  );
}
