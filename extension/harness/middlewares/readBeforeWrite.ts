/**
 * ReadBeforeWriteMiddleware (DeerFlow `read_before_write_middleware.py`, issue #3857): modifying an
 * existing file needs a `read_file` of its CURRENT version earlier in the thread.
 *
 * - A successful `read_file` (ranged too) stamps `additional_kwargs.deerflow_read_mark =
 *   { path: normalised virtual path, hash: sha256(full current content) }` on its ToolMessage. The
 *   facts therefore live in the thread's `messages` channel, so they survive the checkpoint across
 *   runs, and a summarisation that drops the read result re-arms the gate (DeerFlow's design; we
 *   chose it over a separate channel so read facts can never outlive the text the model saw).
 * - `write_file` (overwrite or append) / `str_replace` on an existing file passes only when the
 *   newest mark for that path matches the file's hash now; otherwise DeerFlow's error ToolMessage,
 *   `status: "error"`, `recoverable_by_model`. Writes never refresh a mark (DeerFlow: "any write
 *   invalidates earlier reads"), which is what the tool descriptions tell the model.
 * - New (missing) files pass; if the gate cannot inspect the file it fails open and the tool
 *   reports its own error.
 * - Gate check + tool run, and read + stamp, are serialised per (thread, path): the tool calls of
 *   one AI message run concurrently, and two appends on one mark must not both pass.
 *
 * The current content is read through `HostFiles` on the thread's directories: `/mnt/user-data` is
 * those host directories in every sandbox (the dev container bind-mounts them), so the gate needs
 * no sandbox and never brings one up. DeerFlow reads through the sandbox.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { createMiddleware, ToolMessage } from "langchain";
import { Command } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { HostFiles, fileErrorKind } from "../sandbox/files.js";
import { isPathRefusal, resolveWritePath } from "../trust/toolPaths.js";

export const READ_MARK_KEY = "deerflow_read_mark";
const READ_TOOLS = new Set(["read_file"]);
const GATED_WRITE_TOOLS = new Set(["write_file", "str_replace"]);

export const blockMessage = (tool: string, path: string) =>
  `Error: ${tool} blocked — ${path} already exists and you have not read its current version. ` +
  "Any write invalidates earlier reads, so re-read before every modification. " +
  "Call read_file on it (a ranged read of the relevant section is enough, e.g. the last ~30 lines " +
  "before an append), check what is already there, then retry.";

const contentHash = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const normalise = (path: string) => posix.normalize(path);

/** Per-(thread, path) critical sections: a promise chain per key, dropped when idle. */
const locks = new Map<string, Promise<unknown>>();
async function withLock<T>(key: string, body: () => Promise<T>): Promise<T> {
  const prev = locks.get(key) ?? Promise.resolve();
  const run = prev.then(body, body);
  const tail = run.catch(() => undefined);
  locks.set(key, tail);
  try {
    return await run;
  } finally {
    if (locks.get(key) === tail) locks.delete(key);
  }
}

function latestMarkHash(messages: readonly BaseMessage[] | undefined, path: string): string | undefined {
  for (let i = (messages?.length ?? 0) - 1; i >= 0; i--) {
    const m = messages![i]!;
    if (!ToolMessage.isInstance(m)) continue;
    const mark = m.additional_kwargs[READ_MARK_KEY] as { path?: unknown; hash?: unknown } | undefined;
    if (mark && mark.path === path) return typeof mark.hash === "string" ? mark.hash : undefined;
  }
  return undefined;
}

function resultMessage(result: unknown): ToolMessage | undefined {
  if (ToolMessage.isInstance(result)) return result;
  if (result instanceof Command && typeof result.update === "object" && result.update !== null) {
    const msgs = (result.update as { messages?: unknown }).messages;
    if (Array.isArray(msgs)) return (msgs as unknown[]).filter((m): m is ToolMessage => ToolMessage.isInstance(m)).at(-1);
  }
  return undefined;
}

function refusedByBoundary(path: string, dirs: ThreadDirs, allowProtected: boolean): boolean {
  try {
    resolveWritePath(path, dirs, { allowProtected });
    return false;
  } catch (err) {
    return isPathRefusal(err);
  }
}

