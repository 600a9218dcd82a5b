/**
 * One tool call: a <details> whose summary names the tool, a short hint of its arguments and its
 * state; the body holds the full arguments and the result (paired by tool_call_id in the store).
 * `ask_clarification` is the agent asking the user, so its question is shown open, not folded.
 */
import type { ToolCallView } from "../model/types.js";
import { h, icon } from "./dom.js";

/** Results can be huge (a `cat` of a log); the panel shows a head, the full text stays in the thread. */
const MAX_RESULT_CHARS = 20_000;

export type CallState = "pending" | "success" | "error";

export function callState(c: ToolCallView): CallState {
  return c.result ? c.result.status : "pending";
}

/** Identity of what a call renders; the list reuses a block whose signature did not change. */
export function callSignature(c: ToolCallView, streaming: boolean): string {
  return [c.id, c.name, c.argsText.length, c.args ? 1 : 0, c.result?.messageId ?? "", c.result?.status ?? "", c.result?.content.length ?? -1, streaming ? 1 : 0].join("|");
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
  for (const k of ["description", "path", "command", "filepaths", "query", "url"]) {
    const v = a[k];
    if (typeof v === "string" && v) return v;
    if (Array.isArray(v) && v.length > 0) return v.map(String).join(", ");
  }
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
  const stateIcon = shown === "pending" ? icon("loading", "codicon-modifier-spin") : shown === "success" ? icon("check") : shown === "error" ? icon("error") : icon("circle-slash");
  const stateLabel = { pending: "running", success: "done", error: "failed", unanswered: "no result" }[shown];

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
        h("div", { class: "tool-label", text: c.result.status === "error" ? "Error" : "Result" }),
        h("pre", { text: clip(c.result.content) }),
      ));
    }
  };
  const brief = hint(c);
  details.append(
    h("summary", {
      attrs: { "aria-label": `Tool ${c.name || "call"}, ${stateLabel}${brief ? `: ${brief}` : ""}` },
      // Before the default action opens it, so the body is there in the frame it opens.
      on: { click: build },
    },
      icon("tools"),
      h("span", { class: "tool-name", text: c.name || "tool" }),
      brief ? h("span", { class: "tool-hint", text: brief }) : null,
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
