/**
 * `/mnt/skills` in a dev container (issue 24): the workspace's skills view (skills/view.ts, an
 * enabled-only copy holding regular files and folders only) bind-mounted READ-ONLY at
 * /mnt/skills, DeerFlow's layout, through the approved copy's `mounts` (approvedCopy.ts). One
 * mount of a folder whose inode the sync keeps, so enabling, disabling or editing a skill shows
 * in the running container without recreating it. Like the protected paths' mounts, it is
 * DeerFlow's own addition, not part of the configuration the user approves: it only adds a
 * folder the container cannot write.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { SKILLS_VIRTUAL_PATH } from "../paths.js";
import { SKILLS_VIEW_DIR } from "../../skills/viewRoot.js";

/** The view of the workspace whose approvals live in `approvalsDir` (`<data-dir>/workspaces/<key>/devcontainer`). */
export function skillsViewFor(approvalsDir: string): string {
  return join(dirname(approvalsDir), SKILLS_VIEW_DIR);
}

/** The `mounts` entry; the folder is created when missing (docker refuses a bind of nothing). */
export function skillsMountArg(viewRoot: string): string {
  mkdirSync(viewRoot, { recursive: true, mode: 0o755 });
  const source = `source=${viewRoot}`;
  return `type=bind,${source.includes(",") ? `"${source}"` : source},target=${SKILLS_VIRTUAL_PATH},readonly`;
}
