/**
 * `deerflow serve`'s HTTP API (Hono): the subset of the LangGraph Platform API that
 * `@langchain/langgraph-sdk` and DeerFlow's web UI use, over the same run system as the CLI and
 * the panel. Every run goes through launchRun (runs/launcher.ts → startRun); nothing here
 * prepares a run itself. Every request needs the bearer token or a signed-in session (session.ts),
 * from a page of the server's own origin (or an `--allow-origin` one) and under a host name it
 * answers to (origin.ts); bad input is a 4xx with a JSON `{error, message}`, never a stack.
 */
import { randomUUID } from "node:crypto";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { streamSSE } from "hono/streaming";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { HarnessError, errorMessage } from "../errors.js";
import { isDatabaseUnavailable } from "../store/postgres/errors.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { launchRun } from "../runs/launcher.js";
import type { Runs } from "../server/runs.js";
import { deleteThread } from "../store/deleteThread.js";
import { threadDirs, validateThreadId, type ThreadDirs } from "../threads/threadDirs.js";
import { existingUpload } from "../threads/uploads.js";
import type { UploadedFile } from "../state/threadState.js";
import type { RunRecord } from "../store/runs.js";
import type { ThreadRecord } from "../store/threads.js";
import { mountAuth, serveAuth } from "./session.js";
import { originGuard, type OriginPolicy } from "./origin.js";
import { mountGateway, type GatewayServices } from "./gateway.js";
import { modesFilter, resumePoint, streamRun } from "./stream.js";
import { StreamSlots } from "./streamSlots.js";
import { ASSISTANT_ID, runView, stateView, threadView } from "./views.js";
import type { ServedWorkspace, Workspaces } from "./workspaces.js";
import { readThreadState } from "../threads/threadStateView.js";
import { pausedRunOf } from "../runs/gateway.js";

export interface ServeOptions {
  workspaces: Workspaces;
  /** The harness's session, log and memory: DeerFlow's skills, MCP and memory pages read them (gateway.ts). */
  services?: GatewayServices;
  /** The harness's runs: what a run of a workspace gets (sandbox, memory, skills, MCP) is theirs to say. */
  runs: Runs;
  config: HarnessConfig;
  token: string;
  /** Which pages (Origin) and host names (Host) the server answers: `--host` and `--allow-origin` (origin.ts). */
  origins: OriginPolicy;
  /** `--model` / `--base-url`: the default of a run that names no `context.model_name`. */
  model?: string;
  baseURL?: string;
  log: (line: string) => void;
  /** Lines for DEERFLOW_SERVE_DEBUG=1 only (event streams opening and closing). */
  debug?: (line: string) => void;
}

/** HTTP status of a HarnessError code: the caller's mistake (4xx) or ours (500). */
function statusOf(code: string): 400 | 403 | 404 | 409 | 429 | 500 {
  if (code === "too_many_streams") return 429;
  if (code === "thread_not_found" || code === "run_not_found" || code === "file_not_found") return 404;
  if (code === "path_denied" || code === "path_protected") return 403;
  if (code === "thread_busy" || code === "approval_pending" || code === "thread_exists") return 409;
  if (["usage", "invalid_params", "invalid_thread_id", "unknown_model", "no_models", "workspace_mismatch"].includes(code)) return 400;
  return 500;
}

