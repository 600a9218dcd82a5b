/**
 * The approval policy inside a subagent (issue 14): the same policy and the same classification as
 * the lead's ApprovalMiddleware (middlewares/approval.ts, `verdictFor`), enforced where each call
 * runs. What differs is `ask`: the lead pauses its whole turn in the checkpoint until the user
 * decides, but a subagent has no checkpoint to pause in and runs inside the lead's tool call, so
 * it cannot wait for a decision. Its asking call is refused instead, with a result the subagent
 * can report ("needs approval; not run inside a subagent"), and the lead can then make that call
 * itself, where the user is asked. The thread's "Always allow" list still counts as a yes.
 * DeerFlow's subagents go through the same GuardrailMiddleware as the lead, which never asks.
 */
import { createMiddleware } from "langchain";
import { deniedResult, refusal, verdictFor, type ApprovalOptions } from "../middlewares/approval.js";

export function subagentApprovalMiddleware(o: ApprovalOptions, alwaysAllowed: readonly string[]) {
  return createMiddleware({
    name: "SubagentApprovalMiddleware",
    wrapToolCall: (request, handler) => {
      const call = request.toolCall;
      const v = verdictFor(call, { granted: [], always: alwaysAllowed }, o);
      if (v.mode === "deny") return deniedResult(call, v);
      if (v.mode === "ask") {
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
