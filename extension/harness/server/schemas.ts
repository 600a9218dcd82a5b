/**
 * Params schemas of the host → harness requests (extension/protocol/rpc.ts), checked at the trust
 * boundary before any handler runs. Settings are checked twice on purpose: here for their shape,
 * then by parseHarnessConfig for what the harness config requires (URLs, names, duplicates).
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import type { HostRequest, RequestParams } from "../../protocol/rpc.js";
import { THREAD_ID_PATTERN } from "../threads/threadDirs.js";
import { DECISION_LIMITS } from "../../protocol/approvalLimits.js";
import { SECTION_NAMES } from "../memory/scope.js";

const absolutePath = z.string().min(1).refine(isAbsolute, { message: "must be an absolute path" });
const workspaceFolder = absolutePath;
const virtualPath = z.string().startsWith("/mnt/user-data/", { message: "a virtual path under /mnt/user-data/" }).max(4096);
const threadId = z.string().regex(THREAD_ID_PATTERN, { message: "use 1-64 characters from A-Z, a-z, 0-9, '_' and '-'" });

const mode = z.enum(["auto", "ask", "deny"]);
/** A tool call a decision names: the same limits as the panel's (protocol/approvalLimits.ts). */
const toolCallId = z.string().min(1).max(DECISION_LIMITS.maxIdChars);

const ModelSettingZ = z.object({
  name: z.string().min(1),
  model: z.string().min(1),
  base_url: z.string().optional(),
  api_key_env: z.string().optional(),
  display_name: z.string().optional(),
  supports_vision: z.boolean().optional(),
  supports_thinking: z.boolean().optional(),
  // Every ModelSetting key must be listed: zod strips the unlisted ones, and a stripped key is a
  // setting the user made that silently never reaches the model (their values are checked again
  // by parseHarnessConfig / models/thinking.ts).
  supports_reasoning_effort: z.boolean().optional(),
  reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).optional(),
  when_thinking_enabled: z.record(z.string(), z.unknown()).optional(),
  when_thinking_disabled: z.record(z.string(), z.unknown()).optional(),
  thinking: z.record(z.string(), z.unknown()).optional(),
  pricing_provider: z.string().optional(),
});

export const HarnessSettingsZ = z.object({
  models: z.array(ModelSettingZ),
  default_model: z.string().optional(),
  title_model: z.string().optional(),
  sandbox: z.object({
    provider: z.enum(["auto", "local", "devcontainer"]),
    allow_host_commands: z.boolean(),
    bash_timeout_seconds: z.number().positive().optional(),
  }),
  workspace_trusted: z.boolean(),
  approval: z
    .object({ read: mode, write: mode, protected: mode, shell: mode, mcp: mode, web: mode, other: mode })
    .partial()
    .strict()
    .optional(),
  subagents: z.object({ enabled: z.boolean() }).strict().optional(),
  memory: z.object({ enabled: z.boolean() }).strict().optional(),
  token_budget: z.object({ max_tokens_per_run: z.number().int().min(0) }).strict().optional(),
  max_turns: z.number().int().min(1).optional(),
  summarization: z.object({ enabled: z.boolean(), trigger_tokens: z.number().int().min(0), keep_messages: z.number().int().min(0) }).strict().optional(),
});

type Schemas = { [M in HostRequest]: z.ZodType<RequestParams<M>> };

