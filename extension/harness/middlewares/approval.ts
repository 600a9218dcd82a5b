/**
 * ApprovalMiddleware (issue 13; DeerFlow's Authorization/Guardrail slot [9] and its human-input
 * protocol): the user decides what runs.
 *
 * - `wrapModelCall`: tools whose class the policy denies are not offered to the model at all
 *   (approvals/toolNames.ts permittedTools); the names of what the agent has are kept for the
 *   calls that follow.
 * - `afterModel`: first the turn's tool-call ids are made unique in the thread
 *   (approvals/callIds.ts), so no decision can mean two calls or ride on an older one. A call with
 *   no name or to an unknown tool never asks (approvals/toolNames.ts gives it DeerFlow's error
 *   result). Every other call is classified (approvals/classify.ts) and looked up in the run's
 *   policy. When any call asks, NONE of the turn's calls runs: the turn stops (`jumpTo: "end"`)
 *   with `pending_approvals` in the thread state, where it survives a restart, and an
 *   `approval_requested` event for the journal. A turn never waits on more calls than a decision
 *   may carry (DECISION_LIMITS.maxPending): the excess gets an error result instead.
 * - The decision is a new run (approvals/resume.ts builds its input): rejected calls arrive as
 *   "Rejected by the user: …" tool results and the thread's "Always allow" rules as input; the
 *   yes comes through the run's `configurable` as grants of the paused calls' fingerprints
 *   (approvals/fingerprint.ts: AI message, index, hash of name and arguments, sandbox kind), for
 *   that run only, each consumed when its call runs. `beforeModel` then sees the paused turn's
 *   calls still unanswered: if every asking one is covered, it jumps to the tool node, which runs
 *   exactly those; if not (the sandbox kind changed since the card, a card from before
 *   fingerprints, ids a legacy turn shared), the turn is paused again with fresh cards.
 * - `wrapToolCall` enforces all of it once more where the call runs: a malformed call gets its
 *   error, `deny` never runs, an `ask` runs only on an unused grant of exactly this call or a rule
 *   that covers it, and a cleared protected write is marked for the file tools
 *   (`protectedWritesAllowed`), the one way past the trust boundary's protected-path rule.
 *
 * langchain's humanInTheLoopMiddleware is not used: it leaves an unanswered tool call when one
 * call of a parallel batch is rejected (langchain recipe), and it pauses inside the graph with
 * interrupt(), which our runs do not need: a decision is a run like any other, through startRun.
 */
import { createMiddleware } from "langchain";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage, ToolCall } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { preflightRefusal, type PreflightOptions } from "../approvals/preflight.js";
import type { AlwaysAllowRule, PendingApproval } from "../../protocol/approvals.js";
import { DECISION_LIMITS } from "../../protocol/approvalLimits.js";
import { StateSchema } from "@langchain/langgraph";
import { AlwaysAllowZ, PendingApprovalsZ } from "../state/threadState.js";
import type { ApprovalMode, ApprovalPolicy } from "../approvals/policy.js";
import { classifyToolCall, type CallClass, type ClassifyContext } from "../approvals/classify.js";
import { RESUME_CONFIG_KEY, type ApprovalResume } from "../approvals/resume.js";
import { callHash, grantKey, type CallPosition } from "../approvals/fingerprint.js";
import { locateCall, renameCallIds } from "../approvals/callIds.js";
import { alwaysAllowFor, readRules, ruleCovers } from "../approvals/alwaysAllow.js";
import { hasName, malformedCallResult, permittedTools, type ToolNames } from "../approvals/toolNames.js";
import { refusal } from "../approvals/refusal.js";

export { refusal } from "../approvals/refusal.js";

interface ApprovalState {
  messages: BaseMessage[];
  pending_approvals?: PendingApproval[] | null;
  /** The thread's "Always allow" rules (legacy tool names are read as none). */
  approval_always_allow?: unknown[] | null;
}

/** What the user said yes to: this run's grants (configurable), those used, and the thread's rules. */
export interface Consent {
  granted?: readonly string[];
  consumed?: ReadonlySet<string>;
  rules?: readonly AlwaysAllowRule[];
}

