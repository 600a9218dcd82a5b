/**
 * `deerflow serve`'s HTTP API (Hono): the subset of the LangGraph Platform API that
 * `@langchain/langgraph-sdk` and DeerFlow's web UI use, over the same run system as the CLI and
 * the panel. Every run goes through launchRun (runs/launcher.ts → startRun); nothing here
 * prepares a run itself. Every request needs the bearer token (auth.ts); bad input is a 4xx with
 * a JSON `{error, message}`, never a stack.
 */
import { randomUUID } from "node:crypto";
import { Hono, type Context } from "hono";
import { streamSSE } from "hono/streaming";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { HarnessError, errorMessage } from "../errors.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { launchRun } from "../runs/launcher.js";
import type { Runs } from "../server/runs.js";
import { deleteThread } from "../store/deleteThread.js";
import { validateThreadId } from "../threads/threadDirs.js";
import type { RunRecord } from "../store/runs.js";
import { bearerAuth } from "./auth.js";
import { modesFilter, streamRun } from "./stream.js";
import { ASSISTANT_ID, runView, stateView, threadView } from "./views.js";
import type { ServedWorkspace, Workspaces } from "./workspaces.js";
import { readThreadState } from "../threads/threadStateView.js";
import { pausedRunOf } from "../runs/gateway.js";

export interface ServeOptions {
  workspaces: Workspaces;
  /** The harness's runs: what a run of a workspace gets (sandbox, memory, skills, MCP) is theirs to say. */
  runs: Runs;
  config: HarnessConfig;
  token: string;
  /** `--model` / `--base-url`: the default of a run that names no `context.model_name`. */
  model?: string;
  baseURL?: string;
  log: (line: string) => void;
}

