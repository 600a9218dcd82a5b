/**
 * A `task` call as a subagent card (issue 14): the description, the subagent type, a live status,
 * the subagent's tokens, its latest words while it runs, its own tool calls (collapsible, drawn by
 * toolCall.ts as the lead's are) and, once it finished, DeerFlow's result text.
 *
 * The card is patched in place (model/tasks.ts replaces the TaskView on every event it changes):
 * the header is text set only when it differs, and the step list reuses each tool-call block
 * whose signature did not change, so an open step or a focused button survives the stream.
 *
 * Without the task's events (a finished run shown after a reload: the snapshot holds the call and
 * its result only), the card reads the call's arguments and the result's `subagent_status` and
 * `subagent_token_usage`; its steps are then not shown.
 */
import type { TaskUsage } from "../../extension/protocol/events.js";
import type { MessageView, TaskView, ToolCallView } from "../model/types.js";
import type { Seq } from "../model/seq.js";
import { h, icon, setText } from "./dom.js";
import { callSignature, renderToolCall } from "./toolCall.js";

/** Status shown on the card: a subagent's own, or why a call never got one. */
export type CardStatus = TaskView["status"] | "pending" | "unanswered";

const LABELS: Record<CardStatus, string> = {
  pending: "starting",
  running: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  timed_out: "timed out",
  unanswered: "no result",
};

const ICONS: Record<CardStatus, [string, string?]> = {
  pending: ["loading", "codicon-modifier-spin"],
  running: ["loading", "codicon-modifier-spin"],
  completed: ["check"],
  failed: ["error"],
  cancelled: ["circle-slash"],
  timed_out: ["watch"],
  unanswered: ["circle-slash"],
};

const MAX_TEXT_CHARS = 4000;
const LIVE_TEXT_CHARS = 400;

export interface TaskCardContext {
  /** The lead's run is over: a call without result or task events will get neither. */
  runEnded: boolean;
  /** Open tool-call ids (shared with the lead's calls). */
  openCalls: Set<string>;
  /** Task ids whose step list the user folded (open by default, so steps are seen as they stream). */
  foldedTasks: Set<string>;
}

function str(v: unknown): string | null {
  return typeof v === "string" && v.trim() ? v : null;
}