function consentOf(state: Partial<ApprovalState>, configurable: unknown, consumed: ReadonlySet<string>): Consent {
  const resume = (configurable as Record<string, unknown> | undefined)?.[RESUME_CONFIG_KEY] as ApprovalResume | undefined;
  return { granted: resume?.granted ?? [], consumed, rules: readRules(state.approval_always_allow) };
}

export interface ApprovalOptions extends ClassifyContext {
  policy: ApprovalPolicy;
  /**
   * Deferred MCP tools not promoted in this state (issue 23; middlewares/deferredToolFilter.ts,
   * inner to this one, refuses their calls with DeerFlow's error): a call to one is never asked
   * about, since the user's yes could not make it run.
   */
  deferredHidden?: (state: unknown) => ReadonlySet<string>;
  /** Filled here, read by the file tools and ReadBeforeWrite: this run's cleared protected writes. */
  protectedWritesAllowed: Set<string>;
  /**
   * The checks that would refuse an asking call where it runs (approvals/preflight.ts): such a
   * call is answered with its error at once, never offered for approval. Absent → no preflight.
   */
  preflight?: PreflightOptions;
}

/**
 * An asking call's answer when it would be refused anyway, once approved (approvals/preflight.ts);
 * undefined when the user should be asked.
 */
export function refusedBeforeAsking(call: ToolCall, v: CallClass, state: unknown, tool: StructuredToolInterface | undefined, o: ApprovalOptions): Promise<ToolMessage | undefined> {
  return o.preflight ? preflightRefusal(call, v, state, tool, o.preflight) : Promise.resolve(undefined);
}

export interface Verdict extends CallClass {
  mode: ApprovalMode;
  /** The grant this yes came from: consumed when the call runs. */
  grant?: string;
}

/**
 * The mode that applies to one call in this thread: the policy, softened only by the user's own
 * yes: a grant of exactly this call at `at` in this sandbox kind, unused, or a rule covering it.
 */
export function verdictFor(call: { id?: string; name: string; args?: unknown }, consent: Consent, o: ApprovalOptions, at?: CallPosition): Verdict {
  const cls = classifyToolCall(call, o);
  const mode = o.policy[cls.class];
  if (mode === "deny") return { ...cls, mode };
  if (cls.inert) return { ...cls, mode: "auto" };
  if (cls.preapproved && mode === "ask") return { ...cls, mode: "auto" };
  if (mode === "ask") {
    if (at) {
      const grant = grantKey(at, callHash(call.name, call.args ?? {}), o.sandboxKind);
      if ((consent.granted ?? []).includes(grant) && !consent.consumed?.has(grant)) return { ...cls, mode: "auto", grant };
    }
    if ((consent.rules ?? []).some((r) => ruleCovers(r, call, cls.class, o.sandboxKind))) return { ...cls, mode: "auto" };
  }
  return { ...cls, mode };
}

/** The last AI message's index when only tool results follow it, and its calls that have none yet. */
export function unansweredCalls(messages: readonly BaseMessage[]): Array<{ id: string; name: string; args: Record<string, unknown> }> {
  return unansweredAt(messages)?.calls ?? [];
}

function unansweredAt(messages: readonly BaseMessage[]): { at: number; calls: Array<{ id: string; name: string; args: Record<string, unknown> }> } | undefined {
  let i = messages.length - 1;
  while (i >= 0 && ToolMessage.isInstance(messages[i])) i--;
  const ai = messages[i];
  if (!ai || !AIMessage.isInstance(ai)) return undefined;
  const answered = new Set(messages.slice(i + 1).map((m) => (m as ToolMessage).tool_call_id));
  const calls = (ai.tool_calls ?? [])
    .filter((c): c is typeof c & { id: string } => typeof c.id === "string" && !answered.has(c.id))
    .map((c) => ({ id: c.id, name: c.name, args: (c.args ?? {}) as Record<string, unknown> }));
  return calls.length > 0 ? { at: i, calls } : undefined;
}

/** A `deny`: never run, and the model is told which policy refused it (the lead's and the subagents' text). */
export function deniedResult(call: { id?: string; name: string }, v: Verdict): ToolMessage {
  return refusal(call, `Error: ${call.name} was not run: the approval policy denies ${v.class} calls (${v.reason}).`, "approval_denied");
}