/** HTTP status of a HarnessError code: the caller's mistake (4xx) or ours (500). */
function statusOf(code: string): 400 | 404 | 409 | 500 {
  if (code === "thread_not_found" || code === "run_not_found") return 404;
  if (code === "thread_busy" || code === "approval_pending") return 409;
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
const ThreadBodyZ = z.looseObject({ thread_id: z.string().optional(), metadata: z.record(z.string(), z.unknown()).nullish() });
const SearchBodyZ = z.looseObject({
  metadata: z.record(z.string(), z.unknown()).nullish(),
  limit: z.number().int().min(1).max(1000).optional(),
  offset: z.number().int().min(0).optional(),
});

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

export function createApp(o: ServeOptions): Hono {
  const app = new Hono();

  app.onError((err, c) => {
    if (err instanceof HarnessError) {
      const status = statusOf(err.code);
      if (status === 500) o.log(`error: ${err.code}: ${err.message}`);
      return c.json({ error: err.code, message: err.message }, status);
    }
    o.log(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return c.json({ error: "internal", message: "Internal error; the server's log has the details." }, 500);
  });
  app.notFound((c) => c.json({ error: "not_found", message: `No route ${c.req.method} ${c.req.path}.` }, 404));
  app.use("*", bearerAuth(o.token));
  // A request body is a message and its settings, never a file upload: 4 MB is plenty, and no
  // client holds the server's memory with a larger one.
  app.use("*", bodyLimit({ maxSize: 4 * 1024 * 1024, onError: (c) => c.json({ error: "invalid_params", message: "The request body is over 4 MB." }, 413) }));

  const threadOf = (id: string) => {
    validateThreadId(id);
    return o.workspaces.thread(id);
  };
  const runOf = (ws: ServedWorkspace, threadId: string, runId: string): RunRecord => {
    const run = ws.manager.runs.get(runId);
    if (!run || run.thread_id !== threadId) throw new HarnessError("run_not_found", `Run ${runId} does not exist on thread ${threadId}.`);
    return run;
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
    // A decision continues the paused turn with the paused run's model unless the client names one.
    const paused = decisions ? pausedRunOf(thread) : undefined;
    const model = typeof ctx.model_name === "string" ? ctx.model_name : (paused?.model ?? o.model);
    const launched = launchRun(
      o.runs.services(ws),
      {
        threadId,
        prompt: b.input ? promptOf(b.input.messages) : "",
        ...(decisions ? { approvals: decisions } : {}),
        ...(model ? { model } : {}),
        ...(o.baseURL && !(typeof ctx.model_name === "string") ? { baseURL: o.baseURL } : {}),
        planMode: ctx.is_plan_mode === true,
        ...(typeof ctx.subagent_enabled === "boolean" ? { subagents: ctx.subagent_enabled } : {}),
        ...(ctx.thinking_enabled !== undefined ? { context: { thinking_enabled: ctx.thinking_enabled } } : {}),
        multitask: b.multitask_strategy ?? "reject",
      },
      { onCrash: (runId, err) => o.log(`run ${runId} crashed: ${errorMessage(err)}`) },
    );
    return { ws, run: launched.admission.run, streamMode: b.stream_mode };
  };

  const location = (run: RunRecord) => `/threads/${run.thread_id}/runs/${run.run_id}`;

  const sse = (c: Context, ws: ServedWorkspace, run: RunRecord, afterSeq: number, streamMode: unknown) => {
    c.header("Content-Location", location(run));
    c.header("Location", `${location(run)}/stream`);
    return streamSSE(c, async (s) => {
      const abort = new AbortController();
      s.onAbort(() => abort.abort());
      await streamRun(s, ws.manager, run, { afterSeq, include: modesFilter(streamMode), signal: abort.signal, checkpointer: ws.store.checkpointer });
    });
  };

  app.post("/threads", async (c) => {
    const b = await body(c, ThreadBodyZ);
    const meta = clientMetadata(b.metadata ?? {}, true);
    const ws = o.workspaces.byName(typeof meta.workspace === "string" ? meta.workspace : undefined);
    const threadId = b.thread_id ?? randomUUID();
    validateThreadId(threadId);
    const t = ws.store.threads.create({ threadId, workspaceFolder: ws.folder, metadata: { ...meta, workspace: ws.name } });
    return c.json(threadView(t, undefined));
  });

  app.post("/threads/search", async (c) => {
    const b = await body(c, SearchBodyZ);
    const wanted = Object.entries(b.metadata ?? {});
    const all = o.workspaces.list
      .flatMap((ws) => ws.store.threads.list().map((t) => ({ ws, t })))
      .filter(({ t }) => wanted.every(([k, v]) => JSON.stringify(t.metadata[k]) === JSON.stringify(v)))
      .sort((a, b2) => b2.t.updatedAt - a.t.updatedAt);
    const page = all.slice(b.offset ?? 0, (b.offset ?? 0) + (b.limit ?? 10));
    return c.json(page.map(({ ws, t }) => threadView(t, ws.manager.runs.active(t.threadId))));
  });

  app.get("/threads/:id", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    return c.json(threadView(thread, ws.manager.runs.active(thread.threadId), await readThreadState(ws.store.checkpointer, thread.threadId)));
  });

  app.patch("/threads/:id", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    const b = await body(c, ThreadBodyZ);
    for (const [k, v] of Object.entries(clientMetadata(b.metadata ?? {}, false))) ws.store.threads.setMetadata(thread.threadId, k, v);
    return c.json(threadView(ws.store.threads.get(thread.threadId)!, ws.manager.runs.active(thread.threadId)));
  });

  app.delete("/threads/:id", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    ws.manager.recover(thread.threadId);
    await deleteThread(ws.store, thread.threadId);
    return c.body(null, 204);
  });

  app.get("/threads/:id/state", async (c) => {
    const { ws, thread } = threadOf(c.req.param("id"));
    const tuple = await ws.store.checkpointer.getTuple({ configurable: { thread_id: thread.threadId, checkpoint_ns: "" } });
    return c.json(stateView(thread.threadId, tuple));
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
    c.header("Content-Location", location(run));
    return c.json(runView(run));
  });

  app.post("/threads/:id/runs/stream", async (c) => {
    const { ws, run, streamMode } = await launch(c, c.req.param("id"));
    return sse(c, ws, run, 0, streamMode);
  });

  // Create, wait for the end, answer the thread's state (LangGraph's runs/wait).
  app.post("/threads/:id/runs/wait", async (c) => {
    const { ws, run } = await launch(c, c.req.param("id"));
    c.header("Content-Location", location(run));
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
    const last = c.req.header("Last-Event-ID");
    const afterSeq = last !== undefined && /^\d{1,15}$/.test(last) ? Number(last) : 0;
    if (last !== undefined && !/^\d{1,15}$/.test(last)) throw new HarnessError("invalid_params", "Last-Event-ID must be an event id this server sent.");
    return sse(c, ws, run, afterSeq, c.req.queries("stream_mode"));
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
    return c.json({ ...runView(run), outcome }, outcome === "already_finished" ? 409 : 200);
  });

  return app;
}
