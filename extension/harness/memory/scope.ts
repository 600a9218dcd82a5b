/**
 * Memory scopes (issue 21): which part of the document a workspace sees, and the one way
 * something becomes visible everywhere — the user promotes it.
 *
 * The rule: an extraction in workspace W writes only inside W's scope (its facts get scope
 * "workspace" with `workspace: W`, the sections it rewrites go to `workspaces[W]`, it removes and
 * evicts only W's facts). A thread in W is given the global part plus W's own; never another
 * workspace's. So a file planted in one repository can at worst shape what that repository's own
 * threads are told, and Restricted Mode workspaces are not extracted at all (server/memory.ts).
 * Global facts and sections are the user's: promoted here, written in the editor, or carried over
 * from a memory.json written before scopes existed.
 *
 * Workspaces are named by the real path of their folder (the one key the stores use, db.ts).
 */
import { HarnessError } from "../errors.js";
import { emptySections, HISTORY_SECTIONS, USER_SECTIONS, type HistorySection, type MemoryDoc, type MemoryFact, type UserSection } from "./schema.js";

/** A fact a thread of `workspace` is given: global, or extracted there. */
export function visibleIn(fact: MemoryFact, workspace: string | undefined): boolean {
  return fact.scope === "global" || (workspace !== undefined && fact.workspace === workspace);
}

/** A fact an extraction in `workspace` may remove or evict: its own, never a global or another workspace's one. */
export function ownedBy(fact: MemoryFact, workspace: string): boolean {
  return fact.scope === "workspace" && fact.workspace === workspace;
}

/**
 * The memory as a thread of `workspace` sees it, in DeerFlow's plain shape (no scopes, no
 * `workspaces`): what is rendered into `<memory>` and what the extraction model is shown as the
 * current memory. A section the workspace rewrote replaces the global one.
 */
export function viewFor(doc: MemoryDoc, workspace: string | undefined): MemoryDoc {
  const own = workspace !== undefined ? doc.workspaces[workspace] : undefined;
  const view: MemoryDoc = { ...structuredClone(doc), workspaces: {} };
  if (own) {
    for (const k of USER_SECTIONS) if (own.user[k].summary.trim()) view.user[k] = { ...own.user[k] };
    for (const k of HISTORY_SECTIONS) if (own.history[k].summary.trim()) view.history[k] = { ...own.history[k] };
  }
  view.facts = view.facts.filter((f) => visibleIn(f, workspace));
  return view;
}

/** `workspaces[workspace]`, created empty when the workspace has none yet (on a copy the caller owns). */
export function ownSections(doc: MemoryDoc, workspace: string): MemoryDoc["workspaces"][string] {
  doc.workspaces[workspace] ??= emptySections();
  return doc.workspaces[workspace];
}

export type SectionName = `user.${UserSection}` | `history.${HistorySection}`;

export const SECTION_NAMES: readonly SectionName[] = [...USER_SECTIONS.map((k) => `user.${k}` as const), ...HISTORY_SECTIONS.map((k) => `history.${k}` as const)];

export function isSectionName(s: string): s is SectionName {
  return (SECTION_NAMES as readonly string[]).includes(s);
}

export type Promotion = { factId: string } | { workspace: string; section: SectionName };

/**
 * The user's promotion (memory/promote, `deerflow memory promote`, the editor's lens), on a copy:
 * a fact becomes global (its `workspace` kept as where it came from); a workspace's section
 * replaces the global one and leaves the workspace. Unknown ids and empty sections are a
 * `memory_not_found` error naming what was asked for.
 */
export function promote(doc: MemoryDoc, what: Promotion, now = new Date()): MemoryDoc {
  const next = structuredClone(doc);
  if ("factId" in what) {
    const fact = next.facts.find((f) => f.id === what.factId);
    if (!fact) throw new HarnessError("memory_not_found", `No fact ${what.factId} in the memory. "deerflow memory show" lists the facts and their ids.`);
    fact.scope = "global";
  } else {
    const own = next.workspaces[what.workspace];
    const [group, key] = what.section.split(".") as ["user" | "history", string];
    const section = own ? (own[group] as Record<string, { summary: string; updatedAt: string }>)[key] : undefined;
    if (!own || !section || !section.summary.trim()) {
      throw new HarnessError("memory_not_found", `The workspace ${what.workspace} has no ${what.section} of its own to promote.`);
    }
    (next[group] as Record<string, { summary: string; updatedAt: string }>)[key] = { summary: section.summary, updatedAt: now.toISOString() };
    (own[group] as Record<string, { summary: string; updatedAt: string }>)[key] = { summary: "", updatedAt: "" };
    const empty = [...USER_SECTIONS.map((k) => own.user[k]), ...HISTORY_SECTIONS.map((k) => own.history[k])].every((s) => !s.summary.trim());
    if (empty) delete next.workspaces[what.workspace];
  }
  next.lastUpdated = now.toISOString();
  return next;
}
