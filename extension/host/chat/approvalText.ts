/**
 * What `@deerflow` shows for tool calls that wait on the user (issue 31 item 5): each call's name,
 * why it asks, and its arguments in full, so that Approve covers exactly what was read. `reason`
 * alone is not enough: it cuts a command at 200 characters (approvals/classify.ts), and 200
 * harmless characters can hide a `; curl … | sh` after them.
 *
 * Everything in it was written by the model, so nothing of it is Markdown: names and reasons are
 * text with every ASCII punctuation character backslash-escaped (CommonMark lets any of them be,
 * so no emphasis, link, HTML, entity, table or theme icon can start), and argument values are in
 * fenced code blocks whose fence is longer than any run of backticks inside (VS Code's own
 * appendCodeblock only looks at runs that start a line, and a closing fence may be indented).
 * Characters that would hide or reorder text (controls, bidi overrides, zero-width ones) are
 * shown by their code point.
 *
 * Arguments longer than the chat should hold (CHAT_APPROVAL_MAX_CHARS in all) are not shown cut:
 * the text says so and `complete` is false, and the caller offers the panel instead of Approve.
 *
 * No `vscode` import: unit tests render the result with a Markdown parser.
 */
import type { PendingApproval } from "../../protocol/approvals.js";

/** The arguments of all waiting calls the chat shows, in characters; past it, the panel decides. */
export const CHAT_APPROVAL_MAX_CHARS = 4000;

export interface ChatApprovalText {
  /** Markdown source in which nothing the model wrote is interpreted. */
  markdown: string;
  /** Every argument of every call is in `markdown`, whole: Approve may be offered. */
  complete: boolean;
}

const PUNCTUATION = /[!-/:-@[-`{-~]/g;
// C0/C1 controls but tab and newline, soft hyphen, Arabic letter mark, Mongolian vowel separator,
// zero-width and direction marks, line/paragraph separators, bidi embeddings/overrides/isolates,
// invisible operators, BOM, interlinear annotation marks. Matching controls is the point here.
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]/g;

const codePoint = (ch: string) => `⟨U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`;

/** Model text as inline Markdown text: one line, hidden characters shown, nothing interpreted. */
export function escapeMarkdownText(text: string): string {
  return text.replace(/\r\n|\r|\n/g, " ").replace(HIDDEN, codePoint).replace(PUNCTUATION, (c) => `\\${c}`);
}

/** A fenced code block holding `text` literally: the fence outlasts every backtick run in it. */
export function codeBlock(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}\n${text.replace(HIDDEN, codePoint)}\n${fence}`;
}

/** One argument's value as the card shows it: a string as it is, anything else as JSON. */
function shownValue(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? String(value));
}

export function chatApprovalText(pending: readonly PendingApproval[], maxChars = CHAT_APPROVAL_MAX_CHARS): ChatApprovalText {
  const values = pending.map((p) => Object.entries(p.args ?? {}).map(([key, value]) => ({ key, text: shownValue(value) })));
  const total = values.flat().reduce((n, v) => n + v.key.length + v.text.length, 0);
  const complete = total <= maxChars;
  const one = pending.length === 1;
  const parts = [`**Waiting for your decision** on ${one ? "this call" : `these ${pending.length} calls`}:`];
  pending.forEach((p, i) => {
    parts.push(`**${one ? "" : `${i + 1}\\. `}${escapeMarkdownText(p.name)}**: ${escapeMarkdownText(p.reason)}`);
    if (!complete) return;
    const args = values[i]!;
    if (args.length === 0) parts.push("No arguments\\.");
    for (const { key, text } of args) parts.push(`${escapeMarkdownText(key)}:`, codeBlock(text));
  });
  if (!complete) {
    parts.push(
      `${one ? "Its arguments are" : "Their arguments are"} ${total.toLocaleString("en-US")} characters, more than the chat shows ` +
        `\\(${maxChars.toLocaleString("en-US")}\\)\\. Open the panel to read them whole and decide there; Reject works from here\\.`,
    );
  }
  return { markdown: `\n\n${parts.join("\n\n")}\n\n`, complete };
}
