/**
 * Attachments for a remote harness (issue 31 item 2): a remote harness never reads a path this
 * window names (serve refuses `runs/start` `files`), so the host reads each attached file here,
 * sends its bytes with `uploads/put`, and the run names what the server stored (`uploaded`).
 * The files are this window's own: whatever the user attached, from any folder of this machine.
 */
import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import type { RequestParams, RequestResult } from "../../protocol/rpc.js";
import { RemoteAttachmentError } from "./rewrite.js";

/** One `uploads/put` answer at most; the server's own `uploads` limits still apply. */
const MAX_REMOTE_ATTACHMENT_BYTES = 50 * 1024 * 1024;

type Put = (p: RequestParams<"uploads/put">) => Promise<RequestResult<"uploads/put">>;

/** `runs/start` with its `files` uploaded through `put`: the same request naming them in `uploaded` (local folder; the caller maps it). */
export async function uploadAttachments(params: RequestParams<"runs/start">, put: Put): Promise<RequestParams<"runs/start">> {
  const { files, ...rest } = params;
  if (!files || files.length === 0) return params;
  const uploaded = [...(rest.uploaded ?? [])];
  for (const file of files) {
    let bytes: Buffer;
    try {
      if ((await stat(file)).size > MAX_REMOTE_ATTACHMENT_BYTES) throw new Error("too large");
      bytes = await readFile(file);
    } catch {
      throw new RemoteAttachmentError(`Cannot attach ${basename(file)}: it is not a readable file of at most 50 MB, which a remote harness takes.`);
    }
    const answer = await put({ workspaceFolder: rest.workspaceFolder, threadId: rest.threadId, name: basename(file), base64: bytes.toString("base64") });
    uploaded.push(answer.filename);
  }
  return { ...rest, uploaded };
}
