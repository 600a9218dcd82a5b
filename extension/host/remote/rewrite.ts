/**
 * Where the protocol names a folder or a host path, and how each is carried across to a remote
 * harness and back, through the one WorkspaceMap (workspaceMap.ts). The harness client applies
 * these to every request, answer and notification when it is connected to a remote harness, so
 * the rest of the host (panel, commands, notifications) keeps speaking local paths only.
 *
 * Host paths in answers become local paths for a shared folder and "" otherwise: the existing
 * callers already treat "" as "no file here to open" (a downloaded copy is downloads.ts's).
 */
import type { ArtifactView, DevContainerApproval, HarnessToHost, HostRequest, RequestParams, RequestResult, SkillView, ThreadSummary } from "../../protocol/rpc.js";
import type { FileChangeView } from "../../protocol/changes.js";
import type { WorkspaceMap } from "./workspaceMap.js";

/** Thrown for an attachment that cannot reach a remote harness (unreadable here, too large, or named by path). */
export class RemoteAttachmentError extends Error {
  readonly code = "attachment_unreachable";
}

export function toServerParams<M extends HostRequest>(method: M, params: RequestParams<M>, map: WorkspaceMap): RequestParams<M> {
  if (typeof params !== "object" || params === null || !("workspaceFolder" in params)) {
    if (method === "memory/promote") return promoteParams(params as RequestParams<"memory/promote">, map);
    return params;
  }
  const out: Record<string, unknown> = { ...params, workspaceFolder: map.toServer((params as { workspaceFolder: string }).workspaceFolder) };
  // A remote harness never reads a path of this machine: attachments go as bytes (attachments.ts) before this.
  if (method === "runs/start" && Array.isArray(out["files"]) && (out["files"] as string[]).length > 0) {
    throw new RemoteAttachmentError("Attachments reach a remote harness as uploads (uploads/put), never as paths.");
  }
  return out as RequestParams<M>;
}

function promoteParams(p: RequestParams<"memory/promote">, map: WorkspaceMap): RequestParams<"memory/promote"> {
  // A workspace section is named by the folder's real path, which on a remote harness is the server's.
  return p.workspace !== undefined ? { ...p, workspace: map.toServer(p.workspace) } : p;
}

const thread = (t: ThreadSummary, map: WorkspaceMap): ThreadSummary => ({ ...t, workspace_folder: map.toLocal(t.workspace_folder) ?? "" });
const artifact = (a: ArtifactView, map: WorkspaceMap): ArtifactView => ({ ...a, host_path: map.localPath(a.host_path) ?? "" });
const change = (c: FileChangeView, map: WorkspaceMap): FileChangeView => ({ ...c, host_path: map.localPath(c.host_path) ?? "" });
const skill = (s: SkillView, map: WorkspaceMap): SkillView => ({ ...s, path: map.localPath(s.path) ?? "", ...(s.shadowed_by !== undefined ? { shadowed_by: map.localPath(s.shadowed_by) ?? "" } : {}) });
const approval = (a: DevContainerApproval, map: WorkspaceMap): DevContainerApproval => ({
  ...a,
  workspaceFolder: map.toLocal(a.workspaceFolder) ?? a.workspaceFolder,
  configPath: map.localPath(a.configPath) ?? "",
});

type Rewriters = { [M in HostRequest]?: (r: RequestResult<M>, map: WorkspaceMap) => RequestResult<M> };

const results: Rewriters = {
  "threads/list": (r, map) => r.map((t) => thread(t, map)),
  "threads/create": thread,
  "threads/rename": thread,
  "threads/state": (r, map) => ({ ...r, artifacts: r.artifacts.map((a) => artifact(a, map)) }),
  "approvals/proposed": (r, map) => ({ ...r, host_path: map.localPath(r.host_path) ?? "" }),
  "changes/list": (r, map) => r.map((c) => change(c, map)),
  "sandbox/approval": approval,
  "sandbox/approve": (r, map) => ({ ...r, approval: approval(r.approval, map) }),
  "skills/list": (r, map) => ({ ...r, skills: r.skills.map((s) => skill(s, map)) }),
  "skills/setEnabled": (r, map) => ({ ...r, skills: r.skills.map((s) => skill(s, map)) }),
};

export function toLocalResult<M extends HostRequest>(method: M, result: RequestResult<M>, map: WorkspaceMap): RequestResult<M> {
  const rewrite = results[method];
  return rewrite && result !== null && result !== undefined ? rewrite(result, map) : result;
}

/** Notifications name the server's folder; the host compares local ones (a folder no local one maps to stays as it is: nothing matches it). */
export function toLocalNotification<K extends keyof HarnessToHost>(method: K, params: HarnessToHost[K], map: WorkspaceMap): HarnessToHost[K] {
  if (typeof params === "object" && params !== null && "workspaceFolder" in params && typeof params.workspaceFolder === "string") {
    const local = map.toLocal(params.workspaceFolder);
    if (local !== undefined) return { ...params, workspaceFolder: local };
  }
  return params;
}
