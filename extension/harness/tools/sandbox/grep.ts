/**
 * `grep(description, pattern, path, glob?, literal=false, case_sensitive=false, max_results=100)` —
 * DeerFlow's grep_tool (`sandbox/tools.py:1998`; cap 500). `path` may be a file or a directory;
 * binary files, files over 1 MB and lines over 2000 chars are skipped; lines clipped to 200 chars.
 * Patterns are JavaScript regular expressions (DeerFlow: Python `re`); the common syntax agrees.
 * They run in a worker with a deadline (sandbox/regexWorker.ts): a catastrophic pattern ends with an
 * error result, never a frozen harness.
 */
import { tool, type ToolRuntime } from "langchain";
import { z } from "zod";
import { fileErrorKind } from "../../sandbox/files.js";
import { maskLocalPathsInOutput } from "../../sandbox/paths.js";
import {
  DEFAULT_GREP_MAX_RESULTS,
  MAX_GREP_MAX_RESULTS,
  clampMaxResults,
  formatGrepResults,
  sanitizeError,
  permissionDenied,
} from "./output.js";
import { runSandboxTool, type SandboxToolDeps } from "./runtime.js";
import { disabledSkillRefusal } from "./skillPaths.js";

/** The pattern ran past its deadline in the regex worker (sandbox/regexWorker.ts): what the model can change. */
const REGEX_TIMEOUT_HINT = (err: unknown) =>
  `Regex search stopped: ${err instanceof Error ? err.message : String(err)}. ` +
  "The pattern likely backtracks catastrophically (nested quantifiers such as (a+)+ or (.*)*x). " +
  "Simplify it, set literal=true for a plain string, or narrow path or glob.";

const schema = z.object({
  description: z
    .string()
    .describe("Explain why you are searching file contents in short words. ALWAYS PROVIDE THIS PARAMETER FIRST."),
  pattern: z.string().describe("The string or regex pattern to search for."),
  path: z.string().describe("The **absolute** file or root directory to search."),
  glob: z.string().nullish().describe("Optional glob filter for candidate files, for example `**/*.py`."),
  literal: z.boolean().default(false).describe("Whether to treat `pattern` as a plain string. Default is False."),
  case_sensitive: z.boolean().default(false).describe("Whether matching is case-sensitive. Default is False."),
  max_results: z
    .number()
    .int()
    .default(DEFAULT_GREP_MAX_RESULTS)
    .describe("Maximum number of matching lines to return. Default is 100."),
});

export function createGrepTool(deps: SandboxToolDeps) {
  return tool(
    (input, runtime: ToolRuntime) =>
      disabledSkillRefusal(input.path, deps.dirs) ??
      runSandboxTool("grep", deps, runtime, async ({ files, dirs, signal }) => {
        const requested = input.path;
        const max = clampMaxResults(input.max_results, DEFAULT_GREP_MAX_RESULTS, MAX_GREP_MAX_RESULTS);
        try {
          const { matches, truncated } = await files.grep(requested, input.pattern, {
            glob: input.glob ?? undefined,
            literal: input.literal ?? false,
            caseSensitive: input.case_sensitive ?? false,
            maxResults: max,
            signal,
          });
          // Matched lines are file content: mask host paths in them too.
          const masked = matches.map((m) => ({ ...m, line: maskLocalPathsInOutput(m.line, dirs) }));
          return formatGrepResults(requested, masked, truncated);
        } catch (err) {
          switch (fileErrorKind(err)) {
            case "not_found":
              return `Error: Directory not found: ${requested}`;
            case "not_directory":
              return `Error: Path is not a directory: ${requested}`;
            case "invalid_regex":
              return `Error: Invalid regex pattern: ${err instanceof Error ? err.message : String(err)}`;
            case "invalid_glob":
              return `Error: Invalid glob filter: ${err instanceof Error ? err.message : String(err)}`;
            case "regex_timeout":
              return `Error: ${REGEX_TIMEOUT_HINT(err)}`;
            case "permission":
              return permissionDenied("Error: Permission denied", requested, err);
            default:
              return `Error: Unexpected error searching file contents: ${sanitizeError(err, dirs)}`;
          }
        }
      }),
    {
      name: "grep",
      description: "Search for matching lines inside a text file or files under a root directory.",
      schema,
    },
  );
}
