/**
 * `present_files(filepaths)` (DeerFlow `present_file_tool.py`): make deliverables visible to the
 * user as artifacts. Only files under the thread's outputs qualify; each path is normalised to
 * `/mnt/user-data/outputs/<relative>`. All or nothing: one invalid path presents nothing and the
 * model gets an error it can act on. Parallel calls are safe: `artifacts` is a union reducer.
 *
 * Differs from DeerFlow on purpose: a path that does not exist is refused (DeerFlow does not
 * check), because an artifact the user clicks must open a real file.
 */
import { tool } from "langchain";
import type { ToolRuntime } from "langchain";
import { Command } from "@langchain/langgraph";
import { ToolMessage } from "@langchain/core/messages";
import { existsSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { z } from "zod";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { OUTPUTS_VIRTUAL_PREFIX, VIRTUAL_PATH_PREFIX, isWithin, realPathAllowingMissing, rejectPathTraversal } from "../sandbox/paths.js";
import { ensureThreadFolders } from "../trust/threadFolders.js";
import { resolveReadPath } from "../trust/toolPaths.js";
import { errorMessage } from "../errors.js";

const schema = z.object({
  filepaths: z
    .array(z.string())
    .min(1)
    .describe("Absolute paths of the files to present, under /mnt/user-data/outputs."),
});

const DESCRIPTION = `Make files visible to the user for viewing and rendering in the client interface.
- Only files under /mnt/user-data/outputs can be presented: write deliverables there first.
- Call it once the files are complete; several files may be presented in one call.`;

type Outcome = { ok: true; path: string } | { ok: false; error: string };

/** Validate one path and normalise it to its `/mnt/user-data/outputs/...` form. */
export function normaliseArtifactPath(p: string, dirs: ThreadDirs): Outcome {
  const notOutputs = { ok: false as const, error: `Error: Only files in ${OUTPUTS_VIRTUAL_PREFIX} can be presented: ${p}` };
  let real: string;
  try {
    // "Inside outputs" means something only while outputs is a real folder (trust/threadFolders.ts).
    ensureThreadFolders(dirs, ["outputs"]);
    if (p.startsWith(`${VIRTUAL_PATH_PREFIX}/`)) {
      real = resolveReadPath(p, dirs);
    } else if (isAbsolute(p)) {
      rejectPathTraversal(p);
      real = realPathAllowingMissing(resolve(p));
    } else {
      return notOutputs;
    }
  } catch (err) {
    return { ok: false, error: `Error: ${errorMessage(err)}: ${p}` };
  }
  if (real === dirs.outputs || !isWithin(real, dirs.outputs)) return notOutputs;
  if (!existsSync(real)) {
    return { ok: false, error: `Error: File not found: ${p}. Write it under ${OUTPUTS_VIRTUAL_PREFIX} before presenting it.` };
  }
  return { ok: true, path: `${OUTPUTS_VIRTUAL_PREFIX}/${relative(dirs.outputs, real).split(sep).join("/")}` };
}

export function presentFilesTool(dirs: ThreadDirs) {
  return tool(
    ({ filepaths }, runtime: ToolRuntime) => {
      const results = filepaths.map((p) => normaliseArtifactPath(p, dirs));
      const failed = results.find((r): r is { ok: false; error: string } => !r.ok);
      if (failed) {
        return new Command({
          update: {
            messages: [new ToolMessage({ content: failed.error, tool_call_id: runtime.toolCallId, name: "present_files", status: "error" })],
          },
        });
      }
      const artifacts = results.map((r) => (r as { ok: true; path: string }).path);
      return new Command({
        update: {
          artifacts,
          messages: [new ToolMessage({ content: "Successfully presented files", tool_call_id: runtime.toolCallId, name: "present_files" })],
        },
      });
    },
    { name: "present_files", description: DESCRIPTION, schema },
  );
}