export const paramsSchemas: Schemas = {
  "harness/initialize": z.object({ dataDir: absolutePath, settings: HarnessSettingsZ }),
  "harness/configure": z.object({ settings: HarnessSettingsZ, apiKeys: z.record(z.string(), z.string()).optional() }),
  "threads/list": z.object({ workspaceFolder }),
  "threads/create": z.object({ workspaceFolder, title: z.string().max(500).optional() }),
  "threads/rename": z.object({ workspaceFolder, threadId, title: z.string().trim().min(1).max(500) }),
  "threads/delete": z.object({ workspaceFolder, threadId }),
  "threads/state": z.object({ workspaceFolder, threadId }),
  "threads/compact": z.object({ workspaceFolder, threadId, model: z.string().min(1).optional() }),
  "runs/start": z
    .object({
      workspaceFolder,
      threadId,
      prompt: z.string(),
      files: z.array(absolutePath).max(100).optional(),
      uploaded: z.array(z.string().min(1).max(255)).max(100).optional(),
      model: z.string().min(1).optional(),
      planMode: z.boolean().optional(),
      idempotencyKey: z.string().min(1).max(200).optional(),
      multitask: z.enum(["reject", "interrupt"]).optional(),
      rejectPending: z.boolean().optional(),
    })
    // Files alone are a message (DeerFlow's upload-only turn).
    .refine((p) => p.prompt.trim() !== "" || (p.files ?? []).length + (p.uploaded ?? []).length > 0, { message: "a run needs a non-empty prompt or files", path: ["prompt"] }),
  "runs/decide": z.object({
    workspaceFolder,
    threadId,
    decisions: z
      .array(
        z.object({
          tool_call_id: toolCallId,
          decision: z.enum(["approve", "reject"]),
          reason: z.string().max(DECISION_LIMITS.maxReasonChars).optional(),
          always_allow: z.boolean().optional(),
        }),
      )
      .min(1)
      .max(DECISION_LIMITS.maxPending),
    model: z.string().min(1).optional(),
  }),
  "approvals/proposed": z.object({ workspaceFolder, threadId, toolCallId }),
  "runs/cancel": z.object({ workspaceFolder, runId: z.string().min(1) }),
  "runs/list": z.object({ workspaceFolder, threadId }),
  "changes/list": z.object({ workspaceFolder, runId: z.string().min(1) }),
  "changes/before": z.object({ workspaceFolder, runId: z.string().min(1), path: virtualPath }),
  "changes/revert": z.object({
    workspaceFolder,
    runId: z.string().min(1),
    paths: z.array(virtualPath).max(1000).optional(),
    allowProtected: z.boolean().optional(),
  }),
  "events/subscribe": z.object({ workspaceFolder, threadId, afterSeq: z.number().int().min(0) }),
  "events/unsubscribe": z.object({ subscriptionId: z.string().min(1) }),
  "files/read": z.object({ workspaceFolder, threadId, path: virtualPath }),
  // base64 of at most the 80 MB message; the uploads limits are checked on the decoded bytes.
  "uploads/put": z.object({ workspaceFolder, threadId, name: z.string().min(1).max(255), base64: z.string().max(80 * 1024 * 1024).regex(/^[A-Za-z0-9+/]*={0,2}$/) }),
  "images/get": z.object({ workspaceFolder, sha256: z.string().regex(/^[0-9a-f]{64}$/, { message: "a lowercase hex sha256" }) }),
  "images/clear": z.object({ workspaceFolder, threadId }),
  "sandbox/info": z.object({ workspaceFolder, threadId: threadId.optional() }),
  "sandbox/rebuild": z.object({ workspaceFolder }),
  "sandbox/approval": z.object({ workspaceFolder }),
  "sandbox/approve": z.object({
    workspaceFolder,
    fingerprint: z.string().regex(/^[0-9a-f]{64}$/, { message: "the full lowercase hex fingerprint sandbox/approval returned" }),
    retryRunId: z.string().min(1).optional(),
  }),
  "mcp/list": z.object({ workspaceFolder, start: z.boolean().optional() }),
  "mcp/approve": z.object({
    workspaceFolder,
    server: z.string().min(1).max(200),
    fingerprint: z.string().regex(/^[0-9a-f]{16,64}$/, { message: "the hex fingerprint mcp/list returned" }),
  }),
  "memory/get": z.object({}).strict(),
  // The document itself is validated by the memory module (memory_invalid with the field at fault).
  "memory/set": z.object({ memory: z.unknown() }).strict(),
  "memory/clear": z.object({}).strict(),
  "memory/promote": z.union([
    z.object({ factId: z.string().min(1).max(200) }).strict(),
    z.object({ workspace: absolutePath, section: z.enum(SECTION_NAMES) }).strict(),
  ]),
  "skills/list": z.object({ workspaceFolder }).strict(),
  // A name as front matter may have it (the catalogue refuses one it does not know).
  "skills/setEnabled": z.object({ workspaceFolder, name: z.string().min(1).max(200), enabled: z.boolean() }).strict(),
};
