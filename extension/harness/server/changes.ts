/**
 * A run's changed files for the panel (issue 13): `changes/list`, `changes/before` (the diff's
 * left side) and `changes/revert`, on the same code as `deerflow changes` / `deerflow revert`.
 */
import type { RequestParams, RequestResult } from "../../protocol/rpc.js";
import { beforeContent, listChanges } from "../changes/view.js";
import { revertRun } from "../changes/revert.js";
import type { Logger } from "./logger.js";
import type { OpenWorkspace } from "./workspaces.js";

export function listRunChanges(ws: OpenWorkspace, p: RequestParams<"changes/list">): RequestResult<"changes/list"> {
  return listChanges(ws.store, ws.manager.runs, p.runId);
}

export function changeBefore(ws: OpenWorkspace, p: RequestParams<"changes/before">): RequestResult<"changes/before"> {
  const bytes = beforeContent(ws.store, ws.manager.runs, p.runId, p.path);
  return { path: p.path, exists: bytes !== null, base64: bytes === null ? null : bytes.toString("base64") };
}

export function revertRunChanges(ws: OpenWorkspace, log: Logger, p: RequestParams<"changes/revert">): RequestResult<"changes/revert"> {
  const result = revertRun(ws.store, ws.manager.runs, {
    runId: p.runId,
    ...(p.paths ? { paths: p.paths } : {}),
    allowProtected: p.allowProtected === true,
  });
  const refused = result.files.filter((f) => f.outcome === "refused");
  const reverted = result.files.filter((f) => f.outcome === "reverted").length;
  log.info(`Run ${p.runId}: ${reverted} file(s) reverted${refused.length > 0 ? `, ${refused.length} refused (${refused.map((f) => `${f.path}: ${f.code}`).join("; ")})` : ""}.`);
  return result;
}
