/**
 * The host ↔ harness JSON-RPC contract (vscode-languageclient ↔ vscode-languageserver over stdio).
 * Type-only. Methods are `"namespace/verb"`, grouped by direction; each maps to its params and
 * result. The harness never sees a `vscode` type; the host never touches SQLite.
 */
import type { ApprovalDecision, ApprovalMode, PendingApproval, ToolClass } from "./approvals.js";
import type { FinalRunStatus, RunEvent, RunStatus, WireMessage } from "./events.js";
import type { FileChangeView, RevertOutcome } from "./changes.js";
import type { ThreadUsageView } from "./usage.js";
import type { LmChatParams, LmChatResult, LmChunk } from "./lm.js";
import type { McpListView, McpServerView } from "./mcp.js";

/** One configured model, as settings describe it (`deerflow.models`). */
export interface ModelSetting {
  name: string;
  model: string;
  base_url?: string;
  api_key_env?: string;
  display_name?: string;
  supports_vision?: boolean;
  supports_thinking?: boolean;
  /** DeerFlow's thinking / reasoning-effort settings (harness models/thinking.ts). */
  supports_reasoning_effort?: boolean;
  reasoning_effort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh";
  when_thinking_enabled?: Record<string, unknown>;
  when_thinking_disabled?: Record<string, unknown>;
  thinking?: Record<string, unknown>;
  /** Whose prices estimate this model's cost when its base URL does not say (a genai-prices provider id, e.g. "openai"). */
  pricing_provider?: string;
}

export interface HarnessSettings {
  models: ModelSetting[];
  default_model?: string;
  title_model?: string;
  sandbox: { provider: "auto" | "local" | "devcontainer"; allow_host_commands: boolean; bash_timeout_seconds?: number };
  /** False in an untrusted workspace: no sandbox commands at all (and the reason is shown). */
  workspace_trusted: boolean;
  /**
   * The approval policy per tool class (`deerflow.approval.*`, read at user or machine scope
   * only); unnamed classes keep their defaults.
   */
  approval?: Partial<Record<ToolClass, ApprovalMode>>;
  /** `deerflow.subagents.enabled`: register the `task` tool for the panel's runs (issue 14). */
  subagents?: { enabled: boolean };
  /** `deerflow.memory.enabled` (issue 15, machine scope): long-term memory; absent → on, as in DeerFlow. */
  memory?: { enabled: boolean };
  /** `deerflow.maxTokensPerRun` (issue 15): tokens one run may use; absent or 0 = no budget. */
  token_budget?: { max_tokens_per_run: number };
  /** `deerflow.maxTurnsPerRun` (issue 20, machine scope): model turns one run may make; absent → the harness default (200). */
  max_turns?: number;
  /** `deerflow.summarization.*` (issue 15): automatic summarization, its token trigger (0 = none) and how many messages stay in full. */
  summarization?: { enabled: boolean; trigger_tokens: number; keep_messages: number };
}

type MemoryUserSections = Record<"workContext" | "personalContext" | "topOfMind", { summary: string; updatedAt: string }>;
type MemoryHistorySections = Record<"recentMonths" | "earlierContext" | "longTermBackground", { summary: string; updatedAt: string }>;

/**
 * Long-term memory as stored (harness memory/schema.ts; DeerFlow's memory.json shape, with scopes,
 * issue 21): a fact with scope "workspace" is given only to threads of `workspace` (a folder's
 * real path), "global" to every workspace; `workspaces` holds the sections a folder's extraction
 * rewrote. On `memory/set` a fact without `scope` is global, a document without `workspaces` has none.
 */
export interface MemoryDocumentView {
  version: string;
  lastUpdated: string;
  user: MemoryUserSections;
  history: MemoryHistorySections;
  facts: Array<{ id: string; content: string; category: string; confidence: number; createdAt: string; source: string; scope?: "workspace" | "global"; workspace?: string }>;
  workspaces?: Record<string, { user: MemoryUserSections; history: MemoryHistorySections }>;
}

/** A section by name, as `memory/promote` takes it. */
export type MemorySectionName =
  | "user.workContext"
  | "user.personalContext"
  | "user.topOfMind"
  | "history.recentMonths"
  | "history.earlierContext"
  | "history.longTermBackground";

/** `threads/compact`: what a manual compaction did (runs/compaction.ts CompactResult). */
export interface CompactResultView {
  run_id: string;
  thread_id: string;
  /** False when there was nothing to summarize (`reason` says why). */
  compacted: boolean;
  reason?: string;
  summary_text?: string;
  /** Messages the new summary covers, and messages the model still sees in full. */
  summarized?: number;
  preserved?: number;
  /** The model that wrote the summary. */
  model?: string;
}

