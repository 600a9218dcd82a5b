/**
 * Preflight (issue 30 item 3): a call is offered for approval only if it could run once approved.
 * Every check that would refuse it where it runs is asked first, in the order the call meets
 * them there (the middleware chain, outer to inner, then the tool):
 *
 * 1. SandboxAudit [10]: a bash command the audit blocks;
 * 2. ReadBeforeWrite [11] (when on): a write to an existing file the thread has not read;
 * 3. SkillToolPolicy [16]: a tool the active skills' `allowed-tools` do not allow;
 * 4. the tool's argument schema (the tool runner's check);
 * 5. the trust boundary for writes: a path outside the thread's roots, into the skills, through a
 *    redirected thread folder; a protected path counts as cleared, as the user's yes would clear it.
 *
 * Each check is the function its owner calls (this module copies no rule); the first refusal is
 * the call's result, with the error the model would have read after the user's yes. The loop,
 * budget and subagent guards need no preflight: their afterModel hooks run before the approval
 * middleware's (afterModel runs in reverse chain order) and strip the calls they stop.
 */
import type { ToolMessage, ToolCall } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { auditRefusal } from "../middlewares/sandboxAudit.js";
import { readBeforeWriteRefusal } from "../middlewares/readBeforeWrite.js";
import { skillPolicyRefusal, type SkillToolPolicyOptions } from "../middlewares/skillToolPolicy.js";
import { argumentsRefusal } from "../agent/graph/toolCalls.js";
import { isPathRefusal, resolveWritePath } from "../trust/toolPaths.js";
import { writeDeniedText } from "../tools/sandbox/output.js";
import { refusal } from "./refusal.js";
import type { CallClass } from "./classify.js";

/** What the preflight needs beyond the call: the run's chain as configured. */
export interface PreflightOptions {
  dirs: ThreadDirs;
  /** ReadBeforeWrite is in the chain (DeerFlow's `read_before_write.enabled`). */
  readBeforeWrite: boolean;
  /** SkillToolPolicy is in the chain: the run's skills. */
  skills?: SkillToolPolicyOptions;
}

const WRITE_TOOLS = new Set(["write_file", "str_replace"]);

/**
 * The result `call` would get instead of running, were it approved now; undefined when it would
 * run. `tool`: the tool it names, when known (its schema); `state`: the thread's state as the
 * call would see it.
 */
export async function preflightRefusal(
  call: ToolCall,
  cls: CallClass,
  state: unknown,
  tool: StructuredToolInterface | undefined,
  o: PreflightOptions,
): Promise<ToolMessage | undefined> {
  const blocked = auditRefusal(call);
  if (blocked) return blocked;
  const allowProtected = cls.class === "protected";
  if (o.readBeforeWrite) {
    const messages = (state as { messages?: BaseMessage[] } | undefined)?.messages;
    const unread = await readBeforeWriteRefusal(call, messages, o.dirs, allowProtected);
    if (unread) return unread;
  }
  if (o.skills) {
    const bySkill = skillPolicyRefusal(call, state, o.skills);
    if (bySkill) return bySkill;
  }
  if (tool) {
    const badArgs = await argumentsRefusal(tool, call);
    if (badArgs) return badArgs;
  }
  if (WRITE_TOOLS.has(call.name)) {
    const path = (call.args as { path?: unknown } | undefined)?.path;
    if (typeof path === "string") {
      try {
        resolveWritePath(path, o.dirs, { allowProtected });
      } catch (err) {
        if (!isPathRefusal(err)) return undefined; // the tool answers it when it runs
        return refusal(call, writeDeniedText(call.name as "write_file" | "str_replace", path, err), "path_refused");
      }
    }
  }
  return undefined;
}
