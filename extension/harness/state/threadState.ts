/**
 * ThreadState: LangChain's agent state (`messages`) plus DeerFlow's business channels.
 *
 * Declared as one agent-level `StateSchema` (the recipe's proven way: `ReducedValue` carries the
 * reducer; `Annotation.Root` fails inside createAgent, whose hook contract the agent graph keeps). Channels without a reducer are LastValue:
 * two writes to them in one superstep are an error, which is what we want for `title` and
 * `thread_data` (one writer each).
 */
import { StateSchema, ReducedValue } from "@langchain/langgraph";
import { z } from "zod";
import { mergeArtifacts, mergePromoted, mergeSandbox, mergeTodos, mergeViewedImages } from "./reducers.js";
import type { PromotedTools, SandboxState, Todo, ViewedImage } from "./reducers.js";
import { mergeSkillContext, type SkillContextEntry } from "../skills/context.js";

export const SandboxStateZ = z.object({ sandbox_id: z.string().nullable().optional() });
export const ViewedImageZ = z.object({ mime_type: z.string(), size: z.number(), sha256: z.string() });
export const TodoZ = z.object({ content: z.string(), status: z.enum(["pending", "in_progress", "completed"]) });
export const ThreadDataZ = z.object({
  workspace_path: z.string(),
  uploads_path: z.string(),
  outputs_path: z.string(),
});
export const UploadedFileZ = z.object({
  filename: z.string(),
  size: z.number(),
  /** Virtual path, `/mnt/user-data/uploads/<name>`. */
  path: z.string(),
  extension: z.string(),
});

const ToolClassZ = z.enum(["read", "write", "protected", "shell", "mcp", "web", "other"]);
const SandboxKindZ = z.enum(["local", "devcontainer"]);
/** An "Always allow" rule (approvals/alwaysAllow.ts). */
export const AlwaysAllowRuleZ = z.object({ tool: z.string(), class: ToolClassZ, sandbox: SandboxKindZ, prefix: z.string().optional(), host: z.string().optional() });
export const PendingApprovalsZ = z
  .array(
    z.object({
      tool_call_id: z.string(),
      name: z.string(),
      args: z.record(z.string(), z.unknown()),
      class: ToolClassZ,
      reason: z.string(),
      message_id: z.string().optional(),
      index: z.number().optional(),
      fingerprint: z.string().optional(),
      sandbox: SandboxKindZ.optional(),
      always_allow: z.object({ rule: AlwaysAllowRuleZ, label: z.string() }).optional(),
      mcp: z.object({ server: z.string(), tool: z.string(), source: z.enum(["user", "workspace"]), annotations: z.record(z.string(), z.boolean()).optional() }).optional(),
    }),
  )
  .nullable()
  .optional();
/** Rules; a thread from before issue 21 may still hold tool names, which are read as no rule. */
export const AlwaysAllowZ = z.array(z.union([AlwaysAllowRuleZ, z.string()])).nullable().optional();
/** A loaded skill's reference (skills/context.ts; DeerFlow's SkillEntry): never its body. */
export const SkillContextEntryZ = z.object({ name: z.string(), path: z.string(), description: z.string(), loaded_at: z.number() });
/** What `summary_text` covers (middlewares/summarizationPlan.ts SummaryUpto). */
export const SummaryUptoZ = z.object({ message_id: z.string(), message_count: z.number(), kept_ids: z.array(z.string()) }).nullable().optional();

/** Deferred MCP tools promoted by tool_search (issue 23), scoped by the catalog's hash. */
export const PromotedZ = z.object({ catalog_hash: z.string(), names: z.array(z.string()) });

export type ThreadData = z.infer<typeof ThreadDataZ>;
export type UploadedFile = z.infer<typeof UploadedFileZ>;

export const threadStateFields = {
  sandbox: new ReducedValue(SandboxStateZ.nullable().optional(), {
    inputSchema: SandboxStateZ.nullable().optional(),
    reducer: (a: SandboxState | null | undefined, b: SandboxState | null | undefined) => mergeSandbox(a, b),
  }),
  /** Host paths of the thread's directories. State only: never part of a model request. */
  thread_data: ThreadDataZ.nullable().optional(),
  title: z.string().nullable().optional(),
  artifacts: new ReducedValue(z.array(z.string()).default(() => []), {
    inputSchema: z.array(z.string()).nullable().optional(),
    reducer: (a: string[], b: string[] | null | undefined) => mergeArtifacts(a, b),
  }),
  todos: new ReducedValue(z.array(TodoZ).nullable().optional(), {
    inputSchema: z.array(TodoZ).nullable().optional(),
    reducer: (a: Todo[] | null | undefined, b: Todo[] | null | undefined) => mergeTodos(a, b),
  }),
  uploaded_files: z.array(UploadedFileZ).nullable().optional(),
  /**
   * Tool calls of the last model turn that wait on the user's decision (middlewares/approval.ts).
   * In the checkpoint, so a paused thread stays paused across restarts; the run carrying the
   * decision clears it.
   */
  pending_approvals: PendingApprovalsZ,
  /** The thread's "Always allow" rules (approvals/alwaysAllow.ts): calls they cover no longer ask; deny still wins. */
  approval_always_allow: AlwaysAllowZ,
  /**
   * Non-destructive summarization (issue 15, middlewares/summarization.ts): the summary of the
   * messages up to `summary_upto`, which stay in `messages` but leave the model request.
   */
  summary_text: z.string().nullable().optional(),
  summary_upto: SummaryUptoZ,
  /** Deferred tools the model fetched with tool_search (issue 23, mcp/deferred.ts): DeerFlow's `promoted`. */
  promoted: new ReducedValue(PromotedZ.nullable().optional(), {
    inputSchema: PromotedZ.nullable().optional(),
    reducer: (a: PromotedTools | null | undefined, b: PromotedTools | null | undefined) => mergePromoted(a, b),
  }),
  viewed_images: new ReducedValue(z.record(z.string(), ViewedImageZ).default(() => ({})), {
    inputSchema: z.record(z.string(), ViewedImageZ).nullable().optional(),
    reducer: (a: Record<string, ViewedImage>, b: Record<string, ViewedImage> | null | undefined) => mergeViewedImages(a, b),
  }),
  /**
   * Skills the model loaded (issue 24, DeerFlow's `skill_context`): a read_file of a SKILL.md
   * records it (middlewares/skillToolPolicy.ts); deduped by path, the last 8 kept. The tool
   * policy's "loaded" skills, and what DurableContext keeps visible after a summary.
   */
  skill_context: new ReducedValue(z.array(SkillContextEntryZ).default(() => []), {
    inputSchema: z.array(SkillContextEntryZ).nullable().optional(),
    reducer: (a: SkillContextEntry[], b: SkillContextEntry[] | null | undefined) => mergeSkillContext(a, b),
  }),
};

/** The business channels; the agent graph (agent/graph/build.ts) adds `messages` itself. */
export const ThreadStateSchema = new StateSchema(threadStateFields);

/** The ThreadState keys as DeerFlow names them, in the order `deerflow state` prints them. */
export const THREAD_STATE_KEYS = [
  "messages",
  "title",
  "artifacts",
  "todos",
  "uploaded_files",
  "viewed_images",
  "pending_approvals",
  "approval_always_allow",
  "promoted",
  "summary_text",
  "summary_upto",
  "skill_context",
  "thread_data",
  "sandbox",
] as const;
