/**
 * Top of the panel: the thread title with the thread switcher and "new thread", then the run
 * status line with Cancel. The status line is a live region so a finished or failed run is
 * announced; Cancel is shown only while a run is active (it cancels the run, never the thread).
 * Under it, tokens and estimated cost (issue 15): the last run's (input, output, and cached and
 * reasoning where non-zero) and the thread's total, as the harness summed and priced them; a
 * cost the price table does not know is "cost unknown", never a number. Last, when long-term
 * memory changed for this workspace (issue 21), a line saying what changed, with Open Memory.
 */
import type { WebviewToHost } from "../../extension/protocol/webview.js";
import type { PanelState } from "../store.js";
import { canContinue, isRunActive, runPhase } from "../store.js";
import type { RunPhase } from "../store.js";
import { h, icon, setText } from "./dom.js";
import type { UsageView } from "../../extension/protocol/usage.js";
import { ThreadList, threadLabel } from "./threadList.js";

const PHASE_TEXT: Record<RunPhase, string> = {
  idle: "Ready",
  pending: "Starting…",
  running: "Running…",
  success: "Done",
  error: "Failed",
  timeout: "Timed out",
  interrupted: "Stopped",
};

const PHASE_ICON: Record<RunPhase, string> = {
  idle: "circle-large-outline",
  pending: "loading",
  running: "loading",
  success: "pass",
  error: "error",
  timeout: "watch",
  interrupted: "debug-stop",
};

export class Header {
  readonly root: HTMLElement;
  private readonly title = h("h1", { id: "thread-title", testid: "thread-title", class: "thread-title" });
  private readonly toggle: HTMLButtonElement;
  private readonly list: ThreadList;
  private readonly statusText = h("span", { class: "run-status-text" });
  private readonly statusIcon = h("span", { attrs: { "aria-hidden": "true" } });
  private readonly statusDetail = h("span", { class: "run-status-detail" });
  private readonly status = h("div", { id: "run-status", testid: "run-status", class: "run-status", attrs: { role: "status", "aria-live": "polite" } }, this.statusIcon, this.statusText, this.statusDetail);
  private readonly cancel: HTMLElement;
  private readonly restriction = h("div", { class: "restriction", testid: "restriction", attrs: { hidden: true } });
  /** "Memory updated from this thread: …" (issue 21) with Open Memory; a live region, so it is announced. */
  private readonly memoryText = h("span", { class: "memory-text" });
  private readonly memory: HTMLElement;
  private readonly usageRun = h("span", { class: "usage-run", testid: "usage-run" });
  private readonly usageThread = h("span", { class: "usage-thread", testid: "usage-thread" });
  private readonly usage = h("div", { class: "run-usage", testid: "usage", attrs: { hidden: true } }, this.usageRun, this.usageThread);