const MessageZ = z.looseObject({ role: z.string().optional(), type: z.string().optional(), content: z.unknown() });
const RunBodyZ = z.looseObject({
  assistant_id: z.string(),
  input: z.looseObject({ messages: z.array(MessageZ).min(1) }).nullish(),
  context: z.record(z.string(), z.unknown()).nullish(),
  config: z.looseObject({ configurable: z.record(z.string(), z.unknown()).optional() }).nullish(),
  stream_mode: z.union([z.string(), z.array(z.string())]).nullish(),
  // LangGraph's resume of an interrupted run: here, the decisions on the paused tool calls.
  command: z
    .looseObject({
      resume: z.looseObject({
        decisions: z
          .array(z.strictObject({ tool_call_id: z.string(), decision: z.enum(["approve", "reject"]), reason: z.string().optional(), always_allow: z.boolean().optional() }))
          .min(1),
      }),
    })
    .nullish(),
  multitask_strategy: z.enum(["reject", "interrupt"]).nullish(),
});
const ThreadBodyZ = z.looseObject({
  thread_id: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  // LangGraph's answer to an id that exists: "raise" (409, the default) or "do_nothing" (the existing thread).
  if_exists: z.enum(["raise", "do_nothing"]).nullish(),
});
/** LangGraph's thread statuses: a run on it, a pause for the user's decision, or neither. */
const THREAD_STATUSES = ["idle", "busy", "interrupted", "error"] as const;
const SearchBodyZ = z.looseObject({
  metadata: z.record(z.string(), z.unknown()).nullish(),
  limit: z.number().int().min(1).max(1000).optional(),
  offset: z.number().int().min(0).optional(),
  status: z.enum(THREAD_STATUSES).nullish(),
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at"]).nullish(),
  sort_order: z.enum(["asc", "desc"]).nullish(),
  select: z.array(z.string()).nullish(),
});
// POST /threads/{id}/state: what a client may set of a thread's state is its title (DeerFlow's Rename).
const StateBodyZ = z.looseObject({
  values: z.strictObject({ title: z.string().trim().min(1).max(500) }, { error: "values: only title can be set" }),
});

/**
 * How deep a request body may nest. Nothing we read is deeper than a few levels; a body nested
 * thousands deep would only exhaust the stack of whatever serializes it next (JSON.stringify).
 */
const MAX_BODY_DEPTH = 64;
function deeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Thread metadata only the server writes: which workspace a thread is in, and the approval pause
 * (runs/worker.ts) that decides which tool calls a decision may run. A client setting them could
 * forge a pause; it gets a 400.
 */
const SERVER_METADATA = new Set(["workspace", "pending_approvals", "paused_run"]);
function clientMetadata(meta: Record<string, unknown>, allowWorkspace: boolean): Record<string, unknown> {
  for (const k of Object.keys(meta)) {
    if (SERVER_METADATA.has(k) && !(allowWorkspace && k === "workspace")) {
      throw new HarnessError("invalid_params", `metadata.${k} is the server's to set${k === "workspace" ? ": a thread stays in its workspace" : ""}.`);
    }
  }
  return meta;
}

async function body<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  let raw: unknown = {};
  const text = await c.req.text();
  if (text.trim() !== "") {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new HarnessError("invalid_params", "The request body is not JSON.");
    }
    if (deeperThan(raw, MAX_BODY_DEPTH)) throw new HarnessError("invalid_params", `The request body nests deeper than ${MAX_BODY_DEPTH} levels.`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new HarnessError("invalid_params", `${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  return parsed.data;
}

/** The user's text: the last human message of `input.messages` (string or text blocks). */
function promptOf(messages: ReadonlyArray<z.infer<typeof MessageZ>>): string {
  const m = [...messages].reverse().find((x) => ["user", "human"].includes(x.role ?? x.type ?? ""));
  if (!m) throw new HarnessError("invalid_params", "input.messages has no human message.");
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) {
    return m.content
      .map((b: unknown) => {
        const block = b as { type?: unknown; text?: unknown } | null;
        return block && typeof block === "object" && block.type === "text" && typeof block.text === "string" ? block.text : "";
      })
      .join("");
  }
  throw new HarnessError("invalid_params", "input.messages[].content must be a string or a list of text blocks.");
}

/**
 * The files DeerFlow's UI names on the message (`additional_kwargs.files`, uploaded before with
 * POST /api/threads/{id}/uploads): each must already be in the thread's uploads; the run's
 * UploadsMiddleware gives them to the model as `<current_uploads>`.
 */
function uploadedFilesOf(messages: ReadonlyArray<z.infer<typeof MessageZ>>, dirs: ThreadDirs): UploadedFile[] {
  const m = [...messages].reverse().find((x) => ["user", "human"].includes(x.role ?? x.type ?? ""));
  const kw = (m as { additional_kwargs?: { files?: unknown } } | undefined)?.additional_kwargs;
  if (!Array.isArray(kw?.files)) return [];
  return kw.files.map((f: unknown) => {
    const name = typeof (f as { filename?: unknown } | null)?.filename === "string" ? (f as { filename: string }).filename : "";
    const file = existingUpload(dirs, name);
    if (!file) throw new HarnessError("invalid_params", `Cannot attach ${JSON.stringify(name)}: it is not among this thread's uploaded files; upload it again.`);
    return file;
  });
}

