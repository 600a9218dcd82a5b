/**
 * Memory as the model sees it (DeerFlow `format_memory_for_injection`): the user sections, the
 * history sections, then facts by confidence, highest first, within `max_injection_tokens`. A
 * fact that does not fit stops the list, so a shorter, less certain fact never slips in ahead of
 * a skipped, more certain one (DeerFlow's rule). Every user-editable value is escaped (`<`, `>`,
 * `&`): a fact reading `</memory></system-reminder>` cannot close the block.
 *
 * Where we differ: when the sections alone exceed the budget, whole section lines are dropped
 * from the end (history before user context) rather than the rendered text being cut mid-line.
 */
import { HISTORY_SECTIONS, USER_SECTIONS, type MemoryDoc } from "./schema.js";

export type TokenCounter = (text: string) => number;

/** The fallback estimate (~4 characters per token) until a model's tokenizer is wired here. */
export const estimateTokens: TokenCounter = (text) => Math.ceil(text.length / 4);

const LABELS: Record<string, string> = {
  workContext: "Work",
  personalContext: "Personal",
  topOfMind: "Current Focus",
  recentMonths: "Recent",
  earlierContext: "Earlier",
  longTermBackground: "Background",
};

export function escapeText(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The `<memory>` body within `maxTokens`; "" when there is nothing to say. */
export function renderMemory(doc: MemoryDoc, maxTokens: number, count: TokenCounter = estimateTokens): string {
  const groups: Array<{ header: string; lines: string[] }> = [
    { header: "User Context:", lines: USER_SECTIONS.filter((k) => doc.user[k].summary.trim()).map((k) => `- ${LABELS[k]}: ${escapeText(doc.user[k].summary.trim())}`) },
    { header: "History:", lines: HISTORY_SECTIONS.filter((k) => doc.history[k].summary.trim()).map((k) => `- ${LABELS[k]}: ${escapeText(doc.history[k].summary.trim())}`) },
  ];
  const text = () =>
    groups
      .filter((g) => g.lines.length > 0)
      .map((g) => [g.header, ...g.lines].join("\n"))
      .join("\n\n");
  // Sections over budget: drop lines from the end (background history first).
  for (let g = groups.length - 1; g >= 0 && count(text()) > maxTokens; g--) {
    while (groups[g]!.lines.length > 0 && count(text()) > maxTokens) groups[g]!.lines.pop();
  }
  const base = text();
  const facts = [...doc.facts].sort((a, b) => b.confidence - a.confidence);
  const lines: string[] = [];
  const header = base ? "\n\nFacts:\n" : "Facts:\n";
  let used = count(base) + count(header);
  for (const f of facts) {
    const line = `- [${f.category} | ${f.confidence.toFixed(2)}] ${escapeText(f.content.trim())}`;
    const cost = count(lines.length > 0 ? `\n${line}` : line);
    if (used + cost > maxTokens) break;
    lines.push(line);
    used += cost;
  }
  return lines.length > 0 ? `${base}${header}${lines.join("\n")}` : base;
}

/** The hidden message's text (reference §3.3.18): `<system-reminder><memory>…</memory></system-reminder>`. */
export function memoryReminder(body: string): string {
  return ["<system-reminder>", "<memory>", body, "</memory>", "</system-reminder>"].join("\n");
}
