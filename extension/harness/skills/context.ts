/**
 * Step 5 of the agentskills client guide: the skills the model loaded stay known (DeerFlow
 * `agents/middlewares/skill_context.py`, ThreadState `skill_context`, `merge_skill_context`).
 *
 * A successful read_file of a skill's SKILL.md records `{name, path, description, loaded_at}` (a
 * reference, never the body); the channel keeps the 8 most recently read, one per path. It is the
 * tool policy's source of "loaded" skills (policy.ts), and DurableContext renders it after a
 * summary, as DeerFlow does, so a summarized read is not forgotten:
 *   "## Active skills (loaded earlier - re-read the file before applying its instructions)"
 *   "- {name}: {description} -> {path}"
 */
import { posix } from "node:path";
import { SKILL_FILE, type Skill } from "./types.js";
import { escapeText } from "./prompt.js";

export const SKILL_CONTEXT_MAX_ENTRIES = 8;
export const SKILL_DESCRIPTION_MAX_CHARS = 500;
/** DeerFlow's DEFAULT_SKILL_FILE_READ_TOOL_NAMES: the tools whose read of a SKILL.md loads it. */
export const SKILL_READ_TOOL_NAMES: ReadonlySet<string> = new Set(["read_file", "read", "view", "cat"]);

export interface SkillContextEntry {
  name: string;
  path: string;
  description: string;
  loaded_at: number;
}

const collapse = (text: string): string => text.split(/\s+/).filter(Boolean).join(" ").slice(0, SKILL_DESCRIPTION_MAX_CHARS);

/** The entry a successful read of `path` records, when it is `skill`'s SKILL.md (whole-file read). */
export function skillContextEntry(skill: Skill | undefined, path: string, loadedAt: number): SkillContextEntry | undefined {
  if (!skill || posix.normalize(path) !== skill.location || posix.basename(path) !== SKILL_FILE) return undefined;
  return { name: skill.meta.name, path: skill.location, description: collapse(skill.meta.description), loaded_at: loadedAt };
}

function normalize(e: Partial<SkillContextEntry>): SkillContextEntry | undefined {
  if (typeof e.path !== "string" || e.path === "") return undefined;
  return { name: String(e.name ?? ""), path: e.path, description: typeof e.description === "string" ? collapse(e.description) : "", loaded_at: typeof e.loaded_at === "number" ? e.loaded_at : 0 };
}

/** DeerFlow's reducer: empty update keeps; dedupe by path, a re-read moves it last; the last 8 kept. */
export function mergeSkillContext(existing: readonly SkillContextEntry[] | null | undefined, update: readonly SkillContextEntry[] | null | undefined): SkillContextEntry[] {
  const byPath = new Map<string, SkillContextEntry>();
  for (const e of existing ?? []) {
    const n = normalize(e);
    if (n) byPath.set(n.path, n);
  }
  for (const e of update ?? []) {
    const n = normalize(e);
    if (!n) continue;
    byPath.delete(n.path);
    byPath.set(n.path, n);
  }
  return [...byPath.values()].slice(-SKILL_CONTEXT_MAX_ENTRIES);
}

/** DeerFlow's `render_skill_context`; "" for none. */
export function renderSkillContext(entries: readonly SkillContextEntry[] | null | undefined): string {
  if (!entries || entries.length === 0) return "";
  const lines = ["## Active skills (loaded earlier - re-read the file before applying its instructions)"];
  for (const e of entries) {
    const description = escapeText(collapse(e.description ?? ""));
    lines.push(`- ${escapeText(e.name)}${description ? `: ${description}` : ""} -> ${escapeText(e.path)}`);
  }
  return lines.join("\n");
}
