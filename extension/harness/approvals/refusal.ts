/** The result of a call that did not run: an error the model reads and can act on. */
import { ToolMessage } from "@langchain/core/messages";

export function refusal(call: { id?: string; name: string }, content: string, errorType: string): ToolMessage {
  return new ToolMessage({
    content,
    tool_call_id: call.id ?? "missing_id",
    name: call.name,
    status: "error",
    additional_kwargs: { deerflow_tool_meta: { status: "error", error_type: errorType, recoverable_by_model: true, source: "middleware" } },
  });
}
