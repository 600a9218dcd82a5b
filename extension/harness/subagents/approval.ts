/**
 * The approval policy inside a subagent (issue 14): the same policy and the same classification as
 * the lead's ApprovalMiddleware (middlewares/approval.ts, `verdictFor`), enforced where each call
 * runs. What differs is `ask`: the lead pauses its whole turn in the checkpoint until the user
 * decides, but a subagent has no checkpoint to pause in and runs inside the lead's tool call, so
 * it cannot wait for a decision. Its asking call is refused instead, with a result the subagent
 * can report ("needs approval; not run inside a subagent"), and the lead can then make that call
 * itself, where the user is asked. The thread's "Always allow" rules still count as a yes; a
 * grant never does (it names one call of the lead's). As in the lead: denied tools are not
 * offered, and a call with no name or to an unknown tool gets DeerFlow's error result.
 * DeerFlow's subagents go through the same GuardrailMiddleware as the lead, which never asks.
 */
import { createMiddleware } from "langchain";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { deniedResult, refusal, refusedBeforeAsking, verdictFor, type ApprovalOptions } from "../middlewares/approval.js";
import { readRules } from "../approvals/alwaysAllow.js";
import { malformedCallResult, permittedTools, type ToolNames } from "../approvals/toolNames.js";

/** `alwaysAllowed`: the lead thread's `approval_always_allow` channel as it stands (legacy names are read as no rule). */
export function subagentApprovalMiddleware(o: ApprovalOptions, alwaysAllowed: unknown) {
  const rules = readRules(alwaysAllowed);
  let names: ToolNames | undefined;
  return createMiddleware({
    name: "SubagentApprovalMiddleware",
    wrapModelCall: (request, handler) => {
      const permitted = permittedTools(request.tools ?? [], o.policy);
      names = permitted.names;
      return handler(permitted.offered.length === (request.tools ?? []).length ? request : { ...request, tools: permitted.offered });
    },
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall;
      const known = request.tool !== undefined || (names?.registered.has(call.name) ?? false);
      const bad = malformedCallResult(call, known, names);
      if (bad) return bad;
      const v = verdictFor(call, { rules }, o);
      if (v.mode === "deny") return deniedResult(call, v);
      if (v.mode === "ask") {
        // A call that would be refused anyway gets that error: asking the lead to run it would not help.
        const refused = await refusedBeforeAsking(call, v, request.state, request.tool as StructuredToolInterface | undefined, o);
        if (refused) return refused;
        return refusal(
          call,
          `Error: ${call.name} was not run: it needs the user's approval (${v.reason}), and a subagent cannot ask for it. ` +
            "Report what you would have run; the lead agent can run it where the user is asked.",
          "approval_required",
        );
      }
      if (v.class === "protected" && call.id !== undefined) o.protectedWritesAllowed.add(call.id);
      return handler(request);
    },
  });
}
