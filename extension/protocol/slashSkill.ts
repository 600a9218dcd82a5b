/**
 * DeerFlow's `/skill-name` grammar (`skills/slash.py`, `frontend/src/core/skills/slash.ts`), in ONE
 * place for the harness (SkillActivation) and the panel's composer (completion): a leading
 * `/name` activates that skill for the turn; the rest of the text is the task. The reserved names
 * are DeerFlow's channel commands, never skills. Both worlds are pinned to the same contract
 * fixture as DeerFlow's two languages are (test/fixtures/skills/deerflow/slash_skill_contract.json, a copy of
 * DeerFlow's contracts/slash_skill_contract.json). A module of values, like approvalLimits.ts:
 * the webview may import nothing outside extension/protocol. No imports.
 */
export const RESERVED_SLASH_SKILL_NAMES: ReadonlySet<string> = new Set(["bootstrap", "goal", "help", "memory", "models", "new", "status"]);

export const SLASH_SKILL_RE = /^\/([a-z0-9]+(?:-[a-z0-9]+)*)(?:\s+|$)/;

export interface SlashSkillReference {
  name: string;
  /** The task text after the command, leading whitespace removed (Python's lstrip). */
  rest: string;
}

/** Strict `/skill-name task`: no leading whitespace, a separator after the name, reserved names ignored. */
export function parseSlashSkill(text: string): SlashSkillReference | undefined {
  const m = SLASH_SKILL_RE.exec(text);
  const name = m?.[1];
  if (!m || !name || RESERVED_SLASH_SKILL_NAMES.has(name)) return undefined;
  return { name, rest: text.slice(m[0].length).replace(/^\s+/, "") };
}

/**
 * The name being typed after a leading `/` (for completion): `"/bra"` → `"bra"`, `"/"` → `""`;
 * undefined once the text is not a bare partial command (a space was typed, or no leading `/`).
 */
export function partialSlashName(text: string): string | undefined {
  const m = /^\/([a-z0-9-]*)$/.exec(text);
  return m ? m[1] : undefined;
}
