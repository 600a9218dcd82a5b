/**
 * The `task` tool's result, as DeerFlow words it (`subagents/status_contract.py`, pinned by its
 * `test_task_tool_core_logic.py` and `contracts/subagent_status_contract.json`): the text is what
 * the lead model reads, the `additional_kwargs` are what a UI reads. The strings are DeerFlow's
 * exactly, because its frontend and tests match on them.
 */
import { createHash } from "node:crypto";

export const SUBAGENT_STATUSES = ["completed", "failed", "cancelled", "timed_out", "polling_timed_out"] as const;
export type SubagentStatus = (typeof SUBAGENT_STATUSES)[number];

/** Why a guard ended a subagent early; never a status of its own (DeerFlow #3875 phase 2). */
export const SUBAGENT_STOP_REASONS = ["token_capped", "turn_capped", "loop_capped"] as const;
export type SubagentStopReason = (typeof SUBAGENT_STOP_REASONS)[number];

export interface SubagentUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

const STOP_REASON_LABELS: Record<SubagentStopReason, string> = {
  token_capped: "token budget",
  turn_capped: "turn budget",
  loop_capped: "repeated tool-call loop",
};

/** DeerFlow bounds the brief and the error it stamps to 2000 characters: head, marker, tail. */
export const SUBAGENT_METADATA_TEXT_MAX_CHARS = 2000;

export function boundMetadataText(text: string, cap = SUBAGENT_METADATA_TEXT_MAX_CHARS): string {
  const cleaned = text.trim();
  if (cleaned.length <= cap) return cleaned;
  const marker = "\n...\n";
  const head = Math.floor((cap * 2) / 3);
  const tail = cap - head - marker.length;
  return tail <= 0 ? cleaned.slice(0, cap) : `${cleaned.slice(0, head)}${marker}${cleaned.slice(-tail)}`;
}

export interface SubagentOutcome {
  status: SubagentStatus;
  result?: string;
  error?: string;
  stopReason?: SubagentStopReason;
}

/** The model-visible text and the normalised error (DeerFlow `format_subagent_result_message`). */
export function formatSubagentResult(o: SubagentOutcome): { content: string; error?: string } {
  const result = o.result ?? "";
  const error = o.error?.trim() ?? "";
  const capped = o.stopReason ? STOP_REASON_LABELS[o.stopReason] : undefined;
  switch (o.status) {
    case "completed":
      return { content: capped ? `Task Succeeded (capped: ${capped}). Result: ${result}` : `Task Succeeded. Result: ${result}` };
    case "cancelled": {
      const detail = error || "Task cancelled by user.";
      return { content: detail === "Task cancelled by user." ? detail : `Task cancelled by user. Error: ${detail}`, error: detail };
    }
    case "timed_out": {
      const detail = error || "Task timed out.";
      return { content: detail === "Task timed out." ? detail : `Task timed out. Error: ${detail}`, error: detail };
    }
    case "polling_timed_out": {
      const detail = error || "Task polling timed out.";
      return { content: detail, error: detail };
    }
    case "failed": {
      const detail = error || "Task failed.";
      if (capped) return { content: detail === "Task failed." ? `Task failed (capped: ${capped}).` : `Task failed (capped: ${capped}). Error: ${detail}`, error: detail };
      return { content: detail === "Task failed." ? detail : `Task failed. Error: ${detail}`, error: detail };
    }
  }
}

/** The `additional_kwargs` of the result ToolMessage (DeerFlow `make_subagent_additional_kwargs`). */
export function subagentAdditionalKwargs(o: SubagentOutcome & { modelName?: string; usage?: SubagentUsage }, error: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { subagent_status: o.status };
  if (o.status === "completed" && o.result && o.result.trim()) {
    out.subagent_result_brief = boundMetadataText(o.result);
    out.subagent_result_sha256 = createHash("sha256").update(o.result, "utf8").digest("hex");
  }
  if (o.status !== "completed" && error && error.trim()) out.subagent_error = boundMetadataText(error);
  if (o.stopReason) out.subagent_stop_reason = o.stopReason;
  if (o.modelName && o.modelName.trim()) out.subagent_model_name = o.modelName.trim();
  if (o.usage) out.subagent_token_usage = { ...o.usage };
  return out;
}
