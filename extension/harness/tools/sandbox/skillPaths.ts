/**
 * DeerFlow's refusal for a disabled skill's files (`sandbox/tools.py` `_is_disabled_skill_path`,
 * its exact text), answered by ls, read_file, glob and grep before anything else. The files are
 * not in the run's skills view either (skills/view.ts), so bash finds nothing there: unlike in
 * DeerFlow (issue #4107), `bash cat` is no way around it.
 */
import { posix } from "node:path";
import type { ThreadDirs } from "../../threads/threadDirs.js";
import { isSkillsPath } from "../../sandbox/paths.js";

export const DISABLED_SKILL_MESSAGE = (name: string): string =>
  `Error: Skill '${name}' is disabled. Access to its files is blocked. Enable the skill in settings before using it.`;

export function disabledSkillRefusal(path: unknown, dirs: ThreadDirs): string | undefined {
  const disabled = dirs.skills?.disabled;
  if (!disabled || disabled.size === 0 || typeof path !== "string" || !isSkillsPath(path)) return undefined;
  const p = posix.normalize(path);
  for (const [dir, name] of disabled) if (p === dir || p.startsWith(`${dir}/`)) return DISABLED_SKILL_MESSAGE(name);
  return undefined;
}