function overflowResult(call: { id?: string; name: string }): ToolMessage {
  const max = DECISION_LIMITS.maxPending;
  return refusal(
    call,
    `Error: ${call.name} was not run: more than ${max} calls of this turn need the user's approval, and at most ${max} can wait for one decision. Make fewer calls at a time.`,
    "approval_overflow",
  );
}

interface Pause {
  asks: PendingApproval[];
  /** Results given at the pause: malformed calls, and asking calls beyond what one decision carries. */
  answers: ToolMessage[];
}

/** What the agent has, as its last model request carried it: the names, and the tools (their schemas). */
interface AgentTools {
  names: ToolNames;
  byName: ReadonlyMap<string, StructuredToolInterface>;
}

/**
 * What a turn waits on, under `consent`: its asking calls (only those in `only`, when given), as
 * cards for this sandbox kind; undefined when none asks. An asking call the preflight refuses is
 * answered with its error instead (with the pause; without one, wrapToolCall answers it the same way).
 */
async function pauseFor(
  ai: AIMessage,
  state: unknown,
  consent: Consent,
  o: ApprovalOptions,
  tools: AgentTools | undefined,
  only?: ReadonlySet<string>,
  hidden?: ReadonlySet<string>,
): Promise<Pause | undefined> {
  const asks: PendingApproval[] = [];
  const answers: ToolMessage[] = [];
  const messageId = ai.id ?? "";
  const names = tools?.names;
  for (const [index, call] of (ai.tool_calls ?? []).entries()) {
    if (only && !(typeof call.id === "string" && only.has(call.id))) continue;
    if (hidden?.has(call.name)) continue;
    const bad = malformedCallResult(call, names ? names.registered.has(call.name) : true, names);
    if (bad) {
      answers.push(bad);
      continue;
    }
    const v = verdictFor(call, consent, o, { messageId, index });
    if (v.mode !== "ask") continue;
    const refused = await refusedBeforeAsking(call, v, state, tools?.byName.get(call.name), o);
    if (refused) {
      answers.push(refused);
      continue;
    }
    if (asks.length >= DECISION_LIMITS.maxPending) {
      answers.push(overflowResult(call));
      continue;
    }
    const args = (call.args ?? {}) as Record<string, unknown>;
    const always = alwaysAllowFor(call, v.class, o.sandboxKind);
    asks.push({
      tool_call_id: call.id ?? "",
      name: call.name,
      args,
      class: v.class,
      reason: v.reason,
      message_id: messageId,
      index,
      fingerprint: callHash(call.name, args),
      sandbox: o.sandboxKind,
      ...(always ? { always_allow: always } : {}),
      ...(v.mcp ? { mcp: { server: v.mcp.server, tool: v.mcp.tool, source: v.mcp.scope, annotations: { ...v.mcp.annotations } } } : {}),
    });
  }
  return asks.length > 0 ? { asks, answers } : undefined;
}

/**
 * The ThreadState channels this middleware reads and writes, declared again here: a middleware's
 * hooks see the channels of its own schema (the same definitions as ThreadState's).
 */
const approvalState = new StateSchema({ pending_approvals: PendingApprovalsZ, approval_always_allow: AlwaysAllowZ });

