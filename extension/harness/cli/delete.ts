/**
 * `deerflow delete`: removes a thread from its workspace — its rows in the database, the image
 * blobs no other thread uses, and its `.deerflow/threads/<id>` folder — through the same
 * deleteThread the panel uses. Prints `{thread_id, deleted: true}`; exit 1 when the thread does
 * not exist or a run on it has not ended ("Thread … is busy"), and then nothing is changed.
 */
import { parse, requireString, workspaceArg, writeJsonLine, UsageError } from "./args.js";
import { openWorkspaceStore, defaultDataDir } from "../store/db.js";
import { deleteThread } from "../store/deleteThread.js";
import { openRunSystem } from "../runs/services.js";
import { validateThreadId } from "../threads/threadDirs.js";

export async function deleteCommand(argv: string[]): Promise<number> {
  const v = parse(argv, { workspace: { type: "string" }, thread: { type: "string" }, "data-dir": { type: "string" } }, "delete");
  const workspace = workspaceArg(v.workspace, "delete");
  const threadId = requireString(v.thread, "--thread ID", "delete");
  try {
    validateThreadId(threadId);
  } catch (err) {
    throw new UsageError(`deerflow delete: ${(err as Error).message}`);
  }
  const store = openWorkspaceStore({ dataDir: v["data-dir"] ?? defaultDataDir(), workspaceFolder: workspace });
  try {
    if (!store.threads.get(threadId)) {
      process.stderr.write(`deerflow delete: no thread ${threadId} in workspace ${workspace}\n`);
      return 1;
    }
    // Settle runs a dead process left active first: they would hold the thread busy forever.
    openRunSystem(store).recover(threadId);
    const deleted = await deleteThread(store, threadId);
    if (deleted.folder === "not_followed") {
      process.stderr.write(
        `deerflow delete: ${workspace}/.deerflow or its threads folder is a link or a file, not a real folder; ` +
          `the thread's folder was not looked for there (nothing is followed through a link)\n`,
      );
    }
    writeJsonLine({ thread_id: threadId, deleted: true });
    return 0;
  } finally {
    store.close();
  }
}
