/**
 * The host → harness methods (extension/protocol/rpc.ts), one small handler each. Every handler
 * gets params already validated against its schema; whatever it throws is answered as a
 * JSON-RPC error with `data.code` (rpcErrors.ts), so no request can take the process down.
 */
import type { Connection } from "vscode-languageserver/node.js";
import type { z } from "zod";
import type { HostRequest, RequestParams, RequestResult } from "../../protocol/rpc.js";
import { describeStorageDriver, storageDriver } from "../store/sqlite/open.js";
import { deleteThread } from "../store/deleteThread.js";
import { HarnessError } from "../errors.js";
import type { Logger } from "./logger.js";
import { parseParams, toResponseError } from "./rpcErrors.js";
import type { Runs } from "./runs.js";
import { rebuildSandbox, sandboxInfo } from "./sandbox.js";
import { approveSandbox, sandboxApproval } from "./approval.js";
import { paramsSchemas } from "./schemas.js";
import type { Session } from "./session.js";
import type { Subscriptions } from "./subscriptions.js";
import { clearViewedImages, getImage, readThreadFile, proposedEditView, readStateView, requireThread, threadSummary } from "./threads.js";
import { changeBefore, listRunChanges, revertRunChanges } from "./changes.js";
import type { Workspaces } from "./workspaces.js";
import { compactThreadRpc } from "./compact.js";
import { mcpApprove, mcpList } from "./mcp.js";
import type { ServerMemory } from "./memory.js";
import { listSkills, setSkillEnabled } from "./skills.js";

export interface HarnessServices {
  session: Session;
  workspaces: Workspaces;
  runs: Runs;
  subscriptions: Subscriptions;
  log: Logger;
  version: string;
  /** Long-term memory of the data directory (issue 15). */
  memory: ServerMemory;
}

export type Handlers = { [M in HostRequest]: (p: RequestParams<M>) => RequestResult<M> | Promise<RequestResult<M>> };

