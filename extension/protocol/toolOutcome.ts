/**
 * How a tool call ended, as a person reads it (issue 30 item 3): done, failed (with the exit code
 * or the error), or rejected (with the user's reason). One rule for the panel's tool cards and
 * `@deerflow`'s lines, read from the tool message the harness wrote: its `status`, DeerFlow's
 * `deerflow_tool_meta.error_type`, and the exit a command tool records under EXIT_KEY (a bash
 * command that exits non-zero is a *success* to the model, as in DeerFlow, but failed to a person).
 */

/** The prefix of the tool result a rejected call answers the model with (DeerFlow's wording). */
export const REJECTED_PREFIX = "Rejected by the user";

/** additional_kwargs key: a command that did not exit 0 (`code` null when it was killed at its timeout). */
export const EXIT_KEY = "deerflow_exit";

export interface CommandExit {
  code: number | null;
  timed_out: boolean;
}

export type ToolOutcome =
  | { kind: "done" }
  | { kind: "failed"; detail: string }
  | { kind: "rejected"; reason: string };

export interface ToolResultLike {
  status?: string | undefined;
  content: string;
  name?: string | undefined;
  additional_kwargs?: Record<string, unknown> | undefined;
}

const MAX_DETAIL = 160;

function oneLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim()) ?? "";
  const t = line.trim().replace(/^Error:\s*/, "");
  return t.length > MAX_DETAIL ? `${t.slice(0, MAX_DETAIL - 1)}…` : t;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function exitOf(r: ToolResultLike): CommandExit | undefined {
  const e = r.additional_kwargs?.[EXIT_KEY];
  if (isRecord(e) && (typeof e.code === "number" || e.code === null)) return { code: e.code, timed_out: e.timed_out === true };
  // Threads written before EXIT_KEY: the bash result's last line says it (tools/sandbox/output.ts).
  if (r.name === "bash") {
    const m = /\nExit Code: (-?\d+)\s*$/.exec(r.content);
    if (m) return { code: Number(m[1]), timed_out: false };
  }
  return undefined;
}

export function toolOutcome(r: ToolResultLike): ToolOutcome {
  const meta = r.additional_kwargs?.deerflow_tool_meta;
  const rejected = (isRecord(meta) && meta.error_type === "rejected_by_user") || (r.status === "error" && r.content.startsWith(REJECTED_PREFIX));
  if (rejected) {
    const reason = r.content.startsWith(`${REJECTED_PREFIX}:`) ? r.content.slice(REJECTED_PREFIX.length + 1).trim() : r.content.trim();
    return { kind: "rejected", reason: oneLine(reason) || "no reason given" };
  }
  const exit = exitOf(r);
  if (exit) return { kind: "failed", detail: exit.timed_out ? "timed out" : `exit code ${exit.code}` };
  if (r.status === "error") return { kind: "failed", detail: oneLine(r.content) || "error" };
  return { kind: "done" };
}

/** The words a card or a chat line shows: "Failed (exit code 2)", "Rejected: not now". */
export function outcomeLabel(o: ToolOutcome): string {
  switch (o.kind) {
    case "done":
      return "Done";
    case "failed":
      return `Failed (${o.detail})`;
    case "rejected":
      return `Rejected: ${o.reason}`;
  }
}

const WORKSPACE_PREFIX = "/mnt/user-data/workspace";

/**
 * A virtual path as a person reads it in the panel: a file of the workspace by its path in the
 * workspace folder ("src/a.ts", "." for the folder itself); any other path as it is.
 */
export function shownPath(path: string): string {
  if (path === WORKSPACE_PREFIX || path === `${WORKSPACE_PREFIX}/`) return ".";
  return path.startsWith(`${WORKSPACE_PREFIX}/`) ? path.slice(WORKSPACE_PREFIX.length + 1) : path;
}