/** One skill folder as `skills/list` and `deerflow skills list` show it (issue 24; harness skills/views.ts). */
export interface SkillView {
  /** The front matter's name; null for a folder that could not be loaded. */
  name: string | null;
  scope: "project" | "user" | "custom" | "public";
  /** The SKILL.md on disk (host path), for "Open SKILL.md". */
  path: string;
  /** Where the model reads it (`/mnt/skills/<scope>/<folder>/SKILL.md`); null when it is not offered. */
  location: string | null;
  description: string | null;
  enabled: boolean;
  /** loaded: offered (when enabled); broken: the diagnostics say why not; shadowed: an earlier root has the name. */
  status: "loaded" | "broken" | "shadowed";
  /** allowed-tools as this harness reads it; null = not declared (no restriction). */
  allowed_tools: string[] | null;
  /** Offered for `/name` (front matter `user-invocable`). */
  user_invocable: boolean;
  /** In the model's catalogue (not `disable-model-invocation`). */
  model_invocable: boolean;
  argument_hint?: string;
  /** The SKILL.md of the skill that keeps the name (status shadowed). */
  shadowed_by?: string;
  diagnostics: Array<{ level: "error" | "warning" | "info"; code: string; message: string }>;
}

/** A journaled event as delivered to subscribers: a RunEvent with its thread-global seq. */
export type JournalEvent = RunEvent & { seq: number };

export interface ThreadSummary {
  thread_id: string;
  workspace_folder: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  /** The thread's active run, if any. */
  active_run?: { run_id: string; status: RunStatus };
}

export interface ViewedImageView {
  /** Virtual path, `/mnt/user-data/...` (the key of `viewed_images`). */
  path: string;
  mime_type: string;
  size: number;
  sha256: string;
}

export interface ArtifactView {
  /** Virtual path, `/mnt/user-data/outputs/...`. */
  path: string;
  /** The file on disk, for `vscode.open`; inside the workspace folder. */
  host_path: string;
  exists: boolean;
}

export interface ThreadStateView {
  thread_id: string;
  title: string | null;
  messages: WireMessage[];
  artifacts: ArtifactView[];
  todos: Array<{ content: string; status: "pending" | "in_progress" | "completed" }> | null;
  viewed_images: ViewedImageView[];
  uploaded_files: Array<{ filename: string; size: number; path: string }>;
  /** Tool calls the thread waits on (issue 13): decide them with runs/decide. Absent = none. */
  pending_approvals?: PendingApproval[];
  /** Tokens and estimated cost summed over the thread's runs (issue 15); absent before any run reported usage. */
  usage?: ThreadUsageView;
  /** The journal's last seq when this view was read: subscribe from here to continue live. */
  last_seq: number;
  /**
   * The thread's active run, if any. Its in-flight AI message is not in `messages` yet (a message
   * lands in state when its step completes): subscribe from `after_seq` (the seq before the run's
   * first event) instead of `last_seq` to rebuild it; messages already in the view repeat by id.
   */
  active_run?: { run_id: string; status: RunStatus; after_seq: number };
}

export interface RunSummary {
  run_id: string;
  thread_id: string;
  status: RunStatus;
  model: string;
  created_at: string;
  ended_at: string | null;
  error: string | null;
}

/**
 * What a remote harness (`deerflow serve`'s `/rpc` WebSocket, issue 26 item 4) says about itself
 * in its `harness/initialize` answer. A remote harness keeps its own data directory, models, API
 * keys and sandbox: the host's `dataDir`, settings and keys are not used (the host sends no keys).
 * Every request's `workspaceFolder` must be one of `workspaces[].folder` (the server's path);
 * any other gets `workspace_mismatch`. Notifications name the same server paths.
 */
export interface RemoteHarnessInfo {
  workspaces: Array<{ name: string; folder: string }>;
  /** The server's models, as the panel's picker lists them. */
  models: Array<{ name: string; display_name?: string; supports_vision: boolean }>;
  default_model?: string;
}

