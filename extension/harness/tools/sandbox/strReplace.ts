/**
 * `str_replace(description, path, old_str, new_str, replace_all=false)` — DeerFlow's
 * str_replace_tool (`sandbox/tools.py:2325`). Under the per-path lock: read → empty old_str is a
 * no-op "OK" → not found → replace the FIRST occurrence (or all) → write. Uniqueness is not
 * enforced, for parity with DeerFlow (its docstring asks for it, its code does not check).
 */
import { tool, type ToolRuntime } from "langchain";
import { z } from "zod";
import { fileErrorKind } from "../../sandbox/files.js";
import { sanitizeError, writeDeniedText } from "./output.js";
import { runSandboxTool, type SandboxToolDeps } from "./runtime.js";

const DESCRIPTION = `Replace a substring in a file with another substring.
If \`replace_all\` is False (default), the substring to replace must appear **exactly once** in the file.

READ-BEFORE-WRITE (issue #3857): you must have read the file's CURRENT
version with read_file first; any write invalidates earlier reads.`;

const schema = z.object({
  description: z
    .string()
    .describe("Explain why you are replacing the substring in short words. ALWAYS PROVIDE THIS PARAMETER FIRST."),
  path: z
    .string()
    .describe("The **absolute** path to the file to replace the substring in. ALWAYS PROVIDE THIS PARAMETER SECOND."),
  old_str: z.string().describe("The substring to replace. ALWAYS PROVIDE THIS PARAMETER THIRD."),
  new_str: z.string().describe("The new substring. ALWAYS PROVIDE THIS PARAMETER FOURTH."),
  replace_all: z
    .boolean()
    .default(false)
    .describe(
      "Whether to replace all occurrences of the substring. If False, only the first occurrence will be replaced. Default is False.",
    ),
});

export function createStrReplaceTool(deps: SandboxToolDeps) {
  return tool(
    (input, runtime: ToolRuntime) =>
      runSandboxTool("str_replace", deps, runtime, async ({ files, dirs, writeOptions }) => {
        const requested = input.path;
        try {
          const replaced = await files.replaceInFile(requested, input.old_str, input.new_str, input.replace_all ?? false, writeOptions);
          return replaced ? "OK" : `Error: String to replace not found in file: ${requested}`;
        } catch (err) {
          switch (fileErrorKind(err)) {
            case "not_found":
            case "not_directory":
              return `Error: File not found: ${requested}`;
            case "permission":
              return writeDeniedText("str_replace", requested, err);
            default:
              return `Error: Unexpected error replacing string: ${sanitizeError(err, dirs)}`;
          }
        }
      }),
    { name: "str_replace", description: DESCRIPTION, schema },
  );
}
