/**
 * ApprovalMiddleware (issue 13; DeerFlow's Authorization/Guardrail slot [9] and its human-input
 * protocol): the user decides what runs.
 *
 * - `afterModel`: every tool call of the model's turn is classified (approvals/classify.ts) and
 *   looked up in the run's policy. When any call asks, NONE of the turn's calls runs: the turn
 *   stops (`jumpTo: "end"`) with `pending_approvals` in the thread state, where it survives a
 *   restart, and an `approval_requested` event for the journal. The AI message keeps its tool
 *   calls; DanglingToolCall answers them request-only should anything else ever reach the model.
 * - The decision is a new run (approvals/resume.ts builds its input): rejected calls arrive as
 *   "Rejected by the user: …" tool results and the thread's "Always allow" list
 *   (`approval_always_allow`, in the checkpoint) as input; the approved call ids come through the
 *   run's `configurable` (they hold for that run only, so they are not state). `beforeModel`
 *   then sees the paused turn's calls still unanswered and jumps to the tool node, which runs
 *   exactly those (ToolNode runs the calls without a result), before the model is asked again.
 * - `wrapToolCall` enforces the policy once more where the call runs: `deny` never runs, an
 *   undecided `ask` never runs, and a cleared protected write is marked for the file tools
 *   (`protectedWritesAllowed`), the one way past the trust boundary's protected-path rule.
 *
 * langchain's humanInTheLoopMiddleware is not used: it leaves an unanswered tool call when one
 * call of a parallel batch is rejected (langchain recipe), and it pauses inside the graph with
 * interrupt(), which our runs do not need: a decision is a run like any other, through startRun.
 */
import { createMiddleware } from "langchain";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { PendingApproval } from "../../protocol/approvals.js";
import { StateSchema } from "@langchain/langgraph";
import { AlwaysAllowZ, PendingApprovalsZ } from "../state/threadState.js";
import type { ApprovalMode, ApprovalPolicy } from "../approvals/policy.js";
import { classifyToolCall, type CallClass, type ClassifyContext } from "../approvals/classify.js";
import { RESUME_CONFIG_KEY, type ApprovalResume } from "../approvals/resume.js";

interface ApprovalState {
  messages: BaseMessage[];
  pending_approvals?: PendingApproval[] | null;
  /** Tool names the user chose "Always allow" for, in this thread. */
  approval_always_allow?: string[] | null;
}

/** What the user said yes to: this run's approved call ids (configurable) and the thread's always-allowed tools. */
export interface Consent {
  granted?: readonly string[];
  always?: readonly string[] | null;
}

function consentOf(state: Partial<ApprovalState>, configurable: unknown): Consent {
  const resume = (configurable as Record<string, unknown> | undefined)?.[RESUME_CONFIG_KEY] as ApprovalResume | undefined;
  return { granted: resume?.granted ?? [], always: state.approval_always_allow ?? [] };
}

export interface ApprovalOptions extends ClassifyContext {
  policy: ApprovalPolicy;
  /** Filled here, read by the file tools and ReadBeforeWrite: this run's cleared protected writes. */
  protectedWritesAllowed: Set<string>;
}

export interface Verdict extends CallClass {
  mode: ApprovalMode;
}

/** The mode that applies to one call in this thread: the policy, softened only by the user's own yes. */
export function verdictFor(call: { id?: string; name: string; args?: unknown }, consent: Consent, o: ApprovalOptions): Verdict {
  const cls = classifyToolCall(call, o);
  const mode = o.policy[cls.class];
  if (mode === "deny") return { ...cls, mode };
  if (cls.inert) return { ...cls, mode: "auto" };
  if (cls.preapproved && mode === "ask") return { ...cls, mode: "auto" };
  if (mode === "ask") {
    if (call.id !== undefined && (consent.granted ?? []).includes(call.id)) return { ...cls, mode: "auto" };
    if ((consent.always ?? []).includes(call.name)) return { ...cls, mode: "auto" };
  }
  return { ...cls, mode };
}