/** Requests from the host to the harness. */
export interface HostToHarness {
  "harness/initialize": {
    params: { dataDir: string; settings: HarnessSettings };
    result: { version: string; pid: number; remote?: RemoteHarnessInfo };
  };
  /**
   * Settings changed, or an API key was (re)set. Keys live only in the harness's memory, keyed by
   * a model's `api_key_env` (default "OPENAI_API_KEY"); the map is merged into the keys held, and
   * an empty string forgets a key. Invalid settings are refused and the previous ones stay.
   */
  "harness/configure": {
    params: { settings: HarnessSettings; apiKeys?: Record<string, string> };
    result: null;
  };
  /**
   * A file the thread's agent may read (`/mnt/user-data/{outputs,uploads,workspace}/…`), its bytes:
   * how a host that cannot reach the folder (a remote harness whose workspace is not shared) opens
   * an artifact. Refused as the agent's reads are (`path_denied`: another thread's folder, a
   * symlink out of the thread's folders), and a file over 50 MB (`file_too_large`).
   */
  "files/read": {
    params: { workspaceFolder: string; threadId: string; path: string };
    result: { base64: string; size: number };
  };
  /**
   * A file for the thread's next message, by its bytes (how a remote client attaches: it never
   * names a path of the server). Stored 0600 in the thread's uploads folder under `name` (or
   * `name-N` when that holds other bytes); `runs/start` `uploaded` names the answer's `filename`.
   * Within the `uploads` limits of one file (`usage` otherwise).
   */
  "uploads/put": {
    params: { workspaceFolder: string; threadId: string; name: string; base64: string };
    result: { filename: string; size: number; path: string };
  };
  "threads/list": { params: { workspaceFolder: string }; result: ThreadSummary[] };
  "threads/create": { params: { workspaceFolder: string; title?: string }; result: ThreadSummary };
  "threads/rename": { params: { workspaceFolder: string; threadId: string; title: string }; result: ThreadSummary };
  "threads/delete": { params: { workspaceFolder: string; threadId: string }; result: { deleted: boolean } };
  "threads/state": { params: { workspaceFolder: string; threadId: string }; result: ThreadStateView };
  /**
   * Summarize the thread's older messages now (manual compaction, issue 15). No message is removed.
   * Errors: thread_busy while a run is active, summary_failed when every summary model failed.
   */
  "threads/compact": { params: { workspaceFolder: string; threadId: string; model?: string }; result: CompactResultView };
  /** Through startRun: the same choke point as the CLI. Files are host paths copied into uploads. */
  "runs/start": {
    params: {
      workspaceFolder: string;
      threadId: string;
      prompt: string;
      /**
       * Host files to attach, by path: the editor's harness process only, and only files inside
       * its workspace folders. A remote harness refuses paths; attach there with `uploads/put`.
       */
      files?: string[];
      /** Names `uploads/put` answered with: files already in the thread's uploads folder. */
      uploaded?: string[];
      model?: string;
      planMode?: boolean;
      idempotencyKey?: string;
      multitask?: "reject" | "interrupt";
      /**
       * The message is the user's answer to the calls the thread waits on (issue 30 item 4): each
       * is rejected with the message as the reason ("Rejected by the user: <message>"), and the run
       * goes on with it. Affects only a thread paused on approvals; an active run still refuses.
       */
      rejectPending?: boolean;
    };
    result: { run_id: string; thread_id: string; existing: boolean };
  };
  /**
   * The user's decisions on the thread's paused tool calls, as a new run through startRun (like
   * runs/start). Every pending call must be decided (`usage` error naming the others otherwise).
   */
  "runs/decide": {
    params: { workspaceFolder: string; threadId: string; decisions: ApprovalDecision[]; model?: string };
    result: { run_id: string; thread_id: string; existing: boolean };
  };
  /**
   * For "Open Diff" on a pending write_file/str_replace: the file now and as the call would
   * leave it. `exists: false` (current null) for a new file.
   */
  "approvals/proposed": {
    params: { workspaceFolder: string; threadId: string; toolCallId: string };
    result: { path: string; host_path: string; exists: boolean; current: string | null; proposed: string };
  };
  "runs/cancel": {
    params: { workspaceFolder: string; runId: string };
    result: { outcome: "cancelled" | "already_finished" | "not_found"; status?: RunStatus };
  };
  "runs/list": { params: { workspaceFolder: string; threadId: string }; result: RunSummary[] };
  /** The files a run's file tools changed ("Changed files (n)"), by path; `run_not_found` for an unknown run. */
  "changes/list": { params: { workspaceFolder: string; runId: string }; result: FileChangeView[] };
  /**
   * A changed file's content before the run, for Open Diff (before ↔ now; the file on disk is
   * `host_path`). `exists: false` (and base64 null) when the run added the file.
   */
  "changes/before": {
    params: { workspaceFolder: string; runId: string; path: string };
    result: { path: string; exists: boolean; base64: string | null };
  };
  /**
   * Revert / Revert All: restores the before-content of `paths` (all of the run's changed files
   * when absent). Per file: reverted, unchanged, or refused with a code and a reason (a file that
   * changed after the run is kept); the others still revert. Refused as a whole with `thread_busy`
   * while a run of the thread has not ended. `allowProtected`: the user's explicit consent to
   * restore protected paths the run wrote with their approval.
   */
  "changes/revert": {
    params: { workspaceFolder: string; runId: string; paths?: string[]; allowProtected?: boolean };
    result: { run_id: string; thread_id: string; files: RevertOutcome[] };
  };
  /** Replay from `afterSeq`, then follow live through `events/event` notifications. */
  "events/subscribe": {
    params: { workspaceFolder: string; threadId: string; afterSeq: number };
    result: { subscriptionId: string };
  };
  "events/unsubscribe": { params: { subscriptionId: string }; result: null };
  /** A viewed image's bytes (from the blob store), for the cache thumbnails. */
  "images/get": { params: { workspaceFolder: string; sha256: string }; result: { mime_type: string; base64: string } | null };
  /** The `{}` update of `viewed_images`. */
  "images/clear": { params: { workspaceFolder: string; threadId: string }; result: null };
  /**
   * The folder's sandbox, for "Open Sandbox Terminal". A dev container is brought up first when
   * it is not running (for the thread when `threadId` is given, else for the folder), so the
   * answer names a running container to attach to.
   */
  "sandbox/info": { params: { workspaceFolder: string; threadId?: string }; result: SandboxInfo };
  /**
   * "Rebuild Sandbox Container": recreate the folder's dev container from devcontainer.json.
   * Refused while a run is active on the folder (`sandbox_busy`) and for a folder whose sandbox
   * is local (`usage`).
   */
  "sandbox/rebuild": { params: { workspaceFolder: string }; result: null };
  /**
   * The folder's dev container configuration as it is now, for the user to review before
   * approving it: what `devcontainer up` reads, its fingerprint, what runs on the host.
   */
  "sandbox/approval": { params: { workspaceFolder: string }; result: DevContainerApproval };
  /**
   * The user's "Allow": records the approval of exactly `fingerprint` (refused with
   * `sandbox_config_unapproved` when the configuration changed since it was shown). With
   * `retryRunId`, the run that was refused for this reason is started again with the same input
   * (when it is still the thread's latest run); its id is returned.
   */
  "sandbox/approve": {
    params: { workspaceFolder: string; fingerprint: string; retryRunId?: string };
    result: { approval: DevContainerApproval; retried?: { run_id: string; thread_id: string } };
  };
  /**
   * The folder's MCP servers (issue 23), where its runs' sandbox is: each with its source, state,
   * tools or reason. `start`: start those that may (each bounded by its session_init_timeout).
   */
  "mcp/list": { params: { workspaceFolder: string; start?: boolean }; result: McpListView };
  /** The user's yes to a workspace-file server as it is now; error `mcp_config_changed` when its fingerprint no longer matches. */
  "mcp/approve": { params: { workspaceFolder: string; server: string; fingerprint: string }; result: McpServerView };
  /** Long-term memory (issue 15): the stored document (error `memory_invalid` when the file is broken) and how many extractions wait. */
  /** `version`: the stored file's modification time (0 before the first write); the editor's save-conflict check. */
  "memory/get": { params: Record<string, never>; result: { memory: MemoryDocumentView; queued: number; version: number } };
  /** Replaces the whole document: validated (refused with `memory_invalid` and the field at fault, nothing changed), scrubbed of secrets. */
  "memory/set": { params: { memory: unknown }; result: { memory: MemoryDocumentView; version: number } };
  /** Forget everything: the document emptied, queued extractions dropped. */
  "memory/clear": { params: Record<string, never>; result: null };
  /**
   * The user makes something global (issue 21): a fact (`factId`), or a folder's own section
   * (`workspace` as in the document, `section`), which then replaces the global one. Error
   * `memory_not_found` when there is no such fact or section.
   */
  "memory/promote": {
    params: { factId: string; workspace?: never; section?: never } | { factId?: never; workspace: string; section: MemorySectionName };
    result: { memory: MemoryDocumentView; version: number };
  };
  /**
   * The workspace's skills (issue 24): every folder with a SKILL.md in the skill roots, loaded,
   * broken or shadowed, with its diagnostics; project skills only when the workspace is trusted.
   * `diagnostics`: about the roots and extensions_config.json, not one skill.
   */
  "skills/list": { params: { workspaceFolder: string }; result: { skills: SkillView[]; diagnostics: SkillView["diagnostics"] } };
  /**
   * Enable or disable a skill by name in the user's `<data-dir>/extensions_config.json`
   * (`skills.<name>.enabled`, DeerFlow's key); from the next run on. Returns the list as skills/list.
   */
  "skills/setEnabled": { params: { workspaceFolder: string; name: string; enabled: boolean }; result: { skills: SkillView[]; diagnostics: SkillView["diagnostics"] } };
}

