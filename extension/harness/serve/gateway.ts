/**
 * DeerFlow's gateway REST endpoints that its web UI calls on every page (under `/api` only), with
 * DeerFlow's request and response shapes (../shared/reference/wave4/deerflow-web-contract.md, read
 * from DeerFlow's gateway routers): models, features, suggestions, channels, a thread's token usage,
 * its paged messages, its uploads' limits and list, and its files by virtual path (artifacts).
 * What serve does not do (channels, suggestions, agents) answers "disabled", so the UI hides it
 * instead of failing; docs/serve.md lists those.
 */
import { extname } from "node:path";
import { homedir } from "node:os";
import { readFileSync, readdirSync, lstatSync, unlinkSync } from "node:fs";
import type { Context, Hono } from "hono";
import { HarnessError } from "../errors.js";
import type { HarnessConfig } from "../config/harnessConfig.js";
import { threadUsage } from "../runs/usage.js";
import { readThreadState } from "../threads/threadStateView.js";
import { threadDirs, validateThreadId } from "../threads/threadDirs.js";
import { resolveReadPath } from "../trust/toolPaths.js";
import type { Workspaces } from "./workspaces.js";
import type { Session } from "../server/session.js";
import type { Logger } from "../server/logger.js";
import type { ServerMemory } from "../server/memory.js";
import { listSkills } from "../server/skills.js";
import { mcpSources } from "../mcp/sources.js";
import { loadDefinitions } from "../mcp/config.js";
import { putUpload } from "../threads/uploads.js";
import { ensureThreadDirs } from "../trust/threadFolders.js";
import { uploadName } from "../trust/attachments.js";

/** DeerFlow's upload limits (its `uploads` config defaults). */
export const UPLOAD_LIMITS = { max_files: 10, max_file_size: 50 * 1024 * 1024, max_total_size: 100 * 1024 * 1024 } as const;

/** Types a browser would run or render as a page: always downloaded, never shown inline (DeerFlow's rule). */
const ACTIVE_CONTENT = new Set([".html", ".htm", ".xhtml", ".svg", ".xml", ".js", ".mjs"]);
const TYPES: Record<string, string> = {
  ".md": "text/markdown; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".csv": "text/csv; charset=utf-8",
  ".json": "application/json",
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
};

function contentType(name: string, bytes: Buffer): string {
  const known = TYPES[extname(name).toLowerCase()];
  if (known) return known;
  // Text if it decodes as UTF-8 without NULs, else bytes.
  const head = bytes.subarray(0, 8192);
  return !head.includes(0) && Buffer.from(head.toString("utf8"), "utf8").equals(head) ? "text/plain; charset=utf-8" : "application/octet-stream";
}

/** A header-safe `filename=` (RFC 6266: ASCII fallback plus filename*). */
function disposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export interface GatewayOptions {
  workspaces: Workspaces;
  config: HarnessConfig;
  /** `--model`: offered as a model too. */
  model?: string;
  /** What the skills, MCP and memory pages read: the harness's own services (absent in bare tests). */
  services?: GatewayServices;
}

export interface GatewayServices {
  session: Session;
  log: Logger;
  memory?: ServerMemory;
}

/** A secret's value as the settings page shows it: never the value. */
const MASK = "***";
const masked = (o: Readonly<Record<string, string>>): Record<string, string> => Object.fromEntries(Object.keys(o).map((k) => [k, MASK]));

/** The uploads limits of this server: DeerFlow's `uploads.*`, its defaults when unset. */
function uploadLimits(config: HarnessConfig): { max_files: number; max_file_size: number; max_total_size: number } {
  const u = config.uploads;
  return { max_files: u.max_files, max_file_size: u.max_file_size, max_total_size: u.max_total_size };
}

