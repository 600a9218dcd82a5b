/**
 * Rewriting what a tool call returned, for the tool wrappers that reshape results
 * (ToolOutputBudget, ToolResultSanitization). A tool returns a ToolMessage, or a Command whose
 * update carries it (the sandbox tools do, when they acquire the sandbox); both keep everything
 * but the rewritten messages: ids, status, kwargs (ReadBeforeWrite's read mark), artifacts, and a
 * Command's other update keys and its goto/graph/resume.
 */
import { ToolMessage } from "@langchain/core/messages";
import { Command, isCommand } from "@langchain/langgraph";

/** The same message with other content. */
export function withToolContent(msg: ToolMessage, content: ToolMessage["content"]): ToolMessage {
  return new ToolMessage({
    content,
    tool_call_id: msg.tool_call_id,
    name: msg.name,
    ...(msg.id ? { id: msg.id } : {}),
    ...(msg.status ? { status: msg.status } : {}),
    ...(msg.artifact !== undefined ? { artifact: msg.artifact as unknown } : {}),
    additional_kwargs: msg.additional_kwargs,
    response_metadata: msg.response_metadata,
  });
}

/** `map` applied to every ToolMessage of a result; the result itself when nothing changed. */
export function mapToolResult(result: ToolMessage | Command, map: (msg: ToolMessage) => ToolMessage): ToolMessage | Command {
  if (!isCommand(result)) return ToolMessage.isInstance(result) ? map(result) : result;
  const update = result.update;
  if (!update || typeof update !== "object" || Array.isArray(update)) return result;
  const messages = (update as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return result;
  let changed = false;
  const next = messages.map((m: unknown) => {
    if (!ToolMessage.isInstance(m)) return m;
    const b = map(m);
    if (b !== m) changed = true;
    return b;
  });
  if (!changed) return result;
  return new Command({
    update: { ...update, messages: next },
    ...(result.goto !== undefined && (!Array.isArray(result.goto) || result.goto.length > 0) ? { goto: result.goto } : {}),
    ...(result.graph !== undefined ? { graph: result.graph } : {}),
    ...(result.resume !== undefined ? { resume: result.resume } : {}),
  });
}
