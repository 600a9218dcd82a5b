/**
 * The panel's view model: what the store holds and the components render. Built only by the
 * reducers in this folder from HostToWebview messages; components never mutate it. Objects are
 * replaced, never edited, so a renderer can tell "changed" from "same" by identity (the virtual
 * list re-renders an item only when its MessageView object changed).
 */
import type { ThreadSummary } from "../../extension/protocol/rpc.js";
import type { ModelChoice, PanelMcpServer, PanelSkill, PanelStatus } from "../../extension/protocol/webview.js";
import type { ModelRequestFailure, RunStatus, TaskUsage } from "../../extension/protocol/events.js";
import type { ToolOutcome } from "../../extension/protocol/toolOutcome.js";
import type { UsageState } from "./usage.js";
import type { Seq } from "./seq.js";
import type { PMap } from "./pmap.js";

/** "error" rows are not messages: a run error shown in line, where it happened. */
export type Role = "human" | "ai" | "tool" | "error";

export interface ToolCallView {
  id: string;
  name: string;
  /** Parsed arguments once known (complete message), else undefined while they stream. */
  args: Record<string, unknown> | undefined;
  /** Raw streamed argument text (tool_call_chunks), shown until `args` is known. */
  argsText: string;
  result: ToolResultView | undefined;
  /** A `task` call's subagent, as far as its journal events are in view (model/tasks.ts). */
  task?: TaskView | undefined;
}

/** A subagent started by a `task` call; `id` is the call's id (the events' `task_id`). */
export interface TaskView {
  id: string;
  description: string | null;
  subagentType: string | null;
  model: string | null;
  status: "running" | "completed" | "failed" | "cancelled" | "timed_out";
  /** DeerFlow's result text once completed. */
  result: string | null;
  error: string | null;
  /** Cumulative usage so far (null before its first model reply). */
  usage: TaskUsage | null;
  /** The subagent's own messages (its answers and tool calls), folded by the lead's reducers. */
  steps: ThreadView;
}

export interface ToolResultView {
  messageId: string;
  content: string;
  status: "success" | "error";
  /** Done, failed (exit code or error) or rejected (the user's reason): protocol/toolOutcome.ts. */
  outcome: ToolOutcome;
  /** A `task` result's `subagent_status` and `subagent_token_usage` (DeerFlow's status fields). */
  subagent?: { status: string | null; usage: TaskUsage | null } | undefined;
}

export interface MessageView {
  /** Stable key: the message id, or a synthetic one for id-less messages and error rows. */
  key: string;
  role: Role;
  /** Rendered as markdown for ai, plain text for human. */
  text: string;
  /** True while token chunks are still arriving (no complete message seen yet). */
  streaming: boolean;
  toolCalls: readonly ToolCallView[];
  /** Names of files attached to a human message. */
  files: readonly string[];
  /** For role "tool" rows shown on their own (their call was not found). */
  toolName?: string;
  /** An error row (from an `error` or failed `end` event), rendered as an error banner. */
  error?: string;
  /**
   * Why the run stopped, on the AI message the harness wrote for it (`additional_kwargs.stop_reason`,
   * e.g. "turn_capped": the run used its turn budget; that message is the thread's last).
   */
  stopReason?: string;
}

export interface ArtifactItem {
  /** Virtual path (`/mnt/user-data/outputs/...`); the host resolves it. */
  path: string;
  exists: boolean;
}

export interface ViewedImageItem {
  path: string;
  mime_type: string;
  size: number;
  sha256: string;
}

export interface TodoItem {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

export interface RunView {
  runId: string | null;
  status: RunStatus | null;
  model: string | null;
  error: string | null;
  /** The latest `llm_retry` message while the run retries; cleared by the next output. */
  retry: string | null;
  /** The last run paused on tool calls that wait on the user's decision (issue 13). */
  awaitingApproval: boolean;
  /** The last run's `end.data.stop_reason` (null before its end, or for a plain answer). */
  stopReason: string | null;
  /**
   * The run's model request failed (the `error` event's `failure`, issue 30 item 2): the panel's
   * one alert names the model and endpoint and offers Retry, Show Logs, Set API Key. Gone with the
   * next run (its `metadata` starts a new RunView).
   */
  failure?: ModelRequestFailure;
}

export interface ThreadView {
  threadId: string;
  title: string | null;
  /** Highest journal seq applied; events at or below it are replays and are ignored. */
  lastSeq: number;
  /**
   * The rows, in order. Persistent (model/seq.ts), as are the maps below (model/pmap.ts): one
   * event copies what it changed, never the whole thread (issue 20: per-event cost stays flat in
   * a 300-turn run).
   */
  messages: Seq<MessageView>;
  /** message key → index in `messages` (rebuilt when a row is removed). */
  index: PMap<number>;
  /** tool_call_id → key of the AI message that made the call. */
  callOwner: PMap<string>;
  /** Results seen before their call (rare; kept so a later call picks its result up). */
  pendingResults: PMap<ToolResultView>;
  /** task_id → the subagent's view, from the journal's task events (model/tasks.ts). */
  tasks: PMap<TaskView>;
  /** Keys of the rows still streaming (none or one, mostly): a run's end reads these, not every row. */
  live: readonly string[];
  /**
   * Replaced whenever a row is removed or the rows are rebuilt (a snapshot). Two views with the
   * same token differ only by rows appended at the end and rows replaced in place, which is what
   * the virtual list relies on to update its geometry without walking every row.
   */
  rowsShape: object;
  artifacts: readonly ArtifactItem[];
  todos: readonly TodoItem[] | null;
  viewedImages: readonly ViewedImageItem[];
  uploadedFiles: readonly string[];
  run: RunView;
  /** Tokens and estimated cost: the last run's and the thread's (model/usage.ts). */
  usage: UsageState;
}

export interface PanelState {
  /** The host's `init` arrived: until then an empty model list means "not heard yet", not "none". */
  hostReady: boolean;
  threads: readonly ThreadSummary[];
  threadId: string | null;
  models: readonly ModelChoice[];
  model: string | null;
  /** The user picked `model` (or configured it as the default); false while it is only the first on the list. */
  modelChosen: boolean;
  planMode: boolean;
  thread: ThreadView | null;
  /** Host-reported status (sandbox, restriction, active run); undefined until the first one. */
  status: PanelStatus | undefined;
  /**
   * Whether a run is active on the shown thread, by the latest word on it: a `status`, a `state`
   * (its active_run), or the journal (metadata starts a run, end ends it). Undefined: no word yet.
   */
  liveRun: "pending" | "running" | null | undefined;
  attachments: ReadonlyArray<{ name: string; size: number }>;
  /** sha256 → data URL (null: the host has no bytes for it). */
  images: ReadonlyMap<string, string | null>;
  /** The last host error, shown until dismissed or replaced. */
  notice: string | null;
  /**
   * The key of the turn-capped message whose Continue was pressed: the bar hides at once (no
   * second run from a double click) until the run starts, or comes back if the host refused it.
   */
  continued: string | null;
  /** The workspace's loaded skills (the Skills section, the composer's `/` completion). */
  skills: readonly PanelSkill[];
  /** The folder's MCP servers (the MCP Servers section). */
  mcpServers: readonly PanelMcpServer[];
}