  constructor(private readonly post: (m: WebviewToHost) => void) {
    this.list = new ThreadList(post, () => this.setListOpen(false));
    this.toggle = h("button", {
      id: "thread-list-toggle",
      class: "icon-button",
      testid: "thread-list-toggle",
      attrs: { type: "button", "aria-label": "Threads", title: "Threads", "aria-expanded": "false", "aria-controls": "thread-list" },
      on: { click: () => this.setListOpen(this.list.root.hidden) },
    }, icon("list-unordered"));
    this.cancel = h("vscode-button", {
      id: "cancel",
      testid: "cancel",
      attrs: { secondary: true, "aria-label": "Cancel", hidden: true },
      on: { click: () => this.post({ type: "cancel" }) },
    }, icon("debug-stop"), h("span", { text: "Cancel" }));
    const openMemory = h("button", {
      class: "link-button",
      testid: "open-memory",
      attrs: { type: "button", title: "DeerFlow: Open Memory" },
      on: { click: () => this.post({ type: "openMemory" }) },
    }, h("span", { text: "Open Memory" }));
    this.memory = h("div", { class: "memory-line", testid: "memory-line", attrs: { hidden: true, role: "status", "aria-live": "polite" } }, icon("database"), this.memoryText, openMemory);
    this.list.root.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") { this.setListOpen(false); this.toggle.focus(); }
    });
    this.root = h("header", { class: "panel-header" },
      // New thread is the view's own title action (one button, issue 30 item 5).
      h("div", { class: "title-row" }, this.toggle, this.title),
      this.list.root,
      h("div", { class: "run-row" }, this.status, this.cancel),
      this.usage,
      this.restriction,
      this.memory,
    );
  }

  private setListOpen(open: boolean): void {
    this.list.root.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open) this.list.root.querySelector<HTMLElement>("[aria-current=true], button")?.focus();
  }

  update(s: PanelState): void {
    const summary = s.threads.find((t) => t.thread_id === s.threadId);
    const title = s.thread?.title ?? summary?.title ?? null;
    setText(this.title, s.threadId ? threadLabel({ title }) : "DeerFlow");
    this.title.title = this.title.textContent ?? "";
    this.list.update(s.threads, s.threadId);

    const phase = runPhase(s);
    const active = isRunActive(s);
    const run = s.thread?.run;
    const needsApproval = !active && run?.awaitingApproval === true;
    const needsUser = !active && (needsApproval || awaitingAnswer(s));
    // The run ended at its turn budget: done for now, and Continue (continueBar.ts) goes on.
    const capped = !needsUser && canContinue(s);
    this.status.dataset.status = phase;
    this.status.toggleAttribute("data-needs-user", needsUser);
    if (capped) this.status.dataset.stopReason = "turn_capped";
    else delete this.status.dataset.stopReason;
    setText(this.statusText, needsApproval ? "Waiting for your approval" : needsUser ? "Waiting for your answer" : capped ? "Stopped at the turn budget" : PHASE_TEXT[phase]);
    this.statusIcon.className = `codicon codicon-${needsApproval ? "shield" : needsUser ? "question" : capped ? "debug-pause" : PHASE_ICON[phase]}${active ? " codicon-modifier-spin" : ""}`;
    const sandbox = s.status?.sandbox;
    const detail = active && run?.retry ? run.retry
      : sandbox?.state === "starting" ? `Starting ${sandbox.kind === "devcontainer" ? "dev container" : "sandbox"}…`
      : sandbox?.state === "error" ? `Sandbox error${sandbox.detail ? `: ${sandbox.detail}` : ""}`
      : phase === "error" || phase === "timeout" ? (run?.error ?? "")
      : "";
    setText(this.statusDetail, detail);
    this.cancel.hidden = !active;
    this.restriction.hidden = !s.status?.restriction;
    setText(this.restriction, s.status?.restriction ?? "");
    this.memory.hidden = !s.status?.memory;
    setText(this.memoryText, s.status?.memory ?? "");
    const usage = s.thread?.usage;
    setText(this.usageRun, usage?.run ? `Last run: ${describeUsage(usage.run)}` : "");
    setText(this.usageThread, usage?.thread ? `Thread: ${formatTokens(usage.thread.total_tokens)} tokens · ${formatCost(usage.thread)}` : "");
    this.usageRun.hidden = !usage?.run;
    this.usageThread.hidden = !usage?.thread;
    this.usage.hidden = !usage?.run && !usage?.thread;
  }
}

const formatTokens = (n: number): string => n.toLocaleString("en-US");

/** "≈ $0.0053 (est.)" ("≈ 0.042 CNY (est.)" for a model priced in another currency); "cost unknown" when no price is known. */
export function formatCost(u: UsageView): string {
  if (!u.cost) return "cost unknown";
  const a = u.cost.amount;
  // Two significant digits below a cent, never exponent notation ($5.0e-7).
  const text = a === 0 ? "0.00" : a < 0.01 ? a.toLocaleString("en-US", { minimumSignificantDigits: 2, maximumSignificantDigits: 2 }) : a.toFixed(2);
  return u.cost.currency === "USD" ? `≈ $${text} (est.)` : `≈ ${text} ${u.cost.currency} (est.)`;
}

/** "1,234 in (400 cached) · 150 out (30 reasoning) · ≈ $0.0053 (est.)": details only where non-zero. */
export function describeUsage(u: UsageView): string {
  const input = `${formatTokens(u.input_tokens)} in${u.cached_tokens ? ` (${formatTokens(u.cached_tokens)} cached)` : ""}`;
  const output = `${formatTokens(u.output_tokens)} out${u.reasoning_tokens ? ` (${formatTokens(u.reasoning_tokens)} reasoning)` : ""}`;
  return `${input} · ${output} · ${formatCost(u)}`;
}

/** The last AI turn asked for clarification and the user has not answered yet. */
function awaitingAnswer(s: PanelState): boolean {
  const msgs = s.thread?.messages;
  for (let i = (msgs?.length ?? 0) - 1; i >= 0; i--) {
    const m = msgs!.at(i)!;
    if (m.role === "human") return false;
    if (m.role === "ai") return m.toolCalls.some((c) => c.name === "ask_clarification" && c.result !== undefined);
  }
  return false;
}
