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
 */
import { createMiddleware, ToolMessage } from "langchain";
import { Command } from "@langchain/langgraph";
import { auditCommand, blockedMessage, warningSuffix } from "../sandbox/commandAudit.js";

const BASH = "bash";

export function sandboxAuditMiddleware() {
  return createMiddleware({
    name: "SandboxAuditMiddleware",
    wrapToolCall: async (request, handler) => {
      if (request.toolCall.name !== BASH) return handler(request);
      const args = request.toolCall.args as { command?: unknown };
      const command = typeof args.command === "string" ? args.command : "";
      const audit = auditCommand(command);
      if (audit.verdict === "block") {
        return new ToolMessage({
          content: blockedMessage(audit.reason),
          tool_call_id: request.toolCall.id ?? "missing_id",
          name: BASH,
          status: "error",
        });
      }
      const result = await handler(request);
      return audit.verdict === "warn" ? withWarning(result, request.toolCall.id, warningSuffix(command)) : result;
    },
  });
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
  });
}