export function handlers(s: HarnessServices): Handlers {
  const { session, workspaces, runs, subscriptions } = s;
  return {
    "harness/initialize": (p) => {
      // The SQLite driver is chosen here, once per process, so a runtime with none fails the
      // initialize with what to do (the host shows it with Show Logs) instead of every request.
      const storage = storageDriver();
      session.initialize(p.dataDir, p.settings);
      s.log.info(`Harness ${s.version} initialized (pid ${process.pid}, data in ${p.dataDir}).`);
      s.log.info(describeStorageDriver(storage));
      s.memory.start();
      return { version: s.version, pid: process.pid };
    },
    "harness/configure": (p) => {
      session.configure(p.settings, p.apiKeys);
      // Names only: a key's value is never logged.
      const keys = Object.keys(p.apiKeys ?? {});
      s.log.info(`Settings updated${keys.length > 0 ? `; API keys set for ${keys.join(", ")}` : ""}.`);
      return null;
    },
    "threads/list": (p) => {
      const ws = workspaces.get(p.workspaceFolder);
      return ws.store.threads.list().map((t) => threadSummary(ws, t));
    },
    "threads/create": (p) => {
      const ws = workspaces.get(p.workspaceFolder);
      const title = p.title?.trim();
      return threadSummary(ws, ws.store.threads.create(title ? { title } : {}));
    },
    "threads/rename": (p) => {
      const ws = workspaces.get(p.workspaceFolder);
      requireThread(ws, p.threadId);
      return threadSummary(ws, ws.store.threads.rename(p.threadId, p.title.trim()));
    },
    "threads/delete": async (p) => {
      const ws = workspaces.get(p.workspaceFolder);
      if (!ws.store.threads.get(p.threadId)) return { deleted: false };
      // The panel's confirmation says a run in progress is stopped: stop it, then delete (which
      // refuses, thread_busy, if another run was admitted meanwhile).
      await runs.stopThreadRuns(ws, p.threadId);
      // A clear of its viewed images writes a checkpoint after an await: it would recreate rows.
      if (ws.clearing.has(p.threadId)) {
        throw new HarnessError("thread_busy", `Thread ${p.threadId} is busy: its viewed images are being cleared. Delete it when that has finished.`);
      }
      const deleted = await deleteThread(ws.store, p.threadId);
      // Its MCP sessions end with it (a stateful server's per-thread state is gone too).
      await workspaces.closeMcpThread(ws, p.threadId);
      if (deleted.folder === "not_followed") {
        s.log.warn(`Thread ${p.threadId} deleted; its folder was left alone: .deerflow or .deerflow/threads in ${ws.folder} is not a real folder.`);
      }
      return { deleted: true };
    },
    "threads/state": (p) => readStateView(workspaces.get(p.workspaceFolder), p.threadId),
    "threads/compact": (p) => compactThreadRpc(workspaces.get(p.workspaceFolder), session, s.memory, s.log, p),
    "runs/start": (p) => runs.start(p),
    "runs/decide": (p) => runs.decide(p),
    "uploads/put": (p) => runs.put(p),
    "approvals/proposed": (p) => proposedEditView(workspaces.get(p.workspaceFolder), p.threadId, p.toolCallId),
    "runs/cancel": (p) => runs.cancel(p),
    "runs/list": (p) => runs.list(p),
    "changes/list": (p) => listRunChanges(workspaces.get(p.workspaceFolder), p),
    "changes/before": (p) => changeBefore(workspaces.get(p.workspaceFolder), p),
    "changes/revert": (p) => revertRunChanges(workspaces.get(p.workspaceFolder), s.log, p),
    "events/subscribe": (p) => {
      const ws = workspaces.get(p.workspaceFolder);
      requireThread(ws, p.threadId);
      return { subscriptionId: subscriptions.subscribe(ws, p.threadId, p.afterSeq) };
    },
    "events/unsubscribe": (p) => {
      subscriptions.unsubscribe(p.subscriptionId);
      return null;
    },
    "files/read": (p) => readThreadFile(workspaces.get(p.workspaceFolder), p),
    "images/get": (p) => getImage(workspaces.get(p.workspaceFolder), p),
    "images/clear": async (p) => {
      await clearViewedImages(workspaces.get(p.workspaceFolder), p.threadId);
      return null;
    },
    "sandbox/info": (p) => sandboxInfo(workspaces, p),
    "sandbox/rebuild": (p) => rebuildSandbox(workspaces, session, s.log, p),
    "sandbox/approval": (p) => sandboxApproval(workspaces, session, p),
    "sandbox/approve": (p) => approveSandbox(workspaces, session, runs, s.log, p),
    "mcp/list": (p) => mcpList(workspaces, p),
    "mcp/approve": (p) => mcpApprove(workspaces, p),
    "memory/get": () => s.memory.get(),
    "memory/set": (p) => s.memory.set(p),
    "memory/clear": () => s.memory.clear(),
    "memory/promote": (p) => s.memory.promote(p),
    "skills/list": (p) => listSkills(workspaces, session, s.log, p),
    "skills/setEnabled": (p) => setSkillEnabled(workspaces, session, s.log, p),
  };
}

/** What registerHandlers needs of a connection: the harness's stdio one, or a `deerflow serve` WebSocket's (serve/rpc.ts). */
export type RequestConnection = Pick<Connection, "onRequest">;

/**
 * Registers every handler on the connection behind validation and error shaping. `overrides`
 * replace some handlers (a remote harness answers harness/initialize and harness/configure its
 * own way) and still get validated params.
 */
export function registerHandlers(connection: RequestConnection, s: HarnessServices, overrides: Partial<Handlers> = {}): void {
  const table = { ...handlers(s), ...overrides };
  for (const method of Object.keys(table) as HostRequest[]) {
    const handler = table[method] as (p: unknown) => unknown;
    const schema = paramsSchemas[method] as z.ZodType<unknown>;
    // By-name params arrive as (params, token); no params as (token) alone.
    connection.onRequest(method, async (...args: unknown[]) => {
      try {
        const params = parseParams(schema, args.length >= 2 ? args[0] : undefined, method);
        if (method !== "harness/initialize" && !s.session.initialized) {
          throw new HarnessError("not_initialized", `${method}: the harness is not initialized yet; send harness/initialize first.`);
        }
        return await handler(params);
      } catch (err) {
        return toResponseError(err, method, s.log);
      }
    });
  }
}
