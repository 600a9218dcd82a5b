/**
 * The panel's memory line (issue 21: "the panel says when memory changed"): one sentence for a
 * `memory/changed` notification, in the words the user knows from Open Memory. Pure (no
 * `vscode`), so it is unit-tested; the panel's thread session shows it, the webview renders it
 * with an "Open Memory" button.
 */
import type { HarnessToHost } from "../protocol/rpc.js";

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

export function describeMemoryChange(p: HarnessToHost["memory/changed"], shownThreadId: string | null): string {
  const parts: string[] = [];
  if (p.added > 0) parts.push(`${plural(p.added, "fact", "facts")} learnt`);
  if (p.sections.length > 0) parts.push(`${plural(p.sections.length, "summary", "summaries")} updated`);
  if (p.removed > 0) parts.push(`${plural(p.removed, "fact", "facts")} removed`);
  if (p.dropped > 0) parts.push(`${plural(p.dropped, "entry", "entries")} not stored (read as an instruction or permission)`);
  const from = p.threadId === shownThreadId ? "this thread" : "another thread";
  return `Memory updated from ${from}: ${parts.join(", ") || "nothing new"}. Kept for this workspace only.`;
}
