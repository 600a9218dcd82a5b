/**
 * Where the memory editor shows scopes and offers promotion (issue 21): one entry per fact — "Only
 * in <folder>" with "Promote to all workspaces", or "Given to every workspace" — and one per
 * section a folder's extraction wrote. Found in the document's text as the harness renders it
 * (JSON, two-space indent); a document being edited into another shape simply gets fewer
 * lenses. Pure (no `vscode`): host/memory.ts turns these into CodeLenses.
 */
import { basename } from "node:path";
import type { MemorySectionName } from "../protocol/rpc.js";

export type PromoteTarget = { factId: string } | { workspace: string; section: MemorySectionName };

export interface MemoryLens {
  /** Zero-based line the lens sits above. */
  line: number;
  title: string;
  /** Absent: the lens only says something (the scope). */
  promote?: PromoteTarget;
}

interface Doc {
  facts?: Array<{ id?: unknown; scope?: unknown; workspace?: unknown }>;
  workspaces?: Record<string, { user?: Record<string, { summary?: unknown }>; history?: Record<string, { summary?: unknown }> }>;
}

const GROUPS = ["user", "history"] as const;

export function memoryLenses(text: string): MemoryLens[] {
  let doc: Doc;
  try {
    doc = JSON.parse(text) as Doc;
  } catch {
    return [];
  }
  if (!doc || typeof doc !== "object") return [];
  const lines = text.split("\n");
  /** The first line at or after `from` that, trimmed, starts with `needle`; -1 when none. */
  const find = (needle: string, from = 0): number => {
    for (let i = from; i < lines.length; i++) if (lines[i]!.trimStart().startsWith(needle)) return i;
    return -1;
  };
  const out: MemoryLens[] = [];
  const factsAt = find('"facts": [');
  for (const f of Array.isArray(doc.facts) ? doc.facts : []) {
    if (typeof f?.id !== "string") continue;
    const line = find(`"id": ${JSON.stringify(f.id)}`, Math.max(0, factsAt));
    if (line < 0) continue;
    if (f.scope === "workspace" && typeof f.workspace === "string") {
      out.push({ line, title: `Only in ${basename(f.workspace) || f.workspace}` });
      out.push({ line, title: "Promote to all workspaces", promote: { factId: f.id } });
    } else {
      out.push({ line, title: "Given to every workspace" });
    }
  }
  const workspacesAt = find('"workspaces": {');
  if (workspacesAt < 0 || !doc.workspaces || typeof doc.workspaces !== "object") return out;
  for (const [folder, own] of Object.entries(doc.workspaces)) {
    const folderAt = find(`${JSON.stringify(folder)}: {`, workspacesAt);
    if (folderAt < 0) continue;
    for (const group of GROUPS) {
      const groupAt = find(`"${group}": {`, folderAt);
      if (groupAt < 0) continue;
      for (const [key, section] of Object.entries(own?.[group] ?? {})) {
        if (typeof section?.summary !== "string" || !section.summary.trim()) continue;
        const line = find(`"${key}": {`, groupAt);
        if (line < 0) continue;
        out.push({ line, title: `Only in ${basename(folder) || folder} · Promote to all workspaces`, promote: { workspace: folder, section: `${group}.${key}` as MemorySectionName } });
      }
    }
  }
  return out;
}

/** What a `deerflow.promoteMemory` argument names, checked: command arguments can come from anywhere. */
export function promoteTargetOf(arg: unknown): PromoteTarget | undefined {
  if (!arg || typeof arg !== "object") return undefined;
  const a = arg as Record<string, unknown>;
  if (typeof a.factId === "string" && a.factId) return { factId: a.factId };
  const sections: readonly string[] = ["user.workContext", "user.personalContext", "user.topOfMind", "history.recentMonths", "history.earlierContext", "history.longTermBackground"];
  if (typeof a.workspace === "string" && a.workspace && typeof a.section === "string" && sections.includes(a.section)) return { workspace: a.workspace, section: a.section as MemorySectionName };
  return undefined;
}
