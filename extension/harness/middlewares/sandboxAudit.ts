/**
 * SandboxAuditMiddleware (DeerFlow `sandbox_audit_middleware.py`, slot [10]): every `bash` call is
 * classified before the tool runs (sandbox/commandAudit.ts, which owns the rules).
 *
 * - block: the tool is not called; the model gets DeerFlow's error ToolMessage, "Command blocked:
 *   {reason}. Please use a safer alternative approach.", and the run goes on.
 * - warn: the tool runs; DeerFlow's warning is appended to its result.
 *
 * A middleware, not a check inside the bash tool, as in DeerFlow: it applies to the host and the
 * container sandbox alike, before any sandbox is acquired (a blocked first call brings no
 * container up), and it sits inside ToolErrorHandling, so a tool that throws is unaffected.
 *
 * Where we differ: DeerFlow leaves a `Command` result without the warning; here the first bash
 * call of a thread answers with a Command (it records the sandbox it acquired), so the warning is
 * added to the ToolMessage inside it.
 *
 * After the command (not in DeerFlow, issue 21): a bash result flagged with protected paths the
 * dev container's read-only mounts could not stop (a new nested `.git`, a new `.envrc`; see
 * sandbox/devcontainer/protectedWatch.ts) ends the run before the next model step, with
 * `sandbox_tampered` and a message that names the paths. The tool result stays in the thread with
 * the same notice, so the model reads why when the user continues; a run does not go on by
 * itself after its sandbox planted something the host would execute. In a subagent the subagent
 * ends that way and the lead reads its failure in the `task` result.
 */
import { createMiddleware, ToolMessage } from "langchain";
import type { BaseMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { HarnessError } from "../errors.js";
import { auditCommand, blockedMessage, warningSuffix } from "../sandbox/commandAudit.js";
import { stoppedMessage } from "../sandbox/devcontainer/protectedWatch.js";
import type { ProtectedChange } from "../trust/protectedPaths.js";
import { PROTECTED_CHANGES_KEY } from "../tools/sandbox/bash.js";

const BASH = "bash";

export function sandboxAuditMiddleware() {
  return createMiddleware({
    name: "SandboxAuditMiddleware",
    beforeModel: (state: { messages: BaseMessage[] }) => {
      const changes = plantedSinceLastAnswer(state.messages);
      if (changes.length > 0) throw new HarnessError("sandbox_tampered", stoppedMessage(changes));
      return undefined;
    },
    wrapToolCall: async (request, handler) => {
      if (request.toolCall.name !== BASH) return handler(request);
      const blocked = auditRefusal(request.toolCall);
      if (blocked) return blocked;
      const command = commandOf(request.toolCall);
      const result = await handler(request);
      return auditCommand(command).verdict === "warn" ? withWarning(result, request.toolCall.id, warningSuffix(command)) : result;
    },
  });
}

function commandOf(call: { args?: unknown }): string {
  const command = (call.args as { command?: unknown } | undefined)?.command;
  return typeof command === "string" ? command : "";
}

/**
 * DeerFlow's "Command blocked: …" result for a bash call the audit blocks; undefined for any other
 * call. The middleware answers with it, and the approval preflight (approvals/preflight.ts) too, so
 * a call that would be blocked is never offered for approval.
 */
export function auditRefusal(call: { id?: string; name: string; args?: unknown }): ToolMessage | undefined {
  if (call.name !== BASH) return undefined;
  const audit = auditCommand(commandOf(call));
  if (audit.verdict !== "block") return undefined;
  return new ToolMessage({ content: blockedMessage(audit.reason), tool_call_id: call.id ?? "missing_id", name: BASH, status: "error" });
}

/** The protected-path changes reported by the tool results the model is about to read. */
function plantedSinceLastAnswer(messages: readonly BaseMessage[]): ProtectedChange[] {
  const changes: ProtectedChange[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m || !ToolMessage.isInstance(m)) break;
    const flagged = m.additional_kwargs?.[PROTECTED_CHANGES_KEY];
    if (Array.isArray(flagged)) changes.push(...(flagged as ProtectedChange[]));
  }
  return changes;
}

function withWarning<T>(result: T, toolCallId: string | undefined, warning: string): T {
  if (ToolMessage.isInstance(result)) return appended(result, warning) as T;
  if (result instanceof Command) {
    const update = result.update as { messages?: unknown } | undefined;
    if (!update || !Array.isArray(update.messages)) return result;
    const messages = update.messages.map((m: unknown) =>
      ToolMessage.isInstance(m) && (toolCallId === undefined || m.tool_call_id === toolCallId) ? appended(m, warning) : m,
    );
    const goto = result.goto as string[];
    return new Command({ ...(goto.length > 0 ? { goto } : {}), update: { ...update, messages } }) as T;
  }
  return result;
}

function appended(message: ToolMessage, warning: string): ToolMessage {
  const content = typeof message.content === "string" ? message.content + warning : [...message.content, { type: "text" as const, text: warning }];
  return new ToolMessage({
    content,
    tool_call_id: message.tool_call_id,
    ...(message.name !== undefined ? { name: message.name } : {}),
    ...(message.status !== undefined ? { status: message.status } : {}),
    ...(message.id !== undefined ? { id: message.id } : {}),
    // The facts the tool attached (the protected-path changes) stay with the text.
    additional_kwargs: message.additional_kwargs,
  });
}
