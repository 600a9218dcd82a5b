/**
 * `view_image(image_path)` (DeerFlow `view_image_tool.py`): read an image under the user-data
 * roots so the model can see it on its next request. The checks and their messages are
 * DeerFlow's. State keeps metadata and a content hash only (DeerFlow #4138: no base64 in state);
 * the bytes go to the content-addressed blob store, from which the ViewImage middleware injects
 * them into the next model request.
 */
import { tool } from "langchain";
import type { ToolRuntime } from "langchain";
import { Command } from "@langchain/langgraph";
import { ToolMessage } from "@langchain/core/messages";
import { statSync } from "node:fs";
import { extname, posix } from "node:path";
import { z } from "zod";
import type { ThreadDirs } from "../threads/threadDirs.js";
import type { BlobStore } from "../store/blobs.js";
import type { ViewedImage } from "../state/reducers.js";
import { OUTPUTS_VIRTUAL_PATH, UPLOADS_VIRTUAL_PATH, WORKSPACE_VIRTUAL_PATH } from "../sandbox/paths.js";
import { resolveReadPath } from "../trust/toolPaths.js";
import { readFileCheckedSync } from "../trust/openChecked.js";
import { EXTENSION_MIME, MAX_IMAGE_BYTES, SUPPORTED_EXTENSIONS, sniffImageMime } from "./imageFormat.js";
import { errorMessage } from "../errors.js";

const ROOTS = [WORKSPACE_VIRTUAL_PATH, UPLOADS_VIRTUAL_PATH, OUTPUTS_VIRTUAL_PATH];

const schema = z.object({
  image_path: z.string().describe("Absolute path of the image, under /mnt/user-data/{workspace,uploads,outputs}."),
});

const DESCRIPTION = `Read an image file so you can see it. Supported formats: ${SUPPORTED_EXTENSIONS.join(", ")}.
Use it for images under /mnt/user-data (uploads, outputs, or the workspace).`;

export type ViewImageOutcome = { ok: true; path: string; image: ViewedImage } | { ok: false; error: string };

export function readImage(imagePath: string, dirs: ThreadDirs, blobs: BlobStore): ViewImageOutcome {
  const fail = (error: string): ViewImageOutcome => ({ ok: false, error });
  const vpath = posix.normalize(imagePath);
  if (!ROOTS.some((r) => vpath.startsWith(`${r}/`)) || imagePath.split("/").includes("..")) {
    if (imagePath.split(/[/\\]/).includes("..")) return fail("Error: Access denied: path traversal detected");
    return fail(`Error: Only image paths under ${ROOTS.join(", ")} are allowed`);
  }
  let real: string;
  try {
    real = resolveReadPath(vpath, dirs);
  } catch (err) {
    return fail(`Error: ${errorMessage(err)}`);
  }
  let st;
  try {
    st = statSync(real);
  } catch {
    return fail(`Error: Image file not found: ${vpath}`);
  }
  if (!st.isFile()) return fail(`Error: Path is not a file: ${vpath}`);
  const ext = extname(vpath).toLowerCase();
  const extMime = EXTENSION_MIME[ext];
  if (!extMime) return fail(`Error: Unsupported image format: ${ext || "(none)"}. Supported formats: ${SUPPORTED_EXTENSIONS.join(", ")}`);
  if (st.size > MAX_IMAGE_BYTES) {
    return fail(`Error: Image file is too large: ${st.size} bytes. Maximum supported size is ${MAX_IMAGE_BYTES} bytes`);
  }
  let bytes: Buffer;
  try {
    // Checked: a FIFO or a link swapped in after the stat above is neither waited on nor followed.
    bytes = readFileCheckedSync(real, MAX_IMAGE_BYTES + 1);
  } catch (err) {
    // The OS message may carry the host path; the model gets the virtual one only.
    const code = (err as NodeJS.ErrnoException).code ?? "read failed";
    return fail(`Error reading image file: ${vpath} (${code})`);
  }
  if (bytes.length !== st.size) return fail("Error: Image file changed during read");
  if (bytes.length > MAX_IMAGE_BYTES) {
    return fail(`Error: Image file is too large: ${bytes.length} bytes. Maximum supported size is ${MAX_IMAGE_BYTES} bytes`);
  }
  const actual = sniffImageMime(bytes);
  if (!actual) return fail("Error: File contents do not match a supported image format");
  if (actual !== extMime) return fail(`Error: Image contents are ${actual}, but file extension indicates ${extMime}`);
  const sha256 = blobs.put(bytes, actual);
  return { ok: true, path: vpath, image: { mime_type: actual, size: bytes.length, sha256 } };
}

export function viewImageTool(dirs: ThreadDirs, blobs: BlobStore) {
  return tool(
    ({ image_path }, runtime: ToolRuntime) => {
      const r = readImage(image_path, dirs, blobs);
      if (!r.ok) {
        return new Command({
          update: { messages: [new ToolMessage({ content: r.error, tool_call_id: runtime.toolCallId, name: "view_image", status: "error" })] },
        });
      }
      return new Command({
        update: {
          viewed_images: { [r.path]: r.image },
          messages: [new ToolMessage({ content: "Successfully read image", tool_call_id: runtime.toolCallId, name: "view_image" })],
        },
      });
    },
    { name: "view_image", description: DESCRIPTION, schema },
  );
}