/** The file's current content, null when it does not exist, undefined when it cannot be inspected. */
async function currentContent(files: HostFiles, path: string): Promise<string | null | undefined> {
  try {
    return await files.readFile(path);
  } catch (err) {
    return fileErrorKind(err) === "not_found" ? null : undefined;
  }
}

/**
 * The rule itself, for one call: DeerFlow's read-first error result when `call` is a write_file /
 * str_replace of an existing file whose current version the thread's `messages` have no read of;
 * undefined when the write may go on (not a gated write, a new file, a path the trust boundary
 * refuses: the tool refuses it naming that rule, or a file the gate cannot inspect: fail open).
 * The middleware answers with it, and the approval preflight (approvals/preflight.ts) too, so a
 * write that would be refused is never offered for approval. `allowProtected`: the call is (or
 * would be, once approved) cleared to write a protected path.
 */
export async function readBeforeWriteRefusal(
  call: { id?: string; name: string; args?: unknown },
  messages: readonly BaseMessage[] | undefined,
  dirs: ThreadDirs,
  allowProtected: boolean,
  files: HostFiles = new HostFiles(dirs),
): Promise<ToolMessage | undefined> {
  const path = pathOf(call);
  if (path === undefined || !GATED_WRITE_TOOLS.has(call.name)) return undefined;
  // The trust boundary speaks first: a write it refuses (a protected path, a path outside
  // the roots, a redirected thread folder) goes to the tool, which refuses it naming the
  // rule, rather than being told to read the file first.
  if (refusedByBoundary(path, dirs, allowProtected)) return undefined;
  const now = await currentContent(files, path);
  if (typeof now !== "string") return undefined; // new file, or fail open
  if (latestMarkHash(messages, normalise(path)) === contentHash(now)) return undefined;
  return new ToolMessage({
    content: blockMessage(call.name, path),
    tool_call_id: call.id ?? "missing_id",
    name: call.name,
    status: "error",
    additional_kwargs: {
      deerflow_tool_meta: {
        status: "error",
        error_type: "read_before_write",
        recoverable_by_model: true,
        recommended_next_action: "read_then_retry",
        source: "middleware",
      },
    },
  });
}

function pathOf(call: { args?: unknown }): string | undefined {
  const path = (call.args as { path?: unknown } | undefined)?.path;
  return typeof path === "string" && path ? path : undefined;
}

/**
 * `protectedWritesAllowed`: the calls the approval middleware (outside this one) cleared to write
 * a protected path; for them the boundary does not refuse, so the read-before-write rule applies.
 */
export function readBeforeWriteMiddleware(dirs: ThreadDirs, protectedWritesAllowed: ReadonlySet<string> = new Set()) {
  const files = new HostFiles(dirs);
  const current = (path: string) => currentContent(files, path);
  return createMiddleware({
    name: "ReadBeforeWriteMiddleware",
    wrapToolCall: async (request, handler) => {
      const name = request.toolCall.name;
      const path = pathOf(request.toolCall);
      if (path === undefined || (!GATED_WRITE_TOOLS.has(name) && !READ_TOOLS.has(name))) return handler(request);
      const key = `${dirs.threadId}\0${normalise(path)}`;
      if (GATED_WRITE_TOOLS.has(name)) {
        const allowProtected = request.toolCall.id !== undefined && protectedWritesAllowed.has(request.toolCall.id);
        const messages = (request.state as { messages?: BaseMessage[] }).messages;
        return withLock(key, async () => (await readBeforeWriteRefusal(request.toolCall, messages, dirs, allowProtected, files)) ?? handler(request));
      }
      return withLock(key, async () => {
        const result = await handler(request);
        const message = resultMessage(result);
        if (!message || message.status === "error") return result;
        // Hash what is on disk now, under the lock, so the mark is the version the model was shown.
        // (Our read_file answers failures as "Error: ..." text; the same failure makes `current` non-string.)
        const text = await current(path);
        if (typeof text === "string") message.additional_kwargs[READ_MARK_KEY] = { path: normalise(path), hash: contentHash(text) };
        return result;
      });
    },
  });
}
