/**
 * One tool call: a <details> whose summary names the tool, a short hint of its arguments and its
 * state; the body holds the full arguments and the result (paired by tool_call_id in the store).
 * `ask_clarification` is the agent asking the user, so its question is shown open, not folded.
 */
import type { ToolCallView } from "../model/types.js";
import { outcomeLabel, shownPath } from "../../extension/protocol/toolOutcome.js";
import { h, icon } from "./dom.js";

/** Results can be huge (a `cat` of a log); the panel shows a head, the full text stays in the thread. */
const MAX_RESULT_CHARS = 20_000;

export type CallState = "pending" | "success" | "error" | "rejected";

/** A result's state as a person reads it: a bash exit 254 is an error, a user's no is "rejected". */
export function callState(c: ToolCallView): CallState {
  if (!c.result) return "pending";
  const kind = c.result.outcome.kind;
  return kind === "done" ? "success" : kind === "failed" ? "error" : "rejected";
}

/** Identity of what a call renders; the list reuses a block whose signature did not change. */
export function callSignature(c: ToolCallView, streaming: boolean): string {
  return [c.id, c.name, c.argsText.length, c.args ? 1 : 0, c.result?.messageId ?? "", c.result?.status ?? "", c.result ? outcomeLabel(c.result.outcome) : "", c.result?.content.length ?? -1, streaming ? 1 : 0].join("|");
}

function argsText(c: ToolCallView): string {
  if (c.args) return JSON.stringify(c.args, null, 2);
  return c.argsText;
}

/** The most telling argument, for the one-line summary (DeerFlow tools carry a `description`). */
function hint(c: ToolCallView): string {
  const a = c.args;
  if (!a) {
    // Still streaming: the arguments are partial JSON; a finished description string is enough.
    const m = /"(?:description|path|command)"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(c.argsText);
    return m?.[1] ?? "";
  }
  for (const k of ["description", "command", "query", "url"]) {
    const v = a[k];
    if (typeof v === "string" && v) return v;
  }
  return "";
}

/** The file(s) a call works on, workspace files by their path in the folder (the arguments keep the real ones). */
function target(c: ToolCallView): string {
  const a = c.args;
  if (!a) return "";
  if (typeof a.path === "string" && a.path) return shownPath(a.path);
  if (Array.isArray(a.filepaths) && a.filepaths.length > 0) return a.filepaths.map((x) => shownPath(String(x))).join(", ");
  return "";
}

function clip(text: string): string {
  if (text.length <= MAX_RESULT_CHARS) return text;
  return `${text.slice(0, MAX_RESULT_CHARS)}\n… (${text.length - MAX_RESULT_CHARS} more characters)`;
}

export function renderToolCall(c: ToolCallView, runEnded: boolean, open: Set<string>): HTMLElement {
  const state = callState(c);
  // A call without a result after its run ended was never answered (cancel, crash).
  const shown = state === "pending" && runEnded ? "unanswered" : state;
  const stateIcon = { pending: () => icon("loading", "codicon-modifier-spin"), success: () => icon("check"), error: () => icon("error"), rejected: () => icon("circle-slash"), unanswered: () => icon("dash") }[shown]();
  const outcome = c.result?.outcome;
  // Words, not only an icon: "Failed (exit code 254)", "Rejected: <the user's reason>".
  const stateText = outcome && outcome.kind !== "done" ? outcomeLabel(outcome) : undefined;
  const stateLabel = outcome?.kind === "failed" ? `failed (${outcome.detail})`
    : outcome?.kind === "rejected" ? `rejected: ${outcome.reason}`
    : { pending: "running", success: "done", error: "failed", rejected: "rejected", unanswered: "no result" }[shown];

  if (c.name === "ask_clarification" && c.result) {
    return h("div", { class: "clarification", testid: "clarification", attrs: { "data-tool-call-id": c.id } },
      h("div", { class: "clarification-head" }, icon("question"), h("span", { text: "The agent needs your answer" })),
      h("div", { class: "clarification-body", text: c.result.content }),
    );
  }

  const details = h("details", {
    class: `tool-call tool-${shown}`,
    testid: "tool-call",
    attrs: { "data-tool-call-id": c.id, "data-tool-name": c.name, "data-status": shown },
  });
  // The body (arguments and result, up to MAX_RESULT_CHARS) is built when the call is opened:
  // most calls are never opened, and a long thread's rows carry dozens of them each, so building
  // every body up front was most of the DOM (and the time) of showing such a thread.
  let built = false;
  const build = (): void => {
    if (built) return;
    built = true;
    details.append(
      h("div", { class: "tool-section", testid: "tool-args" },
        h("div", { class: "tool-label", text: "Arguments" }),
        h("pre", { text: argsText(c) || "{}" }),
      ),
    );
    if (c.result) {
      details.append(h("div", { class: "tool-section", testid: "tool-result" },
        h("div", { class: "tool-label", text: c.result.outcome.kind === "rejected" ? "Rejected" : c.result.outcome.kind === "failed" ? "Error" : "Result" }),
        h("pre", { text: clip(c.result.content) }),
      ));
    }
  };
  const brief = hint(c);
  const file = target(c);
  details.append(
    h("summary", {
      attrs: { "aria-label": `Tool ${c.name || "call"}${file ? ` ${file}` : ""}, ${stateLabel}${brief ? `: ${brief}` : ""}` },
      // Before the default action opens it, so the body is there in the frame it opens.
      on: { click: build },
    },
      icon("tools"),
      h("span", { class: "tool-name", text: c.name || "tool" }),
      file ? h("span", { class: "tool-target", testid: "tool-target", text: file, attrs: { title: file } }) : null,
      brief ? h("span", { class: "tool-hint", text: brief }) : null,
      stateText ? h("span", { class: "tool-outcome", testid: "tool-outcome", text: stateText, attrs: { title: stateText } }) : null,
      h("span", { class: "tool-state", attrs: { title: stateLabel } }, stateIcon),
    ),
  );
  if (open.has(c.id)) {
    build();
    details.open = true;
  }
  details.addEventListener("toggle", () => {
    if (details.open) {
      build();
      open.add(c.id);
    } else {
      open.delete(c.id);
    }
  });
  return details;
}