/** `sandbox/approval`: what the user approves (the CLI's `deerflow devcontainer status`, as data). */
export interface DevContainerApproval {
  workspaceFolder: string;
  /** The devcontainer.json on disk (host path), for "Show Config". */
  configPath: string;
  /** sha256 (hex) of the files below, with their roles and names. */
  fingerprint: string;
  approved: boolean;
  /** Workspace-relative paths of the files `devcontainer up` reads (the config first). */
  files: string[];
  /** Commands that run on the host at every bring-up (`initializeCommand`). */
  hostCommands: string[];
  /** Host environment variables the configuration reads (`${localEnv:NAME}`). */
  localEnv: string[];
  /** Host-facing settings worth a look (mounts, runArgs, privileged, features, …). */
  notes: string[];
}

/** `sandbox/info`: enough for the host to open a terminal inside the thread's sandbox. */
export interface SandboxInfo {
  kind: "local" | "devcontainer";
  /** Dev container only (the others likewise): `ready` once brought up. */
  state?: "stopped" | "starting" | "ready";
  containerId?: string;
  /** The user commands run as inside the container (devcontainer.json `remoteUser`). */
  remoteUser?: string;
  /** bash when the image has it, sh otherwise. */
  shell?: string;
  /** devcontainer.json's `remoteEnv`, resolved (`NAME=value`): the agent's commands get it too. */
  env?: string[];
  /** The Docker client the harness uses (as configured: may be a bare "docker" on its PATH). */
  dockerPath?: string;
}