/** A thread's LangGraph status: a run on it, a pause for the user's decision, or neither. */
function threadStatus(t: ThreadRecord, active: RunRecord | undefined): (typeof THREAD_STATUSES)[number] {
  if (active) return "busy";
  const pending = t.metadata.pending_approvals;
  return Array.isArray(pending) && pending.length > 0 ? "interrupted" : "idle";
}

/** The LangGraph routes' prefix of this request: DeerFlow's gateway serves them under /api, SDK clients at the root. */
const prefixOf = (c: Context) => (c.req.path.startsWith("/api/") ? "/api" : "");

export function createApp(o: ServeOptions): Hono {
  const app = new Hono();

  const onError = (err: Error, c: Context) => {
    if (err instanceof HarnessError) {
      const status = statusOf(err.code);
      if (status === 500) o.log(`error: ${err.code}: ${err.message}`);
      return c.json({ error: err.code, message: err.message }, status);
    }
    // Postgres down or restarting: the client may try again; nothing it sent was wrong.
    if (isDatabaseUnavailable(err)) {
      o.log(`database unavailable: ${err.message}`);
      c.header("Retry-After", "5");
      return c.json({ error: "database_unavailable", message: "The server's database is not reachable right now; try again in a few seconds." }, 503);
    }
    o.log(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return c.json({ error: "internal", message: "Internal error; the server's log has the details." }, 500);
  };
  const notFound = (c: Context) => c.json({ error: "not_found", message: `No route ${c.req.method} ${c.req.path}.` }, 404);
  app.onError(onError);
  app.notFound(notFound);
  // A page on another origin, or a host name this server is not (DNS rebinding): 403 before anything else.
  app.use("*", originGuard(o.origins));
  // The bearer token, or DeerFlow's web UI's session cookie (./session.ts).
  app.use("*", serveAuth(o.token));
  // A request body is a message and its settings, never a file upload: 4 MB is plenty, and no
  // client holds the server's memory with a larger one.
  // DeerFlow's upload route takes files: its own cap, the configured uploads.max_total_size plus
  // the multipart framing (gateway.ts checks each file and the total again).
  const jsonLimit: MiddlewareHandler = bodyLimit({ maxSize: 4 * 1024 * 1024, onError: (c) => c.json({ error: "invalid_params", message: "The request body is over 4 MB." }, 413) });
  const uploadLimit: MiddlewareHandler = bodyLimit({ maxSize: o.config.uploads.max_total_size + 1024 * 1024, onError: (c) => c.json({ detail: `The upload is over ${o.config.uploads.max_total_size} bytes.` }, 413) });
  const isUpload = (c: Context) => c.req.method === "POST" && /^\/api\/threads\/[^/]+\/uploads\/?$/.test(c.req.path);
  const limit: MiddlewareHandler = (c, next) => (isUpload(c) ? uploadLimit(c, next) : jsonLimit(c, next));
  app.use("*", limit);

  mountAuth(app, o.token);
  mountGateway(app, { workspaces: o.workspaces, config: o.config, ...(o.model ? { model: o.model } : {}), ...(o.services ? { services: o.services } : {}) });
  // The LangGraph API: at the root for SDK clients, and under /api as DeerFlow's gateway serves it.
  const lg = langGraphRoutes(o, new StreamSlots());
  lg.onError(onError);
  lg.notFound(notFound);
  app.route("/api", lg);
  app.route("/", lg);
  return app;
}

function langGraphRoutes(o: ServeOptions, slots: StreamSlots): Hono {
  const app = new Hono();
  const threadOf = (id: string) => {
    validateThreadId(id);
    return o.workspaces.thread(id);
  };
  const runOf = (ws: ServedWorkspace, threadId: string, runId: string): RunRecord => {
    const run = ws.manager.runs.get(runId);
    if (!run || run.thread_id !== threadId) throw new HarnessError("run_not_found", `Run ${runId} does not exist on thread ${threadId}.`);
    return run;
  };
  const exists = (id: string): boolean => {
    try {
      o.workspaces.thread(id);
      return true;
    } catch (err) {
      if (err instanceof HarnessError && err.code === "thread_not_found") return false;
      throw err;
    }
  };

  /** Admits a run through the one launcher; the worker goes on whether or not anyone streams it. */
  const launch = async (c: Context, threadId: string) => {
    const { ws, thread } = threadOf(threadId);
    const b = await body(c, RunBodyZ);
    if (b.assistant_id !== ASSISTANT_ID) throw new HarnessError("invalid_params", `assistant_id must be "${ASSISTANT_ID}" (DeerFlow's lead agent).`);
    const decisions = b.command?.resume.decisions;
    if (!b.input && !decisions) throw new HarnessError("invalid_params", "input.messages is required (or command.resume.decisions, to decide paused tool calls).");
    // DeerFlow's run context (config.configurable is the older place for the same keys).
    const ctx = { ...(b.config?.configurable ?? {}), ...(b.context ?? {}) };
    // `--model` is one of the models this server offers: naming it is the same as naming none
    // (it runs at `--base-url`); any other name is the configuration's.
    const named = typeof ctx.model_name === "string" && ctx.model_name !== "" && ctx.model_name !== o.model ? ctx.model_name : undefined;
    // A decision continues the paused turn with the paused run's model unless the client names one.
    const paused = decisions ? pausedRunOf(thread) : undefined;
    const model = named ?? (typeof ctx.model_name === "string" && ctx.model_name === o.model ? o.model : (paused?.model ?? o.model));
    const launched = launchRun(
      o.runs.services(ws),
      {
        threadId,
        prompt: b.input ? promptOf(b.input.messages) : "",
        ...(b.input ? { files: uploadedFilesOf(b.input.messages, threadDirs(ws.folder, threadId)) } : {}),
        ...(decisions ? { approvals: decisions } : {}),
        ...(model ? { model } : {}),
        ...(o.baseURL && named === undefined && model === o.model ? { baseURL: o.baseURL } : {}),
        planMode: ctx.is_plan_mode === true,
        ...(typeof ctx.subagent_enabled === "boolean" ? { subagents: ctx.subagent_enabled } : {}),
        ...(ctx.thinking_enabled !== undefined ? { context: { thinking_enabled: ctx.thinking_enabled } } : {}),
        multitask: b.multitask_strategy ?? "reject",
      },
      { onCrash: (runId, err) => o.log(`run ${runId} crashed: ${errorMessage(err)}`) },
    );
    return { ws, run: launched.admission.run, streamMode: b.stream_mode };
  };

  const location = (c: Context, run: RunRecord) => `${prefixOf(c)}/threads/${run.thread_id}/runs/${run.run_id}`;

  /** An event stream in a slot taken with slots.acquire() (a 429 past the cap), freed when the stream ends or its client goes. */
  const sse = (c: Context, ws: ServedWorkspace, run: RunRecord, from: NonNullable<ReturnType<typeof resumePoint>>, streamMode: unknown, release: () => void) => {
    c.header("Content-Location", location(c, run));
    c.header("Location", `${location(c, run)}/stream`);
    const res = streamSSE(c, async (s) => {
      const abort = new AbortController();
      s.onAbort(() => abort.abort());
      o.debug?.(`event stream of run ${run.run_id} opened (${slots.count} open)`);
      try {
        await streamRun(s, ws.manager, run, { ...from, include: modesFilter(streamMode), signal: abort.signal, checkpointer: ws.store.checkpointer });
      } finally {
        release();
        o.debug?.(`event stream of run ${run.run_id} closed (${slots.count} open)`);
      }
    });
    // A proxy (Next's dev server, nginx) must pass each event on as it comes: without
    // no-transform Next gzips the stream and holds it to the end.
    res.headers.set("Cache-Control", "no-cache, no-transform");
    res.headers.set("X-Accel-Buffering", "no");
    // streamSSE says keep-alive; a client that asked to close gets its socket closed after the stream.
    if (/\bclose\b/i.test(c.req.header("Connection") ?? "")) res.headers.set("Connection", "close");
    return res;
  };

  /** A thread as LangGraph answers it, with the title the thread row keeps (generated, or the user's rename). */
  const threadJson = (ws: ServedWorkspace, t: ThreadRecord, values?: Record<string, unknown>) => {
    const active = ws.manager.runs.active(t.threadId);
    return { ...threadView(t, active, values ? { ...values, title: t.title ?? values.title ?? null } : undefined), status: threadStatus(t, active) };
  };

  app.post("/threads", async (c) => {
    const b = await body(c, ThreadBodyZ);
    const meta = clientMetadata(b.metadata ?? {}, true);
    const threadId = b.thread_id ?? randomUUID();
    validateThreadId(threadId);
    if (b.thread_id !== undefined && exists(threadId)) {
      if (b.if_exists === "do_nothing") {
        const { ws, thread } = threadOf(threadId);
        return c.json(threadJson(ws, thread));
      }
      throw new HarnessError("thread_exists", `Thread ${threadId} already exists.`);
    }
    const ws = o.workspaces.byName(typeof meta.workspace === "string" ? meta.workspace : undefined);
    const t = ws.store.threads.create({ threadId, workspaceFolder: ws.folder, metadata: { ...meta, workspace: ws.name } });
    return c.json(threadJson(ws, t));
  });

  app.post("/threads/search", async (c) => {
    const b = await body(c, SearchBodyZ);
    const wanted = Object.entries(b.metadata ?? {});
    const key = b.sort_by ?? "updated_at";
    const order = b.sort_order === "asc" ? 1 : -1;
    const sortValue = (t: ThreadRecord, status: string): string | number =>
      key === "thread_id" ? t.threadId : key === "status" ? status : key === "created_at" ? t.createdAt : t.updatedAt;
    const all = o.workspaces.list
      .flatMap((ws) => ws.store.threads.list().map((t) => ({ ws, t, status: threadStatus(t, ws.manager.runs.active(t.threadId)) })))
      .filter(({ t }) => wanted.every(([k, v]) => JSON.stringify(t.metadata[k]) === JSON.stringify(v)))
      .filter(({ status }) => !b.status || status === b.status)
      .sort((x, y) => {
        const a = sortValue(x.t, x.status);
        const z2 = sortValue(y.t, y.status);
        return (a < z2 ? -1 : a > z2 ? 1 : x.t.threadId.localeCompare(y.t.threadId)) * order;
      });
    const page = all.slice(b.offset ?? 0, (b.offset ?? 0) + (b.limit ?? 10));
    // The list a sidebar shows: each thread's title from its row, so a page reads no checkpoint.
    const rows = page.map(({ ws, t }) => threadJson(ws, t, { title: t.title }));
    const select = b.select;
    return c.json(select && select.length > 0 ? rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => select.includes(k)))) : rows);
  });

  app.get("/threads/:id", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    return c.json(threadJson(ws, thread, await readThreadState(ws.store.checkpointer, thread.threadId)));
  });

  app.patch("/threads/:id", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    const b = await body(c, ThreadBodyZ);
    for (const [k, v] of Object.entries(clientMetadata(b.metadata ?? {}, false))) ws.store.threads.setMetadata(thread.threadId, k, v);
    return c.json(threadJson(ws, ws.store.threads.get(thread.threadId)!));
  });

  app.delete("/threads/:id", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    ws.manager.recover(thread.threadId);
    await deleteThread(ws.store, thread.threadId);
    return c.body(null, 204);
  });

  const stateOf = async (ws: ServedWorkspace, thread: ThreadRecord): Promise<Record<string, unknown>> => {
    const tuple = await ws.store.checkpointer.getTuple({ configurable: { thread_id: thread.threadId, checkpoint_ns: "" } });
    const view = stateView(thread.threadId, tuple);
    return { ...view, values: { ...(view.values as Record<string, unknown>), title: thread.title ?? (view.values as { title?: unknown }).title ?? null } };
  };

  app.get("/threads/:id/state", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    return c.json(await stateOf(ws, thread));
  });

  // DeerFlow's Rename: the title is the thread row's (a generated title never overwrites the user's).
  app.post("/threads/:id/state", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    const b = await body(c, StateBodyZ);
    const renamed = ws.store.threads.rename(thread.threadId, b.values.title);
    const state = await stateOf(ws, renamed);
    return c.json({ checkpoint: state.checkpoint });
  });

  app.post("/threads/:id/history", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    const b = await body(c, z.looseObject({ limit: z.number().int().min(1).max(1000).optional() }));
    const out: Record<string, unknown>[] = [];
    for await (const tuple of ws.store.checkpointer.list({ configurable: { thread_id: thread.threadId, checkpoint_ns: "" } }, { limit: b.limit ?? 10 })) {
      out.push(stateView(thread.threadId, tuple));
    }
    return c.json(out);
  });

  app.post("/threads/:id/runs", async (c) => {
    const { run } = await launch(c, c.req.param("id"));
    c.header("Content-Location", location(c, run));
    return c.json(runView(run));
  });

  app.post("/threads/:id/runs/stream", async (c) => {
    // The slot first: a stream refused for the cap starts no run.
    const release = slots.acquire();
    try {
      const { ws, run, streamMode } = await launch(c, c.req.param("id"));
      return sse(c, ws, run, { afterSeq: 0 }, streamMode, release);
    } catch (err) {
      release();
      throw err;
    }
  });

  // Create, wait for the end, answer the thread's state (LangGraph's runs/wait).
  app.post("/threads/:id/runs/wait", async (c) => {
    const { ws, run } = await launch(c, c.req.param("id"));
    c.header("Content-Location", location(c, run));
    await ws.manager.waitForEnd(run, { signal: c.req.raw.signal });
    return c.json(await readThreadState(ws.store.checkpointer, run.thread_id));
  });

  app.get("/threads/:id/runs", (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    return c.json(ws.manager.runs.listByThread(thread.threadId).map(runView));
  });

  app.get("/threads/:id/runs/:run", (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    return c.json(runView(runOf(ws, thread.threadId, c.req.param("run"))));
  });

  app.get("/threads/:id/runs/:run/stream", (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    const run = runOf(ws, thread.threadId, c.req.param("run"));
    // -1 is the SDK's "from the start" (its reconnect after a page reload): the whole run again.
    const from = resumePoint(c.req.header("Last-Event-ID"));
    if (!from) throw new HarnessError("invalid_params", "Last-Event-ID must be an event id this server sent, or -1.");
    const release = slots.acquire();
    try {
      return sse(c, ws, run, from, c.req.queries("stream_mode"), release);
    } catch (err) {
      release();
      throw err;
    }
  });

  app.get("/threads/:id/runs/:run/join", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    const run = runOf(ws, thread.threadId, c.req.param("run"));
    const abort = new AbortController();
    c.req.raw.signal.addEventListener("abort", () => abort.abort(), { once: true });
    await ws.manager.waitForEnd(run, { signal: abort.signal });
    return c.json(await readThreadState(ws.store.checkpointer, thread.threadId));
  });

  app.post("/threads/:id/runs/:run/cancel", (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    runOf(ws, thread.threadId, c.req.param("run"));
    const { outcome, run } = ws.manager.cancel(c.req.param("run"));
    if (outcome === "not_found" || !run) throw new HarnessError("run_not_found", `Run ${c.req.param("run")} does not exist.`);
    // DeerFlow's wording: its web UI treats a 409 as harmless only when it says "is not cancellable".
    if (outcome === "already_finished") return c.json({ ...runView(run), outcome, detail: `Run ${run.run_id} is not cancellable (status: ${run.status})` }, 409);
    return c.json({ ...runView(run), outcome });
  });

  return app;
}
