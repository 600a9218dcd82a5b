/**
 * Where a workspace's skills view lives (skills/view.ts fills it; the dev container mounts it at
 * /mnt/skills): beside the workspace's database in the data directory, outside the workspace.
 * Its own tiny module so the sandbox's dev container code can name it without the skills subsystem.
 */
import { join } from "node:path";
import { workspaceDbPath } from "../store/db.js";

export const SKILLS_VIEW_DIR = "skills-view";

export function skillsViewRoot(dataDir: string, workspaceFolder: string): string {
  return join(workspaceDbPath(dataDir, workspaceFolder).dir, SKILLS_VIEW_DIR);
}