export function approvalMiddleware(o: ApprovalOptions) {
  // One agent per run: what this run's model was offered, and the grants it has used.
  let tools: AgentTools | undefined;
  const consumed = new Set<string>();
  const pause = (p: Pause, writer: ((chunk: unknown) => void) | undefined, messages: BaseMessage[]) => {
    writer?.({ type: "approval_requested", approvals: p.asks });
    return { messages: [...messages, ...p.answers], pending_approvals: p.asks, jumpTo: "end" as const };
  };
  return createMiddleware({
    name: "ApprovalMiddleware",
    stateSchema: approvalState,
    wrapModelCall: (request, handler) => {
      const permitted = permittedTools(request.tools ?? [], o.policy);
      const byName = new Map<string, StructuredToolInterface>();
      for (const t of request.tools ?? []) {
        const name = (t as { name?: unknown }).name;
        if (typeof name === "string" && typeof (t as { invoke?: unknown }).invoke === "function") byName.set(name, t as StructuredToolInterface);
      }
      tools = { names: permitted.names, byName };
      return handler(permitted.offered.length === (request.tools ?? []).length ? request : { ...request, tools: permitted.offered });
    },
    afterModel: {
      canJumpTo: ["end"],
      hook: async (state, runtime) => {
        const s = state as ApprovalState;
        const at = s.messages.length - 1;
        const last = s.messages[at];
        if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return undefined;
        const renamed = renameCallIds(s.messages, at);
        const p = await pauseFor(renamed ?? last, state, consentOf(s, runtime.configurable, consumed), o, tools, undefined, o.deferredHidden?.(state));
        if (!p) return renamed ? { messages: [renamed] } : undefined;
        return pause(p, runtime.writer, renamed ? [renamed] : []);
      },
    },
    beforeModel: {
      canJumpTo: ["tools", "end"],
      // The run carrying a decision: the paused turn's calls are still unanswered (the rejected
      // ones were answered by the run's input). They run now, before the model is asked, when
      // the decision covers every one that asks; otherwise the user is asked again.
      hook: async (state, runtime) => {
        const s = state as ApprovalState;
        const open = unansweredAt(s.messages);
        if (!open) return undefined;
        const ai = s.messages[open.at] as AIMessage;
        // A turn paused before ids were unique: what its decision meant is unknown, so ask again.
        const renamed = renameCallIds(s.messages, open.at);
        const consent = consentOf(s, runtime.configurable, consumed);
        const hidden = o.deferredHidden?.(state);
        if (!renamed) {
          const covered = open.calls.every((call) => {
            const index = (ai.tool_calls ?? []).findIndex((c) => c.id === call.id);
            return !hasName(call.name) || hidden?.has(call.name) === true || verdictFor(call, consent, o, { messageId: ai.id ?? "", index }).mode !== "ask";
          });
          if (covered) return { jumpTo: "tools" as const };
        }
        const turn = renamed ?? ai;
        const stillOpen = renamed ? unansweredAt([...s.messages.slice(0, open.at), renamed, ...s.messages.slice(open.at + 1)]) : open;
        const ids = new Set((stillOpen?.calls ?? []).map((c) => c.id));
        const p = await pauseFor(turn, state, { rules: consent.rules ?? [] }, o, tools, ids, hidden);
        if (!p) return { messages: renamed ? [renamed] : [], jumpTo: "tools" as const };
        return pause(p, runtime.writer, renamed ? [renamed] : []);
      },
    },
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall;
      const names = tools?.names;
      const known = request.tool !== undefined || (names?.registered.has(call.name) ?? false);
      // Without a model request in this run (a decision run) only a missing name is answered here;
      // any other call meets the policy below (fail closed): an unknown tool's grant reaches ToolNode, which answers it.
      const bad = malformedCallResult(call, known, names);
      if (bad) return bad;
      // DeferredToolFilter answers it (never runs it): DeerFlow's error tells the model what to do.
      if (o.deferredHidden?.(request.state).has(call.name)) return handler(request);
      const messages = (request.state as Partial<ApprovalState>).messages ?? [];
      const v = verdictFor(call, consentOf(request.state, request.runtime.configurable, consumed), o, locateCall(messages, call.id));
      if (v.mode === "deny") return deniedResult(call, v);
      if (v.mode === "ask") {
        // Never run without a yes: a call the preflight refuses gets that error, any other this one.
        const refused = await refusedBeforeAsking(call, v, request.state, (request.tool as StructuredToolInterface | undefined) ?? tools?.byName.get(call.name), o);
        return refused ?? refusal(call, `Error: ${call.name} was not run: it needs the user's approval (${v.reason}).`, "approval_required");
      }
      // Consumed before the call starts: the same yes never runs a second call, even in parallel.
      if (v.grant) consumed.add(v.grant);
      if (v.class === "protected" && call.id !== undefined) o.protectedWritesAllowed.add(call.id);
      return handler(request);
    },
  });
}
