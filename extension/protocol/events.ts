/**
 * The one discriminated union of run events, shared by the journal, the CLI's JSON Lines, the
 * harness RPC and the panel. Event names are LangGraph/DeerFlow stream names.
 * Type-only: imported by the harness, the host and the webview alike.
 */
import type { ThreadUsageView } from "./usage.js";
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
  /** `failure`: a failed model request, sorted for the panel (ModelRequestFailure below); absent for other errors. */
  | (EventBase & { event: "error"; data: { name: string; message: string; code?: string; failure?: ModelRequestFailure } })
  | (EventBase & { event: "end"; data: {
        thread_id: string;
        run_id: string;
        status: FinalRunStatus;
        error?: string;
        /** The run's tokens and estimated cost: protocol/usage.ts RunUsageView. */
        usage?: Record<string, unknown>;
        /** The thread's usage, this run's included (issue 15); absent while no run reported usage. */
        thread_usage?: ThreadUsageView;
        /**
         * Why a successful run stopped, when it was not a plain final answer: "clarification" = the
         * agent asked the user; DeerFlow's capped completions: "model_length_capped" (the provider
         * cut the answer at its output limit; the text is kept), "safety_capped" (a content filter
         * stopped it; tool calls were dropped and the answer says why), "loop_capped" (repeated tool
         * calls were force-stopped), "approval" (tool calls wait on the user's decision; none of
         * that model turn's calls ran), "subagent_limit_capped" (the run's `task` budget was spent:
         * the answer carries "[SUBAGENT LIMIT REACHED] …"), "token_capped" (the run's token budget
         * was reached: tool calls dropped, the answer carries "[TOKEN BUDGET EXCEEDED] …"),
         * "turn_capped" (the run used its budget of model turns, `max_turns`: every tool call of
         * the last turn was answered, a visible message says so, and a next run on the thread —
         * the panel's Continue — goes on from there).
         */
        stop_reason?: "clarification" | "approval" | "model_length_capped" | "safety_capped" | "loop_capped" | "subagent_limit_capped" | "token_capped" | "turn_capped";
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

/**
 * The subagent namespace (issue 14): `custom` events whose `data` carries a `task_id` (the `task`
 * tool call's id). DeerFlow's lifecycle events, with its payloads (reference §6.4), plus
 * `task_event`, which wraps what the subagent itself streamed (its token chunks as a `messages`
 * item, its node deltas as an `updates` item), in the same wire form as the lead's own
 * `messages` / `updates` events. A panel replays a subagent from these as it replays the lead.
 * `usage` is the subagent's cumulative usage so far (null before its first model reply). A task
 * open when its run stopped is closed with `task_cancelled` ("Cancelled by user") or
 * `task_failed`, before the run's `end`: by the runner, or by recovery after a crash. `end.data.usage` adds the subagents' usage and splits it under `subagents`.
 */
export type TaskEventData =
  | { type: "task_started"; task_id: string; description: string; model_name: string; subagent_type: string }
  | {
      type: "task_running";
      task_id: string;
      /** The subagent's new step message (an answer or a tool result). */
      message: WireMessage;
      message_index: number;
      total_messages: number;
      usage: TaskUsage | null;
      model_name: string;
    }
  | { type: "task_completed"; task_id: string; result: string; usage: TaskUsage | null; model_name: string }
  | { type: "task_failed" | "task_cancelled" | "task_timed_out"; task_id: string; error: string | null; usage?: TaskUsage | null; model_name?: string }
  | { type: "task_event"; task_id: string; event: "messages"; data: WireMessageChunk[] }
  | { type: "task_event"; task_id: string; event: "updates"; data: Record<string, Record<string, unknown>> };

export interface TaskUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/**
 * A failed model request, as a person needs it (issue 30 item 2): which model, which endpoint, and
 * what kind of failure, so the panel can say what to do (Retry, Show Logs, Set API Key) in its own
 * words. Built in one place, harness/models/requestFailure.ts, and carried on the run's `error`
 * event (`data.failure`); the event's `message` keeps the full detail for the CLI and the log.
 */
export interface ModelRequestFailure {
  /**
   * "connection_refused": nothing listens at the endpoint; "auth": 401/403 (the key is missing,
   * wrong or not allowed); "model_not_found": 404 (no such model at that endpoint); "timeout": no
   * answer in time; "other": anything else (rate limits, quota, a 5xx after the retries).
   */
  kind: "connection_refused" | "auth" | "model_not_found" | "timeout" | "other";
  /** The model's configured name (the picker's), which Set API Key resolves to its key name. */
  model: string;
  /** `host:port` of the endpoint (the port the scheme implies when the URL has none). */
  endpoint: string;
  /** The HTTP status, when the endpoint answered. */
  status?: number;
  /** One sentence for a person: what happened, without URLs, library names or ids. */
  summary: string;
}