/** A string argument already complete in the streamed (partial JSON) arguments. */
function partialArg(argsText: string, key: string): string | null {
  const m = new RegExp(`"${key}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(argsText);
  if (!m) return null;
  try {
    return str(JSON.parse(`"${m[1]}"`));
  } catch {
    return null;
  }
}

const SUBAGENT_STATUSES = new Set<string>(["completed", "failed", "cancelled", "timed_out"]);

export function cardStatus(c: ToolCallView, runEnded: boolean): CardStatus {
  const sub = c.result?.subagent?.status;
  if (sub && SUBAGENT_STATUSES.has(sub)) return sub as CardStatus;
  if (sub === "polling_timed_out") return "timed_out";
  // Events in view say running, but the run is over: its result (if any) is the last word.
  if (c.task) {
    if (c.task.status !== "running" || !runEnded) return c.task.status;
    if (!c.result) return "unanswered";
    return c.result.status === "error" ? "failed" : "completed";
  }
  if (c.result) return c.result.status === "error" ? "failed" : "completed";
  return runEnded ? "unanswered" : "pending";
}

function usageOf(c: ToolCallView): TaskUsage | null {
  return c.task?.usage ?? c.result?.subagent?.usage ?? null;
}

function clip(text: string, max: number, fromEnd = false): string {
  if (text.length <= max) return text;
  return fromEnd ? `…${text.slice(-max)}` : `${text.slice(0, max)}…`;
}

/** What the card says under its header: the result or error once known, else the subagent's latest words. */
function bodyText(c: ToolCallView, status: CardStatus): { kind: "result" | "error" | "live" | "none"; text: string } {
  const t = c.task;
  if (status === "completed") return { kind: "result", text: clip(t?.result ?? c.result?.content ?? "", MAX_TEXT_CHARS) };
  if (status === "failed" || status === "cancelled" || status === "timed_out") {
    return { kind: "error", text: clip(t?.error ?? c.result?.content ?? LABELS[status], MAX_TEXT_CHARS) };
  }
  const last = t ? lastAi(t.steps.messages) : undefined;
  return last?.text ? { kind: "live", text: clip(last.text, LIVE_TEXT_CHARS, true) } : { kind: "none", text: "" };
}

function lastAi(messages: Seq<MessageView>): MessageView | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages.at(i)!.role === "ai") return messages.at(i);
  return undefined;
}

function stepCalls(t: TaskView | undefined): Array<{ call: ToolCallView; streaming: boolean }> {
  if (!t) return [];
  return t.steps.messages.flatMap((m) => (m.role === "ai" ? m.toolCalls.map((call) => ({ call, streaming: m.streaming })) : []));
}

/** Signature of what the card renders: the row reuses the element when it did not change. */
export function taskCardSignature(c: ToolCallView, runEnded: boolean): string {
  return `${callSignature(c, false)}|${runEnded ? 1 : 0}|${c.result?.subagent?.status ?? ""}`;
}

const parts = new WeakMap<HTMLElement, {
  status: HTMLElement;
  statusIcon: HTMLElement;
  statusText: HTMLElement;
  tokens: HTMLElement;
  desc: HTMLElement;
  type: HTMLElement;
  body: HTMLElement;
  steps: HTMLDetailsElement;
  stepsLabel: HTMLElement;
  calls: HTMLElement;
  task: TaskView | undefined;
  sig: string;
}>();
const stepSigs = new WeakMap<HTMLElement, string>();

export function renderTaskCard(c: ToolCallView, ctx: TaskCardContext): HTMLElement {
  const statusIcon = h("span", { class: "task-status-icon" });
  const statusText = h("span", {});
  const status = h("span", { class: "task-status", testid: "task-status" }, statusIcon, statusText);
  const tokens = h("span", { class: "task-tokens", testid: "task-tokens" });
  const desc = h("span", { class: "task-description", testid: "task-description" });
  const type = h("span", { class: "task-type", testid: "task-type" });
  const body = h("div", { class: "task-body", testid: "task-body" });
  const stepsLabel = h("span", {});
  const calls = h("div", { class: "task-calls" });
  const steps = h("details", { class: "task-steps", testid: "task-steps" }, h("summary", {}, stepsLabel), calls);
  steps.addEventListener("toggle", () => {
    if (steps.open) ctx.foldedTasks.delete(c.id);
    else ctx.foldedTasks.add(c.id);
  });
  const card = h("section", { class: "task-card", testid: "task-card", attrs: { "data-task-id": c.id, "data-tool-call-id": c.id } },
    h("div", { class: "task-head" }, icon("hubot"), desc),
    h("div", { class: "task-meta" }, type, status, tokens),
    body,
    steps,
  );
  parts.set(card, { status, statusIcon, statusText, tokens, desc, type, body, steps, stepsLabel, calls, task: undefined, sig: "" });
  patchTaskCard(card, c, ctx);
  return card;
}

/** Brings a card up to date with its call; cheap when nothing it shows changed. */
export function patchTaskCard(card: HTMLElement, c: ToolCallView, ctx: TaskCardContext): void {
  const p = parts.get(card);
  if (!p) return;
  const sig = taskCardSignature(c, ctx.runEnded);
  if (p.task === c.task && p.sig === sig) return;
  p.task = c.task;
  p.sig = sig;

  const args = c.args ?? {};
  const state = cardStatus(c, ctx.runEnded);
  const description = c.task?.description ?? str(args.description) ?? partialArg(c.argsText, "description") ?? "Subagent task";
  const subagentType = c.task?.subagentType ?? str(args.subagent_type) ?? partialArg(c.argsText, "subagent_type") ?? "";
  card.dataset.status = state;
  card.dataset.subagentType = subagentType;
  card.className = `task-card task-${state}`;
  card.setAttribute("aria-label", `Subagent ${subagentType}: ${description}, ${LABELS[state]}`);
  setText(p.desc, description);
  p.desc.title = description;
  setText(p.type, subagentType);
  p.type.hidden = subagentType === "";
  setText(p.statusText, LABELS[state]);
  const [name, extra] = ICONS[state];
  if (p.statusIcon.dataset.icon !== state) {
    p.statusIcon.dataset.icon = state;
    p.statusIcon.replaceChildren(icon(name, extra));
  }

  const usage = usageOf(c);
  setText(p.tokens, usage ? `${usage.total_tokens.toLocaleString("en-US")} tokens` : "");
  if (usage) p.tokens.title = `input ${usage.input_tokens.toLocaleString("en-US")} · output ${usage.output_tokens.toLocaleString("en-US")}`;
  p.tokens.hidden = !usage;

  const b = bodyText(c, state);
  p.body.dataset.kind = b.kind;
  p.body.dataset.testid = b.kind === "result" ? "task-result" : b.kind === "error" ? "task-error" : "task-output";
  setText(p.body, b.text);
  p.body.hidden = b.kind === "none";

  const steps = stepCalls(c.task);
  setText(p.stepsLabel, `Tool calls (${steps.length})`);
  p.steps.hidden = steps.length === 0;
  const open = !ctx.foldedTasks.has(c.id);
  if (p.steps.open !== open) p.steps.open = open;
  // Calls of a finished subagent that never got a result were stopped with it.
  const ended = state !== "running" && state !== "pending";
  const existing = new Map<string, HTMLElement>();
  for (const el of Array.from(p.calls.children) as HTMLElement[]) existing.set(el.dataset.toolCallId ?? "", el);
  const next = steps.map(({ call, streaming }, i) => {
    const id = call.id || `${c.id}#${i}`;
    const s = callSignature(call, streaming) + (ended ? "|ended" : "");
    const old = existing.get(id);
    if (old && stepSigs.get(old) === s) return old;
    const el = renderToolCall({ ...call, id }, ended && !streaming, ctx.openCalls);
    stepSigs.set(el, s);
    return el;
  });
  if (next.length !== p.calls.children.length || next.some((el, i) => p.calls.children[i] !== el)) p.calls.replaceChildren(...next);
}
