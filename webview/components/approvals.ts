/**
 * Approval cards (issue 13): one per tool call the shown thread waits on — the tool, its
 * arguments (long values collapsed), its class and why it asks — with Approve, Reject (optional
 * reason), the "Always allow" the harness offers for it, in its words (issue 21: a bash command
 * prefix and where it runs, a tool's ordinary writes; none for a protected write, which the card
 * says), and Open Diff for an edit. A batch gets Approve all / Reject all. Choices are collected here and sent as ONE `decide` once every pending call
 * has one (the harness requires the whole batch in one decision); until then the bar says which
 * remain. The cards are rebuilt from each `approvals` message (the host sends one after every
 * reload, thread switch and decision), keeping choices for calls still pending.
 */
import type { ApprovalDecision, PendingApproval } from "../../extension/protocol/approvals.js";
import type { WebviewToHost } from "../../extension/protocol/webview.js";
import { DECISION_LIMITS } from "../../extension/protocol/approvalLimits.js";
import { h, icon, setText } from "./dom.js";

const CLASS_ICON: Record<string, string> = { read: "eye", write: "edit", protected: "shield", shell: "terminal", mcp: "plug", web: "globe", other: "extensions" };
const DIFFABLE = new Set(["write_file", "str_replace"]);
/** Longer (or more lines) than this, an argument value is collapsed under its first line. */
const SHORT_CHARS = 160;
const SHORT_LINES = 3;

function button(label: string, testid: string, onClick: () => void, secondary = false, iconName?: string): HTMLElement {
  return h("vscode-button", { testid, attrs: { "aria-label": label, title: label, secondary }, on: { click: onClick } },
    iconName ? icon(iconName) : null, h("span", { text: label }));
}

function argValue(value: unknown): HTMLElement {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2) ?? String(value);
  const lines = text.split("\n");
  if (text.length <= SHORT_CHARS && lines.length <= SHORT_LINES) return h("code", { class: "approval-arg-value", text });
  const first = lines[0]!.length > 80 ? `${lines[0]!.slice(0, 79)}…` : lines[0]!;
  return h("details", { class: "approval-arg-long" },
    h("summary", {}, h("code", { text: first }), h("span", { class: "approval-arg-size", text: ` (${lines.length} lines, ${text.length} chars)` })),
    h("pre", { class: "approval-arg-full", text }));
}

/** An MCP call's server, its own tool name, where the server is configured, and its hints (shown, never trusted to skip the card). */
function mcpLine(m: NonNullable<PendingApproval["mcp"]>): HTMLElement {
  const a = m.annotations ?? {};
  const hints = [
    a.readOnlyHint ? ["read-only", ""] : null,
    a.destructiveHint ? ["destructive", " destructive"] : null,
    a.idempotentHint ? ["idempotent", ""] : null,
    a.openWorldHint ? ["open world", ""] : null,
  ].filter((x): x is string[] => x !== null);
  return h("p", { class: "approval-mcp-line", testid: "approval-mcp", attrs: { "data-server": m.server, "data-mcp-tool": m.tool } },
    h("span", {}, "MCP server ", h("strong", { testid: "approval-mcp-server", text: m.server }), ` (${m.source === "user" ? "your configuration" : "this workspace's configuration"})`),
    h("span", {}, "tool ", h("code", { testid: "approval-mcp-tool", text: m.tool })),
    ...hints.map(([label, cls]) => h("span", { class: `approval-mcp-hint${cls}`, testid: "approval-mcp-hint", attrs: { title: "The server's own hint: shown, not trusted" }, text: label! })));
}

const lowerFirst = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1);

/** A button whose label (the rule's scope, long) wraps inside a narrow panel instead of being cut. */
function wrapping(b: HTMLElement): HTMLElement {
  b.classList.add("approval-always");
  return b;
}

export class ApprovalCards {
  readonly root = h("section", { id: "approvals", testid: "approvals", class: "approvals", attrs: { "aria-label": "Tool calls waiting for approval", hidden: true } });
  private readonly list = h("ol", { class: "approval-list" });
  private readonly bar = h("div", { class: "approval-bar", testid: "approval-bar" });
  private readonly remaining = h("span", { class: "approval-remaining", testid: "approval-remaining", attrs: { role: "status" } });
  private threadId = "";
  private pending: PendingApproval[] = [];
  private readonly choices = new Map<string, ApprovalDecision>();
  /** Reasons typed but not yet used: a redraw (another card decided) must not lose them. */
  private readonly reasons = new Map<string, string>();
  private sending = false;

  constructor(private readonly post: (m: WebviewToHost) => void) {
    this.bar.append(this.remaining,
      h("span", { class: "approval-batch" },
        button("Approve all", "approve-all", () => this.decideAll("approve"), false, "check-all"),
        button("Reject all", "reject-all", () => this.decideAll("reject"), true, "close-all")));
    this.root.append(h("div", { class: "approvals-head" }, icon("bell-dot"), h("span", { text: "DeerFlow needs your approval" })), this.bar, this.list);
  }

