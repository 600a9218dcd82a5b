/**
 * `write_file(description, path, content, append=false)` — DeerFlow's write_file_tool
 * (`sandbox/tools.py:2226`): an 80 KiB guard on non-append writes (DEERFLOW_WRITE_FILE_MAX_BYTES),
 * parent directories created, a per-path lock, "OK". The content is written as given: DeerFlow's
 * local provider rewrites `/mnt/...` paths inside the content to host paths (and back on read),
 * which would leave host paths in the user's files and break them inside a dev container; we do
 * not. A script that names `/mnt/user-data/...` therefore only resolves under host bash when the
 * path is on its command line (rewritten there), not inside the file.
 */
import { tool, type ToolRuntime } from "langchain";
import { z } from "zod";
import { fileErrorKind } from "../../sandbox/files.js";
import {
  WRITE_FILE_ERROR_MAX_CHARS,
  effectiveWriteFileMaxBytes,
  formatWriteFileError,
  truncateWriteFileErrorDetail,
  writeFileTooLargeMessage,
  writeDeniedText,
} from "./output.js";
import { runSandboxTool, type SandboxToolDeps } from "./runtime.js";

const DESCRIPTION = `Write text content to a file. By default this overwrites the target file; set append=True to add content to the end without replacing existing content.

READ-BEFORE-WRITE (issue #3857): if the target file already exists (including
append=True), you must have read its CURRENT version with read_file first.
Any write invalidates earlier reads, so re-read between consecutive
modifications — a ranged read of the relevant section is enough. Writes
that fail this check are rejected with an error.

SIZE POLICY (issue #3189):
A single non-append write_file call must not exceed 80 KB of UTF-8 content.
Oversized single-shot writes correlate with LLM streaming chunk-gap
timeouts because the tool-call JSON payload — which the model must emit as
one continuous stream — grows past the safe window. For larger documents,
use ONE of these strategies (write_file rejects oversized payloads with an
actionable error):

  1. INCREMENTAL EDIT (preferred for revisions): after the initial write,
     use \`str_replace\` to surgically update sections. This keeps each tool
     call's payload small.
  2. APPEND-IN-CHUNKS (for new long-form content): split the document into
     sections, each well under 80 KB. First call uses append=False to
     create the file; subsequent calls use append=True. The 80 KB cap does
     NOT apply to append=True calls.

Operators can override the cap via env var \`DEERFLOW_WRITE_FILE_MAX_BYTES\`
(0 disables the guard entirely). Raising it risks streaming timeouts.`;

const schema = z.object({
  description: z
    .string()
    .describe("Explain why you are writing to this file in short words. ALWAYS PROVIDE THIS PARAMETER FIRST."),
  path: z.string().describe("The **absolute** path to the file to write to. ALWAYS PROVIDE THIS PARAMETER SECOND."),
  content: z.string().describe("The content to write to the file. ALWAYS PROVIDE THIS PARAMETER THIRD."),
  append: z
    .boolean()
    .default(false)
    .describe("Whether to append content to the end of the file instead of overwriting it. Defaults to False."),
});

export function createWriteFileTool(deps: SandboxToolDeps) {
  return tool(
    async (input, runtime: ToolRuntime) => {
      const append = input.append ?? false;
      if (!append) {
        const maxBytes = effectiveWriteFileMaxBytes();
        const bytes = Buffer.byteLength(input.content, "utf8");
        if (maxBytes > 0 && bytes > maxBytes) return writeFileTooLargeMessage(bytes, maxBytes);
      }
      return runSandboxTool("write_file", deps, runtime, async ({ files, dirs, writeOptions }) => {
        const requested = input.path;
        try {
          await files.writeFile(requested, input.content, append, writeOptions);
          return "OK";
        } catch (err) {
          switch (fileErrorKind(err)) {
            case "permission":
              return writeDeniedText("write_file", requested, err);
            case "is_directory":
              return truncateWriteFileErrorDetail(
                `Error: Path is a directory, not a file: ${requested}`,
                WRITE_FILE_ERROR_MAX_CHARS,
              );
            default:
              return formatWriteFileError(requested, err, dirs);
          }
        }
      });
    },
    { name: "write_file", description: DESCRIPTION, schema },
  );
}
