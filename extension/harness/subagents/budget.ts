/**
 * A subagent's turn cap and token budget (DeerFlow: `recursion_limit = max_turns` on the subagent's
 * run, and TokenBudgetMiddleware in its chain, #3875 phase 2). Both are reported, never raised:
 * the executor reads `capped` after the run and says `turn_capped` / `token_capped`.
 *
 * - Turns: DeerFlow's recursion limit counts graph steps; ours counts model calls (a step count
 *   would depend on how the graph is built; agent/graph/build.ts derives its recursion limit from
 *   this budget). Before the model would be called for the (max_turns+1)-th time the run ends where
 *   it is (`jumpTo: "end"`), with whatever the last answer said.
 * - Tokens: once the subagent's AI messages used `tokenBudget` total tokens, the answer's tool
 *   calls are stripped and DeerFlow's "[TOKEN BUDGET EXCEEDED] …" is appended, so the run ends
 *   with what it collected (DeerFlow's hard stop; its soft warning is not ported).
 */
import { createMiddleware } from "langchain";
import { AIMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { budgetExceededMessage, tokenCappedAnswer } from "../middlewares/tokenBudget.js";

export interface BudgetState {
  capped?: "turn_capped" | "token_capped";
}

function usedTokens(messages: readonly BaseMessage[]): number {
  let total = 0;
  for (const m of messages) if (AIMessage.isInstance(m)) total += m.usage_metadata?.total_tokens ?? 0;
  return total;
}

/** DeerFlow's wording and hard stop are owned by the lead's TokenBudget (middlewares/tokenBudget.ts). */
export { budgetExceededMessage };

export function subagentBudgetMiddleware(o: { maxTurns: number; tokenBudget: number }, out: BudgetState) {
  return createMiddleware({
    name: "SubagentBudgetMiddleware",
    beforeModel: {
      canJumpTo: ["end"],
      hook: (state) => {
        const turns = state.messages.filter((m) => AIMessage.isInstance(m)).length;
        if (turns < o.maxTurns) return undefined;
        out.capped ??= "turn_capped";
        return { jumpTo: "end" };
      },
    },
    afterModel: (state) => {
      if (o.tokenBudget <= 0) return undefined;
      const last = state.messages.at(-1);
      if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return undefined;
      const used = usedTokens(state.messages);
      if (used < o.tokenBudget) return undefined;
      out.capped ??= "token_capped";
      return { messages: [tokenCappedAnswer(last, used, o.tokenBudget)] };
    },
  });
}
