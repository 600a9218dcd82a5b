/**
 * The one discriminated union of run events, shared by the journal, the CLI's JSON Lines, the
 * harness RPC and the panel. Event names are LangGraph/DeerFlow stream names.
 * Type-only: imported by the harness, the host and the webview alike.
 */
import type { PendingApproval } from "./approvals.js";
import type { ChangedFile } from "./changes.js";

/** A message as DeerFlow names its fields (`deerflow state`, `updates`, `values`). */
export interface WireMessage {
  /** "remove": LangGraph's RemoveMessage — delete the message with this `id` (content is empty). */
  type: "human" | "ai" | "tool" | "system" | "remove";
  id?: string;
  content: string | WireContentBlock[];
  name?: string;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
  status?: "success" | "error";
  /** Free-form extras DeerFlow keeps on messages (`hide_from_ui`, `files`, usage...). */
  additional_kwargs?: Record<string, unknown>;
  usage_metadata?: { input_tokens: number; output_tokens: number; total_tokens: number };
}

export type WireContentBlock =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: string; [key: string]: unknown };

export interface WireToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** One streamed token delta of an AI message (`messages` stream mode). */
export interface WireMessageChunk {
  type: "ai" | "tool" | "human" | "system" | "remove";
  id: string;
  /** Text delta. */
  content: string;
  /** Tool-call argument fragments, merged by `index`. */
  tool_call_chunks?: Array<{ index?: number; id?: string; name?: string; args?: string }>;
  name?: string;
  tool_call_id?: string;
  node?: string;
}

export type RunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";
export type FinalRunStatus = Extract<RunStatus, "success" | "error" | "timeout" | "interrupted">;

interface EventBase {
  run_id: string;
  thread_id: string;
  /** Thread-global, gap-free sequence number (assigned by the journal). */
  seq?: number;
}

export type RunEvent =
  | (EventBase & { event: "metadata"; data: { run_id: string; thread_id: string; model: string; sandbox: string } })
  /** Business channels after a superstep. `messages` is summarised by count: the full list is `deerflow state`. */
  | (EventBase & { event: "values"; data: Record<string, unknown> & { message_count: number } })
  /** Per-node deltas; new messages appear here complete. */
  | (EventBase & { event: "updates"; data: Record<string, Record<string, unknown>> })
  | (EventBase & { event: "messages"; data: WireMessageChunk[] })
  | (EventBase & { event: "custom"; data: { type: string; [key: string]: unknown } })
  | (EventBase & { event: "error"; data: { name: string; message: string; code?: string } })
  | (EventBase & { event: "end"; data: {
        thread_id: string;
        run_id: string;
        status: FinalRunStatus;
        error?: string;
        usage?: Record<string, unknown>;
        /**
         * Why a successful run stopped, when it was not a plain final answer: "clarification" = the
         * agent asked the user; DeerFlow's capped completions: "model_length_capped" (the provider
         * cut the answer at its output limit; the text is kept), "safety_capped" (a content filter
         * stopped it; tool calls were dropped and the answer says why), "loop_capped" (repeated tool
         * calls were force-stopped), "approval" (tool calls wait on the user's decision; none of
         * that model turn's calls ran).
         */
        stop_reason?: "clarification" | "approval" | "model_length_capped" | "safety_capped" | "loop_capped";
        /** With stop_reason "approval": the calls of the paused model turn that wait on the user. */
        pending_approvals?: PendingApproval[];
        /** With stop_reason "clarification": DeerFlow's human_input request (the question card). */
        human_input?: Record<string, unknown>;
        /**
         * The files the run's file tools changed, as recorded when it ended (protocol/changes.ts;
         * `changes/list` has the shas). Absent only where no change store is wired (unit tests).
         */
        changed_files?: ChangedFile[];
      };
    });

export type RunEventName = RunEvent["event"];
