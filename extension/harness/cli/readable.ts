/**
 * `deerflow run` on a terminal (issue 30 item 7): the run as a person reads it — the answer's text
 * as it streams, one line per tool call once it has its result, the calls that wait on a decision
 * with the command that decides them, and how the run ended. When stdout is not a terminal, or
 * with `--json`, the CLI prints the JSON Lines instead (run.ts eventPrinter), unchanged.
 *
 * Everything here is the model's or a tool's text shown to the user: control characters other than
 * newline and tab are dropped (escape sequences whole), so a hostile answer cannot move the cursor
 * or retitle the terminal.
 */
import { stripVTControlCharacters } from "node:util";
import type { StoredEvent } from "../store/events.js";
import type { PendingApproval } from "../../protocol/approvals.js";
import { outcomeLabel, shownPath, toolOutcome } from "../../protocol/toolOutcome.js";

export interface ReadableOptions {
  write: (text: string) => void;
  /** ANSI colours (a TTY without NO_COLOR). */
  color: boolean;
  workspace: string;
  threadId: string;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Escape sequences whole (Node's own ANSI matcher), then any other control character. */
function clean(text: string): string {
  return stripVTControlCharacters(text).replace(CONTROL, "");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function quoteArg(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

interface Call {
  name: string;
  args: Record<string, unknown>;
}

/** The one-line gist of a call: its file (workspace files by their path there) or its command. */
function gist(call: Call | undefined): string {
  const a = call?.args ?? {};
  for (const k of ["path", "command", "query", "url", "description"]) {
    const v = a[k];
    if (typeof v === "string" && v) return k === "path" ? shownPath(v) : v;
  }
  if (Array.isArray(a.filepaths)) return a.filepaths.map((x) => shownPath(String(x))).join(", ");
  return "";
}

/** A field the wire may carry as anything: its text when it is a string. */
function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function oneLine(text: string, max = 100): string {
  const t = clean(text).replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

export function readablePrinter(o: ReadableOptions): (e: StoredEvent) => void {
  const paint = (code: string, text: string): string => (o.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const dim = (t: string) => paint("2", t);
  let atLineStart = true;
  const calls = new Map<string, Call>();
  const told = new Set<string>();
  /** AI messages whose text arrived as chunks: their complete copy in `updates` is not printed again. */
  const streamed = new Set<string>();
  const out = (text: string): void => {
    if (!text) return;
    o.write(text);
    atLineStart = text.endsWith("\n");
  };
  /** A whole line of its own, after whatever text was streaming. */
  const line = (text: string): void => out(`${atLineStart ? "" : "\n"}${text}\n`);

  const onMessages = (list: unknown[]): void => {
    for (const m of list) {
      if (!isRecord(m)) continue;
      // A model that does not stream: its answer arrives whole.
      if (m.type === "ai" && typeof m.content === "string" && m.content.trim() && typeof m.id === "string" && !streamed.has(m.id)) {
        streamed.add(m.id);
        line(clean(m.content));
      }
      if (m.type === "ai" && Array.isArray(m.tool_calls)) {
        for (const c of m.tool_calls) {
          if (isRecord(c) && typeof c.id === "string") calls.set(c.id, { name: str(c.name) || "tool", args: isRecord(c.args) ? c.args : {} });
        }
      }
      if (m.type !== "tool" || typeof m.tool_call_id !== "string" || told.has(m.tool_call_id)) continue;
      told.add(m.tool_call_id);
      const call = calls.get(m.tool_call_id);
      const name = clean(typeof m.name === "string" ? m.name : (call?.name ?? "tool"));
      const outcome = toolOutcome({
        content: typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""),
        name,
        status: typeof m.status === "string" ? m.status : undefined,
        additional_kwargs: isRecord(m.additional_kwargs) ? m.additional_kwargs : undefined,
      });
      if (name === "ask_clarification" && typeof m.content === "string") {
        line(paint("33", "? ") + clean(m.content));
        continue;
      }
      const what = oneLine(gist(call));
      const mark = outcome.kind === "done" ? paint("32", "✓") : outcome.kind === "failed" ? paint("31", "✗") : paint("33", "⊘");
      line(`${mark} ${name}${what ? ` ${dim(what)}` : ""}${outcome.kind === "done" ? "" : ` — ${oneLine(outcomeLabel(outcome), 160)}`}`);
    }
  };

  const onEnd = (data: Record<string, unknown>): void => {
    const pending = Array.isArray(data.pending_approvals) ? (data.pending_approvals as PendingApproval[]) : [];
    if (data.stop_reason === "approval" && pending.length > 0) {
      line(paint("33", `Waiting for your decision on ${pending.length === 1 ? "1 call" : `${pending.length} calls`}:`));
      // Whole, never cut: the line below approves exactly these (a cut command could hide its tail).
      for (const p of pending) {
        line(`  ${clean(p.tool_call_id)}  ${clean(p.name)}: ${clean(p.reason)}`);
        line(dim(`    ${clean(JSON.stringify(p.args))}`));
      }
      const base = `deerflow approve --workspace ${quoteArg(o.workspace)} --thread ${o.threadId}`;
      line(`Approve: ${base} --all approve`);
      line(`Reject:  ${base} --all reject --reason "why"`);
      return;
    }
    const usage = isRecord(data.usage) && typeof data.usage.total_tokens === "number" ? dim(` · ${data.usage.total_tokens.toLocaleString("en-US")} tokens`) : "";
    switch (data.status) {
      case "success":
        if (data.stop_reason === "clarification") line(paint("33", "The agent asks you a question (above): answer with deerflow run --thread " + o.threadId + " --prompt \"…\"") + usage);
        else if (data.stop_reason === "turn_capped") line(paint("33", "Stopped at the turn budget") + usage);
        else line(paint("32", "Done") + usage);
        return;
      case "interrupted":
        line(paint("33", "Stopped") + usage);
        return;
      case "timeout":
        line(paint("31", `Timed out${typeof data.error === "string" ? `: ${oneLine(data.error, 200)}` : ""}`) + usage);
        return;
      default:
        line(paint("31", `Failed${typeof data.error === "string" ? `: ${oneLine(data.error, 300)}` : ""}`) + usage);
    }
  };

  return (e: StoredEvent): void => {
    const data: unknown = e.data;
    switch (e.event) {
      case "metadata":
        if (isRecord(data)) line(dim(`DeerFlow · ${clean(str(data.model))} · sandbox ${clean(str(data.sandbox))} · thread ${e.thread_id}`));
        return;
      case "messages":
        if (!Array.isArray(data)) return;
        for (const c of data) {
          // The answer as it streams.
          if (isRecord(c) && c.type === "ai" && typeof c.content === "string" && c.content) {
            if (typeof c.id === "string") streamed.add(c.id);
            out(clean(c.content));
          }
        }
        return;
      case "updates":
        if (!isRecord(data)) return;
        for (const update of Object.values(data)) if (isRecord(update) && Array.isArray(update.messages)) onMessages(update.messages);
        return;
      case "error":
        if (isRecord(data)) line(paint("31", `Error: ${oneLine(str(data.message), 300)}`));
        return;
      case "end":
        if (isRecord(data)) onEnd(data);
        return;
      default:
        return;
    }
  };
}