/** The last AI message's tool calls that have no result yet, when only results follow it. */
export function unansweredCalls(messages: readonly BaseMessage[]): Array<{ id: string; name: string; args: Record<string, unknown> }> {
  let i = messages.length - 1;
  while (i >= 0 && ToolMessage.isInstance(messages[i])) i--;
  const ai = messages[i];
  if (!ai || !AIMessage.isInstance(ai)) return [];
  const answered = new Set(messages.slice(i + 1).map((m) => (m as ToolMessage).tool_call_id));
  return (ai.tool_calls ?? [])
    .filter((c): c is typeof c & { id: string } => typeof c.id === "string" && !answered.has(c.id))
    .map((c) => ({ id: c.id, name: c.name, args: (c.args ?? {}) as Record<string, unknown> }));
}

/** The result of a call the policy does not let run: an error the model reads and can act on. */
export function refusal(call: { id?: string; name: string }, content: string, errorType: string): ToolMessage {
  return new ToolMessage({
    content,
    tool_call_id: call.id ?? "missing_id",
    name: call.name,
    status: "error",
    additional_kwargs: { deerflow_tool_meta: { status: "error", error_type: errorType, recoverable_by_model: true, source: "middleware" } },
  });
}

/** A `deny`: never run, and the model is told which policy refused it (the lead's and the subagents' text). */
export function deniedResult(call: { id?: string; name: string }, v: Verdict): ToolMessage {
  return refusal(call, `Error: ${call.name} was not run: the approval policy denies ${v.class} calls (${v.reason}).`, "approval_denied");
}

/**
 * The ThreadState channels this middleware reads and writes, declared again here: a middleware's
 * hooks see the channels of its own schema (the same definitions as ThreadState's).
 */
const approvalState = new StateSchema({ pending_approvals: PendingApprovalsZ, approval_always_allow: AlwaysAllowZ });

export function approvalMiddleware(o: ApprovalOptions) {
  return createMiddleware({
    name: "ApprovalMiddleware",
    stateSchema: approvalState,
    afterModel: {
      canJumpTo: ["end"],
      hook: (state, runtime) => {
        const s = state as ApprovalState;
        const last = s.messages.at(-1);
        if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return undefined;
        const asks: PendingApproval[] = [];
        for (const call of last.tool_calls) {
          const v = verdictFor(call, consentOf(s, runtime.configurable), o);
          if (v.mode !== "ask") continue;
          asks.push({
            tool_call_id: call.id ?? "",
            name: call.name,
            args: (call.args ?? {}) as Record<string, unknown>,
            class: v.class,
            reason: v.reason,
            ...(v.mcp ? { mcp: { server: v.mcp.server, tool: v.mcp.tool, source: v.mcp.scope, annotations: { ...v.mcp.annotations } } } : {}),
          });
        }
        if (asks.length === 0) return undefined;
        runtime.writer?.({ type: "approval_requested", approvals: asks });
        return { pending_approvals: asks, jumpTo: "end" };
      },
    },
    beforeModel: {
      canJumpTo: ["tools"],
      // The run carrying a decision: the paused turn's calls are still unanswered (the rejected
      // ones were answered by the run's input), so they run now, before the model is asked.
      hook: (state) => (unansweredCalls((state as ApprovalState).messages).length > 0 ? { jumpTo: "tools" } : undefined),
    },
    wrapToolCall: (request, handler) => {
      const call = request.toolCall;
      const v = verdictFor(call, consentOf(request.state, request.runtime.configurable), o);
      if (v.mode === "deny") {
        return deniedResult(call, v);
      }
      if (v.mode === "ask") {
        // Not reachable through the paused-turn flow; kept so no path runs an undecided call.
        return refusal(call, `Error: ${call.name} was not run: it needs the user's approval (${v.reason}).`, "approval_required");
      }
      if (v.class === "protected" && call.id !== undefined) o.protectedWritesAllowed.add(call.id);
      return handler(request);
    },
  });
}