function uploadView(threadId: string, dir: string, name: string): Record<string, unknown> {
  const st = lstatSync(`${dir}/${name}`);
  return {
    filename: name,
    size: st.size,
    path: `/mnt/user-data/uploads/${name}`,
    virtual_path: `/mnt/user-data/uploads/${name}`,
    artifact_url: `/api/threads/${threadId}/artifacts/mnt/user-data/uploads/${encodeURIComponent(name)}`,
    extension: extname(name),
    modified: st.mtimeMs / 1000,
  };
}

export function mountGateway(app: Hono, o: GatewayOptions): void {
  const threadOf = (c: Context) => {
    const id = c.req.param("id")!;
    validateThreadId(id);
    return o.workspaces.thread(id);
  };

  app.get("/api/models", (c) => {
    const models = o.config.models.map((m) => ({
      name: m.name,
      model: m.model,
      display_name: m.display_name ?? m.name,
      description: m.description ?? null,
      supports_thinking: m.supports_thinking,
      supports_reasoning_effort: m.supports_reasoning_effort,
    }));
    if (o.model && !models.some((m) => m.name === o.model)) {
      models.unshift({ name: o.model, model: o.model, display_name: o.model, description: null, supports_thinking: false, supports_reasoning_effort: false });
    }
    return c.json({ models, token_usage: { enabled: true } });
  });

  app.get("/api/features", (c) => c.json({ agents_api: { enabled: false }, browser_control: { enabled: false }, mcp_tasks: { enabled: false } }));
  app.get("/api/suggestions/config", (c) => c.json({ enabled: false, max_suggestions: 3 }));
  app.get("/api/channels/providers", (c) => c.json({ enabled: false, providers: [] }));

  app.get("/api/threads/:id/token-usage", (c) => {
    const { ws, thread } = threadOf(c);
    const runs = ws.manager.runs.listByThread(thread.threadId);
    const usage = threadUsage(runs);
    const byModel: Record<string, { tokens: number; runs: number }> = {};
    for (const r of runs) {
      const total = (r.usage as { total_tokens?: unknown } | null)?.total_tokens;
      if (typeof total !== "number") continue;
      const m = (byModel[r.model ?? "default"] ??= { tokens: 0, runs: 0 });
      m.tokens += total;
      m.runs += 1;
    }
    return c.json({
      thread_id: thread.threadId,
      total_tokens: usage?.total.total_tokens ?? 0,
      total_input_tokens: usage?.total.input_tokens ?? 0,
      total_output_tokens: usage?.total.output_tokens ?? 0,
      total_runs: usage?.runs ?? 0,
      by_model: byModel,
      by_caller: { lead_agent: usage?.total.total_tokens ?? 0, subagent: 0, middleware: 0 },
      context_usage: null,
    });
  });

  // DeerFlow's paged history: the checkpoint's messages, seq = position in the thread (1-based),
  // newest page first, each page in ascending order.
  app.get("/api/threads/:id/messages/page", async (c) => {
    const { ws, thread } = threadOf(c);
    const limitRaw = c.req.query("limit");
    const beforeRaw = c.req.query("before_seq");
    const limit = limitRaw === undefined ? 50 : /^\d{1,4}$/.test(limitRaw) && Number(limitRaw) >= 1 ? Math.min(Number(limitRaw), 500) : NaN;
    const before = beforeRaw === undefined ? Infinity : /^\d{1,12}$/.test(beforeRaw) ? Number(beforeRaw) : NaN;
    if (Number.isNaN(limit) || Number.isNaN(before)) throw new HarnessError("invalid_params", "limit and before_seq take positive integers.");
    const values = await readThreadState(ws.store.checkpointer, thread.threadId);
    const messages = (values.messages as Array<Record<string, unknown>> | undefined) ?? [];
    const end = Math.min(messages.length, before === Infinity ? messages.length : before - 1);
    const start = Math.max(0, end - limit);
    const created = new Date(thread.updatedAt).toISOString();
    const data = messages.slice(start, end).map((m, i) => ({ run_id: null, seq: start + i + 1, content: m, metadata: { caller: "lead_agent" }, created_at: created }));
    const hasMore = start > 0;
    return c.json({ data, has_more: hasMore, next_before_seq: hasMore ? data[0]!.seq : null });
  });

  app.get("/api/threads/:id/uploads/limits", (c) => {
    threadOf(c);
    return c.json(uploadLimits(o.config));
  });

  // DeerFlow's upload: multipart `files` parts, into the thread's uploads (0600, a free name for a
  // different file under a taken one: threads/uploads.ts), within `uploads.*`. Names are reduced to
  // a plain file name (trust/attachments.ts): a part named `../x` or `a/b` is skipped, said so.
  app.post("/api/threads/:id/uploads", async (c) => {
    const { ws, thread } = threadOf(c);
    const limits = uploadLimits(o.config);
    let form: Record<string, unknown>;
    try {
      form = await c.req.parseBody({ all: true });
    } catch {
      return c.json({ detail: "The upload is not a multipart form with files." }, 400);
    }
    const parts = ([] as unknown[]).concat(form.files ?? form.file ?? []).filter((p): p is File => typeof p === "object" && p !== null && "arrayBuffer" in p);
    if (parts.length === 0) return c.json({ detail: "No files in the upload (multipart parts named files)." }, 400);
    if (parts.length > limits.max_files) return c.json({ detail: `Too many files: ${parts.length} (at most ${limits.max_files} per upload).` }, 413);
    const total = parts.reduce((n, p) => n + p.size, 0);
    if (total > limits.max_total_size) return c.json({ detail: `The upload is ${total} bytes; at most ${limits.max_total_size} per upload.` }, 413);
    const big = parts.find((p) => p.size > limits.max_file_size);
    if (big) return c.json({ detail: `File too large: ${big.name} is ${big.size} bytes (at most ${limits.max_file_size}).` }, 413);
    const dirs = ensureThreadDirs(ws.folder, thread.threadId);
    const files: Array<Record<string, unknown>> = [];
    const skipped: string[] = [];
    for (const part of parts) {
      let name: string;
      try {
        name = uploadName(part.name);
      } catch {
        skipped.push(part.name);
        continue;
      }
      const put = putUpload(dirs, name, Buffer.from(await part.arrayBuffer()));
      files.push(uploadView(thread.threadId, dirs.uploads, put.filename));
    }
    const message = `Uploaded ${files.length} file${files.length === 1 ? "" : "s"}${skipped.length ? `; skipped ${skipped.length} with a name that is not a plain file name` : ""}.`;
    return c.json({ success: files.length > 0, files, message, skipped_files: skipped });
  });

  app.delete("/api/threads/:id/uploads/:filename", (c) => {
    const { ws, thread } = threadOf(c);
    const dirs = threadDirs(ws.folder, thread.threadId);
    let name: string;
    try {
      name = uploadName(c.req.param("filename"));
    } catch {
      return c.json({ detail: "Not a file name of this thread's uploads." }, 400);
    }
    const file = `${dirs.uploads}/${name}`;
    let st;
    try {
      st = lstatSync(file);
    } catch {
      return c.json({ detail: `No upload named ${name} in this thread.` }, 404);
    }
    if (!st.isFile()) return c.json({ detail: `No upload named ${name} in this thread.` }, 404);
    unlinkSync(file);
    return c.json({ success: true, message: `Deleted ${name}.` });
  });

  // The served workspace's skills, in DeerFlow's shape (read only here: the editor and the CLI change them).
  app.get("/api/skills", async (c) => {
    const s = o.services;
    if (!s) return c.json({ skills: [] });
    const ws = o.workspaces.byName(undefined);
    const { skills } = await listSkills(o.workspaces.harness, s.session, s.log, { workspaceFolder: ws.folder });
    return c.json({
      skills: skills
        .filter((k) => k.name !== null && k.status === "loaded")
        .map((k) => ({ name: k.name, description: k.description ?? "", license: null, category: k.scope === "public" ? "public" : "custom", enabled: k.enabled, editable: false })),
    });
  });

  // The MCP servers as configured, secrets masked (DeerFlow's settings page; read only).
  app.get("/api/mcp/config", (c) => {
    const s = o.services;
    const ws = o.workspaces.byName(undefined);
    if (!s) return c.json({ mcp_servers: {} });
    const { sources } = mcpSources({ dataDir: s.session.dataDir, workspaceFolder: ws.folder });
    // No variable of the server's environment is resolved into what the page shows: a `$TOKEN` in
    // args or a url reads as the mask, like env and header values.
    const maskedEnv: NodeJS.ProcessEnv = new Proxy({}, { get: (_t, k) => (typeof k === "string" ? MASK : undefined), has: () => true });
    const { servers } = loadDefinitions(sources, { env: maskedEnv, workspaceFolder: ws.folder, home: homedir(), secrets: () => undefined });
    const mcp_servers = Object.fromEntries(servers.map((d) => {
      const l = d.launch;
      return [d.name, l.type === "stdio"
        ? { enabled: d.enabled, type: "stdio", command: l.command, args: [...l.args], env: masked(l.env), url: null, headers: {}, description: d.description }
        : { enabled: d.enabled, type: l.type, command: null, args: [], env: {}, url: l.url, headers: masked(l.headers), description: d.description }];
    }));
    return c.json({ mcp_servers });
  });

  // DeerFlow's memory document (the memory page).
  app.get("/api/memory", (c) => {
    const memory = o.services?.memory;
    if (!memory) throw new HarnessError("usage", "Long-term memory is off on this server.");
    return c.json(memory.get().memory);
  });

  app.get("/api/threads/:id/uploads/list", (c) => {
    const { ws, thread } = threadOf(c);
    const dirs = threadDirs(ws.folder, thread.threadId);
    let names: string[];
    try {
      names = readdirSync(dirs.uploads).filter((n) => lstatSync(`${dirs.uploads}/${n}`).isFile());
    } catch {
      names = [];
    }
    const files = names.sort().map((name) => uploadView(thread.threadId, dirs.uploads, name));
    return c.json({ files, count: files.length });
  });

  // A thread's file by virtual path, through the same read rule as the agent's tools: nothing
  // outside the thread's folders, no link followed out, no `..`.
  app.get("/api/threads/:id/artifacts/*", (c) => {
    const { ws, thread } = threadOf(c);
    const prefix = `/api/threads/${thread.threadId}/artifacts/`;
    const raw = c.req.path.slice(prefix.length);
    let virtual: string;
    try {
      virtual = `/${decodeURIComponent(raw)}`;
    } catch {
      throw new HarnessError("invalid_params", "The file path is not valid.");
    }
    if (virtual.includes("\0") || virtual.split("/").includes("..")) throw new HarnessError("path_denied", "The file path leaves the thread's folders.");
    let real: string;
    try {
      real = resolveReadPath(virtual, threadDirs(ws.folder, thread.threadId));
    } catch (err) {
      if (err instanceof HarnessError && err.code === "file_not_found") throw err;
      throw new HarnessError("path_denied", "The file path is not one of this thread's files.");
    }
    let bytes: Buffer;
    try {
      bytes = readFileSync(real);
    } catch {
      throw new HarnessError("file_not_found", `No file ${virtual} in this thread.`);
    }
    const name = virtual.split("/").pop() ?? "file";
    const active = ACTIVE_CONTENT.has(extname(name).toLowerCase());
    const download = c.req.query("download") === "true" || active;
    c.header("Content-Type", active ? "application/octet-stream" : contentType(name, bytes));
    c.header("Content-Disposition", disposition(download ? "attachment" : "inline", name));
    c.header("X-Content-Type-Options", "nosniff");
    return c.body(new Uint8Array(bytes));
  });
}
