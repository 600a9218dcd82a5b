/**
 * `read_file(description, path, start_line?, end_line?)` — DeerFlow's read_file_tool
 * (`sandbox/tools.py:2131`): raw text (no line numbers), 1-indexed inclusive ranges, head
 * truncation at 50000 chars. Unlike DeerFlow, host paths inside the text are masked too: nothing
 * returned to the model may name a host path.
 */
import { tool, type ToolRuntime } from "langchain";
import { z } from "zod";
import { fileErrorKind } from "../../sandbox/files.js";
import { maskLocalPathsInOutput } from "../../sandbox/paths.js";
import { sanitizeError, truncateReadFileOutput, permissionDenied } from "./output.js";
import { runSandboxTool, type SandboxToolDeps } from "./runtime.js";
import { disabledSkillRefusal } from "./skillPaths.js";

const schema = z.object({
  description: z
    .string()
    .describe("Explain why you are reading this file in short words. ALWAYS PROVIDE THIS PARAMETER FIRST."),
  path: z.string().describe("The **absolute** path to the file to read."),
  start_line: z
    .number()
    .int()
    .nullish()
    .describe("Optional starting line number (1-indexed, inclusive). Omit to start at the first line."),
  end_line: z
    .number()
    .int()
    .nullish()
    .describe("Optional ending line number (1-indexed, inclusive). Omit to read through the last line."),
});

export const BINARY_FILE_MESSAGE = (path: string): string =>
  `Error: cannot read '${path}' as text — it appears to be a binary file ` +
  "(e.g. .xlsx, .pdf, or an image). read_file only supports UTF-8 text. Use bash with a " +
  "suitable library instead (pandas/openpyxl for spreadsheets), or view_image for images.";

/** DeerFlow answers bad ranges before touching the sandbox. */
export function checkLineRange(startLine: number | undefined, endLine: number | undefined): string | undefined {
  if (startLine !== undefined && startLine < 1) return "(start_line must be >= 1)";
  if (endLine !== undefined && endLine < 1) return "(end_line must be >= 1)";
  if (endLine !== undefined && (startLine ?? 1) > endLine) return "(start_line > end_line — no lines in range)";
  return undefined;
}

export function createReadFileTool(deps: SandboxToolDeps) {
  return tool(
    async (input, runtime: ToolRuntime) => {
      const startLine = input.start_line ?? undefined;
      const endLine = input.end_line ?? undefined;
      const disabled = disabledSkillRefusal(input.path, deps.dirs);
      if (disabled) return disabled;
      const rangeError = checkLineRange(startLine, endLine);
      if (rangeError !== undefined) return rangeError;
      return runSandboxTool("read_file", deps, runtime, async ({ files, dirs }) => {
        const requested = input.path;
        try {
          const content = await files.readFile(requested, startLine, endLine);
          if (!content) return startLine !== undefined && startLine > 1 ? "(start_line exceeds file length)" : "(empty)";
          return truncateReadFileOutput(maskLocalPathsInOutput(content, dirs));
        } catch (err) {
          switch (fileErrorKind(err)) {
            case "not_found":
            case "not_directory":
              return `Error: File not found: ${requested}`;
            case "permission":
              return permissionDenied("Error: Permission denied reading file", requested, err);
            case "is_directory":
              return `Error: Path is a directory, not a file: ${requested}`;
            case "not_text":
              return BINARY_FILE_MESSAGE(requested);
            default:
              return `Error: Unexpected error reading file: ${sanitizeError(err, dirs)}`;
          }
        }
      });
    },
    {
      name: "read_file",
      description:
        "Read the contents of a text file. Use this to examine source code, configuration files, logs, or any text-based file.",
      schema,
    },
  );
}