/** Notifications from the harness to the host. */
export interface HarnessToHost {
  /** Events in seq order; several may be batched into one notification. */
  "events/event": { subscriptionId: string; events: JournalEvent[] };
  "log/message": { level: "trace" | "debug" | "info" | "warn" | "error"; message: string };
  /**
   * An extraction changed the memory (issue 21): in `workspaceFolder` (the host's path when the
   * folder is open in this harness, else its real path), from `threadId`'s conversation. Counts
   * only; `dropped`: entries not stored because they read as instructions or permissions (their
   * text is in the log). `facts`: how many facts the folder's threads are given now.
   */
  "memory/changed": {
    workspaceFolder: string;
    threadId: string;
    added: number;
    removed: number;
    sections: MemorySectionName[];
    dropped: number;
    facts: number;
  };
  /** The folder's dev container is starting (with bring-up progress lines), ready or stopped. */
  "sandbox/status": { workspaceFolder: string; status: "stopped" | "starting" | "ready"; detail?: string };
  /** A run ended (for status bar and notifications even when no panel subscribes). */
  /**
   * `errorCode`: the HarnessError code when the run was refused before it ran, e.g.
   * "sandbox_config_unapproved" (the host then offers Show Config / Allow, see sandbox/approve).
   */
  "runs/ended": {
    workspaceFolder: string;
    threadId: string;
    runId: string;
    status: FinalRunStatus;
    error?: string;
    errorCode?: string;
    needsUser?: boolean;
    /** The run paused on tool calls that wait on the user's decision (issue 13). */
    pendingApprovals?: PendingApproval[];
  };
}

/**
 * Requests from the harness to the host (issue 25): a model call on a vscode.lm model, which only
 * the extension host can reach (protocol/lm.ts). Refused with `data.code` an LmErrorCode.
 */
export interface HarnessToHostRequests {
  "lm/chat": { params: LmChatParams; result: LmChatResult };
}

/** Notifications from the host to the harness: the parts of an `lm/chat` answer as they stream. */
export interface HostToHarnessNotifications {
  "lm/chunk": LmChunk;
}

export type HostRequest = keyof HostToHarness;
export type RequestParams<M extends HostRequest> = HostToHarness[M]["params"];
export type RequestResult<M extends HostRequest> = HostToHarness[M]["result"];

/**
 * Stable error codes carried in JSON-RPC error `data.code` (HarnessError codes, e.g. "invalid_params",
 * "not_initialized", "thread_not_found", "thread_busy", "sandbox_busy", "unknown_model", "storage", "internal").
 * The numeric JSON-RPC code is -32602 for invalid params, -32002 before initialize, -32603 for
 * internal errors and -32000 for the rest: branch on `data.code`.
 */
export interface RpcErrorData {
  code: string;
}
