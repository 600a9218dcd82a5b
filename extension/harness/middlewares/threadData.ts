/**
 * ThreadDataMiddleware (DeerFlow `thread_data_middleware.py`): before the agent runs, record the
 * thread's host directories in `thread_data` and make sure they exist. DeerFlow derives them from
 * `{base}/users/{uid}/threads/{tid}`; here the workspace is the VS Code workspace folder and
 * uploads/outputs live under `.deerflow/threads/<tid>/` (see threads/threadDirs.ts).
 *
 * `thread_data` is state, never model input: host paths stay out of every request.
 */
import { createMiddleware } from "langchain";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { ensureThreadFolders } from "../trust/threadFolders.js";
import type { ThreadData } from "../state/threadState.js";

export function threadDataMiddleware(dirs: ThreadDirs) {
  const data: ThreadData = { workspace_path: dirs.workspace, uploads_path: dirs.uploads, outputs_path: dirs.outputs };
  return createMiddleware({
    name: "ThreadDataMiddleware",
    beforeAgent: (state) => {
      // The user may delete outputs between runs; tools expect the directories. A folder the
      // sandbox replaced with a link since the run started is refused here, not followed.
      ensureThreadFolders(dirs);
      const current = (state as { thread_data?: ThreadData | null }).thread_data;
      if (
        current?.workspace_path === data.workspace_path &&
        current.uploads_path === data.uploads_path &&
        current.outputs_path === data.outputs_path
      ) {
        return undefined;
      }
      return { thread_data: data } as Record<string, unknown>;
    },
  });
}
