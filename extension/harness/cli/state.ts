/** `deerflow state` and `deerflow threads`: read-only views of a workspace's threads. */
import { parse, requireString, workspaceArg, writeJsonLine, UsageError } from "./args.js";
import { openWorkspaceStore, defaultDataDir } from "../store/db.js";
import { validateThreadId } from "../threads/threadDirs.js";
import { readThreadState } from "../threads/threadStateView.js";
import { withThreadUsage } from "../runs/usage.js";
import { createRunStore } from "../store/runs.js";

export async function stateCommand(argv: string[]): Promise<number> {
  const v = parse(argv, { workspace: { type: "string" }, thread: { type: "string" }, "data-dir": { type: "string" } }, "state");
  const workspace = workspaceArg(v.workspace, "state");
  const threadId = requireString(v.thread, "--thread ID", "state");
  try {
    validateThreadId(threadId);
  } catch (err) {
    throw new UsageError(`deerflow state: ${(err as Error).message}`);
  }
  const store = openWorkspaceStore({ dataDir: v["data-dir"] ?? defaultDataDir(), workspaceFolder: workspace });
  try {
    if (!store.threads.get(threadId)) {
      process.stderr.write(`deerflow state: no thread ${threadId} in workspace ${workspace}\n`);
      return 1;
    }
    // The runs' usage (issue 15) beside the checkpoint's state: `usage` sums the thread's runs.
    writeJsonLine({ ...(await readThreadState(store.checkpointer, threadId)), ...withThreadUsage(createRunStore(store.db).listByThread(threadId)) });
    return 0;
  } finally {
    store.close();
  }
}

export function threadsCommand(argv: string[]): number {
  const v = parse(argv, { workspace: { type: "string" }, "data-dir": { type: "string" } }, "threads");
  const workspace = workspaceArg(v.workspace, "threads");
  const store = openWorkspaceStore({ dataDir: v["data-dir"] ?? defaultDataDir(), workspaceFolder: workspace });
  try {
    for (const t of store.threads.list()) {
      writeJsonLine({
        thread_id: t.threadId,
        title: t.title,
        created_at: new Date(t.createdAt).toISOString(),
        updated_at: new Date(t.updatedAt).toISOString(),
      });
    }
    return 0;
  } finally {
    store.close();
  }
}