  /** The host's word on what the thread waits on. */
  show(threadId: string, pending: PendingApproval[]): void {
    const ids = new Set(pending.map((p) => p.tool_call_id));
    if (threadId !== this.threadId) this.choices.clear();
    if (threadId !== this.threadId) this.reasons.clear();
    for (const id of [...this.choices.keys()]) if (!ids.has(id)) this.choices.delete(id);
    this.threadId = threadId;
    this.pending = pending;
    // A new list (decided, failed to send, or another thread) ends any sending state.
    this.sending = false;
    this.draw();
  }

  private choose(call: PendingApproval, decision: ApprovalDecision | undefined): void {
    if (this.sending) return;
    if (decision) this.choices.set(call.tool_call_id, decision);
    else this.choices.delete(call.tool_call_id);
    this.submitIfComplete();
  }

  private decideAll(decision: "approve" | "reject"): void {
    if (this.sending) return;
    for (const p of this.pending) if (!this.choices.has(p.tool_call_id)) this.choices.set(p.tool_call_id, { tool_call_id: p.tool_call_id, decision });
    this.submitIfComplete();
  }

  private submitIfComplete(): void {
    // One decision per id: calls of a turn paused before ids were unique may share one (the harness asks again for those).
    const decisions = [...new Set(this.pending.map((p) => p.tool_call_id))].map((id) => this.choices.get(id));
    if (decisions.length > 0 && decisions.every((d): d is ApprovalDecision => d !== undefined)) {
      this.sending = true;
      this.post({ type: "decide", threadId: this.threadId, decisions });
    }
    this.draw();
  }

  private draw(): void {
    this.root.hidden = this.pending.length === 0;
    // A single call is decided on its card; the bar is for a batch (and the sending line).
    this.bar.hidden = this.pending.length <= 1 && !this.sending;
    this.root.classList.toggle("sending", this.sending);
    this.list.replaceChildren(...this.pending.map((p) => this.card(p)));
    const undecided = this.pending.filter((p) => !this.choices.has(p.tool_call_id));
    const text = this.sending
      ? "Sending your decision…"
      : this.pending.length <= 1
        ? ""
        : undecided.length === this.pending.length
          ? `${this.pending.length} calls wait for your decision; they are sent together.`
          : `${this.pending.length - undecided.length} of ${this.pending.length} decided; waiting on: ${undecided.map((p) => p.name).join(", ")}`;
    setText(this.remaining, text);
    for (const b of Array.from(this.bar.querySelectorAll("vscode-button"))) b.toggleAttribute("disabled", this.sending);
  }

  private card(p: PendingApproval): HTMLElement {
    const chosen = this.choices.get(p.tool_call_id);
    const reason = h("input", {
      class: "approval-reason",
      testid: "reject-reason",
      attrs: { type: "text", placeholder: "Reason for rejecting (optional)", "aria-label": `Reason for rejecting ${p.name}`, maxlength: String(DECISION_LIMITS.maxReasonChars), value: this.reasons.get(p.tool_call_id) },
      on: { input: () => this.reasons.set(p.tool_call_id, reason.value) },
    });
    const args = h("dl", { class: "approval-args" }, ...Object.entries(p.args).flatMap(([k, v]) => [h("dt", { text: k }), h("dd", {}, argValue(v))]));
    const actions = chosen
      ? h("div", { class: "approval-chosen", testid: "approval-chosen" },
          icon(chosen.decision === "approve" ? "check" : "close"),
          h("span", { text: chosen.decision === "approve" ? (chosen.always_allow && p.always_allow ? `Approved (${lowerFirst(p.always_allow.label)})` : "Approved") : `Rejected${chosen.reason ? `: ${chosen.reason}` : ""}` }),
          this.sending ? null : button("Change", "change-decision", () => this.choose(p, undefined), true))
      : h("div", { class: "approval-actions" },
          button("Approve", "approve", () => this.choose(p, { tool_call_id: p.tool_call_id, decision: "approve" }), false, "check"),
          button("Reject", "reject", () => {
            const why = reason.value.trim();
            this.choose(p, { tool_call_id: p.tool_call_id, decision: "reject", ...(why ? { reason: why } : {}) });
          }, true, "close"),
          p.always_allow
            ? wrapping(button(p.always_allow.label, "always-allow", () => this.choose(p, { tool_call_id: p.tool_call_id, decision: "approve", always_allow: true }), true))
            : h("span", { class: "approval-once", testid: "approve-once-only", text: p.class === "protected" ? "A protected write is asked every time." : "This call can be approved only once." }),
          DIFFABLE.has(p.name) ? button("Open Diff", "open-proposed-diff", () => this.post({ type: "openProposedDiff", threadId: this.threadId, toolCallId: p.tool_call_id }), true, "diff") : null,
          reason);
    return h("li", { class: `approval-card approval-${p.class}`, testid: "approval-card", attrs: { "data-tool-call-id": p.tool_call_id, "data-tool": p.name, "data-decision": chosen?.decision } },
      h("div", { class: "approval-title" }, icon(CLASS_ICON[p.class] ?? "question"), h("strong", { text: p.name }), h("span", { class: "approval-class", testid: "approval-class", text: p.class })),
      h("p", { class: "approval-why", text: p.reason }),
      p.mcp ? mcpLine(p.mcp) : null,
      args,
      actions);
  }
}
