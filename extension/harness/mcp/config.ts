/**
 * Reading MCP server definitions (issue 23) from DeerFlow's `extensions_config.json`
 * (`mcpServers`, DeerFlow's `config/extensions_config.py` keys and defaults) and VS Code's
 * `mcp.json` (`servers`, `inputs`). Like Continue's `loadJsonMcpConfigs`, a loader returns
 * diagnostics, never throws: a bad file or entry is reported and skipped, the rest still load.
 *
 * Variables:
 * - DeerFlow format: a string value that STARTS with `$` is replaced whole by that environment
 *   variable, an unset one by "" (DeerFlow `resolve_env_variables`; no `${}` templating, no
 *   partial substitution), through nested objects and lists.
 * - VS Code format: `${env:NAME}`, `${workspaceFolder}`, `${userHome}`, `${pathSeparator}` inside
 *   strings, and `${input:ID}`: a value VS Code prompted for and keeps in its secret storage,
 *   which no other extension can read. Such a value comes from our own SecretStorage (the host's
 *   "DeerFlow: Set MCP Secret", keyed by file and id) or, for the CLI, `DEERFLOW_MCP_INPUT_<ID>`;
 *   until then the server is listed as needing it and does not start.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import { z } from "zod";
import { diagnostics as harnessDiagnostics } from "../diagnostics.js";
import { errorMessage } from "../errors.js";
import { parseJsonc } from "../sandbox/devcontainer/jsonc.js";
import { RoutingOverrideZ, RoutingZ, routingOf } from "./routing.js";
import {
  DEFAULT_SESSION_INIT_TIMEOUT_S,
  type McpDiagnostic,
  type McpInputRef,
  type McpLaunch,
  type McpServerDefinition,
  type McpSource,
} from "./types.js";

/** A configuration file larger than this is refused: it is config, not data. */
const MAX_CONFIG_BYTES = 1024 * 1024;

export interface ResolveContext {
  readonly env: NodeJS.ProcessEnv;
  /** For `${workspaceFolder}` (VS Code format) and relative `cwd`/`envFile`. */
  readonly workspaceFolder: string;
  readonly home: string;
  /** `${input:…}` values held for this harness (SecretStorage via the host), by McpInputRef.key. */
  readonly secrets: (key: string) => string | undefined;
}

export interface LoadedDefinitions {
  readonly servers: McpServerDefinition[];
  readonly diagnostics: McpDiagnostic[];
}

/** Accepted spellings of the transport (DeerFlow's, VS Code's, Cline's, Roo's, Kilo's); `http` is what is meant. */
const TRANSPORT_ALIASES: Readonly<Record<string, "stdio" | "http" | "sse">> = {
  stdio: "stdio",
  local: "stdio",
  http: "http",
  "streamable-http": "http",
  streamableHttp: "http",
  streamable_http: "http",
  remote: "http",
  sse: "sse",
};

const StringMapZ = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]).transform((v) => (v === null ? "" : String(v))));

/** DeerFlow's McpServerConfig (extra keys allowed, as DeerFlow's `extra="allow"`). */
const DeerFlowServerZ = z.looseObject({
  enabled: z.boolean().default(true),
  type: z.string().optional(),
  transport: z.string().optional(),
  command: z.string().optional(),
  args: z.array(z.string()).default([]),
  env: StringMapZ.default({}),
  cwd: z.string().optional(),
  url: z.string().optional(),
  headers: StringMapZ.default({}),
  description: z.string().default(""),
  routing: RoutingZ.optional(),
  tools: z.record(z.string(), z.looseObject({ routing: RoutingOverrideZ.optional() })).default({}),
  tool_name_prefix: z.boolean().default(true),
  tool_call_timeout: z.number().positive().nullable().optional(),
  session_init_timeout: z.number().positive().nullable().optional(),
  always_allow: z.array(z.string()).default([]),
});

/** VS Code's mcp.json server entry (1.139's schema; `dev`, `sandbox*` and `oauth` are read but not used). */
const VsCodeServerZ = z.looseObject({
  type: z.string().optional(),
  command: z.string().optional(),
  args: z.array(z.string()).default([]),
  env: StringMapZ.default({}),
  envFile: z.string().optional(),
  cwd: z.string().optional(),
  url: z.string().optional(),
  headers: StringMapZ.default({}),
  description: z.string().optional(),
  disabled: z.boolean().optional(),
});

const VsCodeInputZ = z.looseObject({ id: z.string(), description: z.string().optional(), password: z.boolean().optional() });

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Reads one source; a missing file is no source (extensions are optional), anything else wrong is a diagnostic. */
export function readSourceFile(source: McpSource): { data?: unknown; diagnostic?: McpDiagnostic } {
  let text: string;
  try {
    const st = statSync(source.file);
    if (!st.isFile()) return { diagnostic: { file: source.file, message: `${source.label} is not a file; it is ignored.` } };
    if (st.size > MAX_CONFIG_BYTES) return { diagnostic: { file: source.file, message: `${source.label} is over 1 MB; it is ignored.` } };
    text = readFileSync(source.file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    return { diagnostic: { file: source.file, message: `Cannot read ${source.label}: ${errorMessage(err)}` } };
  }
  try {
    return { data: source.format === "vscode" ? parseJsonc(text) : JSON.parse(text) };
  } catch (err) {
    // DeerFlow's wording for the JSON file.
    return { diagnostic: { file: source.file, message: `Extensions config file at ${source.file} is not valid JSON: ${errorMessage(err)}` } };
  }
}

/** Every source, in precedence order: a name already defined by an earlier source is reported and skipped. */
export function loadDefinitions(sources: readonly McpSource[], ctx: ResolveContext): LoadedDefinitions {
  const servers: McpServerDefinition[] = [];
  const diagnostics: McpDiagnostic[] = [];
  const byName = new Map<string, McpServerDefinition>();
  for (const source of sources) {
    const read = readSourceFile(source);
    if (read.diagnostic) diagnostics.push(read.diagnostic);
    if (read.data === undefined) continue;
    const parsed = source.format === "deerflow" ? fromDeerFlow(source, read.data, ctx) : fromVsCode(source, read.data, ctx);
    diagnostics.push(...parsed.diagnostics);
    for (const def of parsed.servers) {
      const earlier = byName.get(def.name);
      if (earlier) {
        diagnostics.push({
          file: source.file,
          server: def.name,
          message: `MCP server '${def.name}' in ${source.label} is skipped: ${earlier.source.label} already defines a server of that name.`,
        });
        continue;
      }
      byName.set(def.name, def);
      servers.push(def);
    }
  }
  return { servers, diagnostics };
}

function fingerprintOf(source: McpSource, name: string, entry: unknown): string {
  return createHash("sha256").update(canonicalJson({ file: source.file, format: source.format, name, entry })).digest("hex");
}

/** JSON with sorted keys: the same entry always has the same fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function zodMessage(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.join(".") || "(entry)"}: ${i.message}`).join("; ");
}

// ---------------------------------------------------------------- DeerFlow's extensions_config.json

/** DeerFlow `resolve_env_variables`: a whole-string `$VAR`, recursively; an unset variable becomes "". */
export function resolveEnvVariables(value: unknown, env: NodeJS.ProcessEnv, reads?: Set<string>): unknown {
  if (typeof value === "string") {
    if (!value.startsWith("$")) return value;
    const name = value.slice(1);
    reads?.add(name);
    return env[name] ?? "";
  }
  if (Array.isArray(value)) return value.map((v) => resolveEnvVariables(v, env, reads));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveEnvVariables(v, env, reads)]));
  return value;
}

/** The top-level keys of extensions_config.json the port acts on (MCP here, skills in skills/enabledState.ts). */
const READ_TOP_LEVEL = new Set(["mcpServers", "mcp_servers", "skills"]);
const announcedIgnored = new Set<string>();

/**
 * Nothing accepted in silence (issue 33 item 5): the keys of a DeerFlow extensions_config.json
 * the port does not act on (`mcpInterceptors`, `middlewares`, `task_toolsets`, a server's `oauth`,
 * …), said once per process and file with their key paths, as config.yaml's are.
 */
function announceIgnoredKeys(file: string, data: Record<string, unknown>): void {
  const ignored = Object.keys(data).filter((k) => !READ_TOP_LEVEL.has(k));
  const servers = data.mcpServers ?? data.mcp_servers;
  const key = data.mcpServers !== undefined ? "mcpServers" : "mcp_servers";
  if (isObject(servers)) {
    for (const [name, entry] of Object.entries(servers)) {
      if (!isObject(entry)) continue;
      for (const k of Object.keys(entry)) if (!(k in DeerFlowServerZ.shape)) ignored.push(`${key}.${name}.${k}`);
    }
  }
  if (ignored.length === 0) return;
  const line = `${file}: not supported here: ${ignored.join(", ")}`;
  if (announcedIgnored.has(line)) return;
  announcedIgnored.add(line);
  harnessDiagnostics.warn(line);
}

function fromDeerFlow(source: McpSource, data: unknown, ctx: ResolveContext): LoadedDefinitions {
  const diagnostics: McpDiagnostic[] = [];
  const servers: McpServerDefinition[] = [];
  if (!isObject(data)) return { servers, diagnostics: [{ file: source.file, message: `${source.label} is not a JSON object; it is ignored.` }] };
  announceIgnoredKeys(source.file, data);
  const raw = data.mcpServers ?? data.mcp_servers;
  if (raw === undefined) return { servers, diagnostics };
  if (!isObject(raw)) return { servers, diagnostics: [{ file: source.file, message: `${source.label}: mcpServers is not an object; no server loaded from it.` }] };
  for (const [name, entry] of Object.entries(raw)) {
    const bad = (message: string) => diagnostics.push({ file: source.file, server: name, message });
    const reads = new Set<string>();
    const parsed = DeerFlowServerZ.safeParse(resolveEnvVariables(entry, ctx.env, reads));
    if (!parsed.success) {
      bad(`MCP server '${name}' in ${source.label} is skipped: ${zodMessage(parsed.error)}`);
      continue;
    }
    const e = parsed.data;
    // DeerFlow: `type` wins over the MCP-spec `transport` alias; stdio by default.
    const type = transportOf(e.type ?? e.transport ?? "stdio");
    const launch = launchOf(name, type, e, ctx, bad);
    if (!launch) continue;
    servers.push({
      name,
      source,
      enabled: e.enabled,
      description: e.description,
      launch,
      fingerprint: fingerprintOf(source, name, entry),
      toolNamePrefix: e.tool_name_prefix,
      // DeerFlow bounds only stdio calls with it (`mcp/tools.py`); http/sse have their transport's own timeouts.
      ...(e.tool_call_timeout && launch.type === "stdio" ? { toolCallTimeoutS: e.tool_call_timeout } : {}),
      sessionInitTimeoutS: e.session_init_timeout ?? DEFAULT_SESSION_INIT_TIMEOUT_S,
      // A workspace file cannot lower its own tools' approval class (trust.ts says why).
      alwaysAllow: source.scope === "user" ? e.always_allow : [],
      routing: routingOf(e.routing),
      toolRouting: Object.fromEntries(Object.entries(e.tools).flatMap(([tool, o]) => (o.routing ? [[tool, o.routing]] : []))),
      inputs: [],
      missingInputs: [],
      readsEnv: [...reads].sort(),
    });
    if (e.tool_call_timeout != null && launch.type !== "stdio") {
      bad(`Ignoring tool_call_timeout for MCP server '${name}' because transport '${launch.type}' is not stdio; configure HTTP/SSE transport-level timeouts instead.`);
    }
    if (source.scope === "workspace" && e.always_allow.length > 0) {
      bad(`MCP server '${name}' in ${source.label}: always_allow is ignored in a workspace file (its tools still ask).`);
    }
  }
  return { servers, diagnostics };
}


function transportOf(spelling: string): "stdio" | "http" | "sse" | undefined {
  return TRANSPORT_ALIASES[spelling];
}

/** DeerFlow `build_server_params`, with its error texts. */
function launchOf(
  name: string,
  type: "stdio" | "http" | "sse" | undefined,
  e: { type?: string | undefined; transport?: string | undefined; command?: string | undefined; args: string[]; env: Record<string, string>; cwd?: string | undefined; url?: string | undefined; headers: Record<string, string> },
  ctx: ResolveContext,
  bad: (message: string) => void,
): McpLaunch | undefined {
  if (type === undefined) {
    bad(`MCP server '${name}' has unsupported transport type: ${e.type ?? e.transport}`);
    return undefined;
  }
  if (type === "stdio") {
    if (!e.command) {
      bad(`MCP server '${name}' with stdio transport requires 'command' field`);
      return undefined;
    }
    const cwd = e.cwd ? (isAbsolute(e.cwd) ? e.cwd : resolve(ctx.workspaceFolder, e.cwd)) : undefined;
    return { type, command: e.command, args: e.args, env: e.env, ...(cwd ? { cwd } : {}) };
  }
  if (!e.url) {
    bad(`MCP server '${name}' with ${type} transport requires 'url' field`);
    return undefined;
  }
  try {
    const u = new URL(e.url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("only http and https URLs");
  } catch (err) {
    bad(`MCP server '${name}': url ${JSON.stringify(e.url)} is not an http(s) URL (${errorMessage(err)})`);
    return undefined;
  }
  return { type, url: e.url, headers: e.headers };
}

// ---------------------------------------------------------------- VS Code's mcp.json

const VARIABLE = /\$\{([^}]*)\}/g;

interface VsCodeResolver {
  readonly resolve: (text: string) => string;
  readonly problems: string[];
  readonly inputs: Map<string, McpInputRef>;
  readonly reads: Set<string>;
  readonly missing: Set<string>;
}

function vsCodeResolver(source: McpSource, ctx: ResolveContext, declared: ReadonlyMap<string, { description?: string; password: boolean }>): VsCodeResolver {
  const problems: string[] = [];
  const inputs = new Map<string, McpInputRef>();
  const reads = new Set<string>();
  const missing = new Set<string>();
  const resolveText = (text: string): string =>
    text.replace(VARIABLE, (whole, inner: string) => {
      if (inner === "workspaceFolder") return ctx.workspaceFolder;
      if (inner === "userHome") return ctx.home;
      if (inner === "pathSeparator" || inner === "/") return sep;
      if (inner.startsWith("env:")) {
        const name = inner.slice(4);
        reads.add(name);
        return ctx.env[name] ?? "";
      }
      if (inner.startsWith("input:")) {
        const id = inner.slice(6);
        const key = inputKey(source, id);
        const d = declared.get(id);
        inputs.set(key, { key, id, ...(d?.description ? { description: d.description } : {}), password: d?.password ?? true });
        const value = ctx.secrets(key) ?? ctx.env[inputEnvName(id)];
        if (value === undefined) {
          missing.add(key);
          return "";
        }
        return value;
      }
      problems.push(`unsupported variable ${whole}`);
      return whole;
    });
  return { resolve: resolveText, problems, inputs, reads, missing };
}

/** The SecretStorage key of an `${input:ID}` value: per file, so one file's input never feeds another's server. */
export function inputKey(source: McpSource, id: string): string {
  return `${source.file}#${id}`;
}

/** Where the CLI (which cannot read VS Code's or our SecretStorage) takes an input from. */
export function inputEnvName(id: string): string {
  return `DEERFLOW_MCP_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

function fromVsCode(source: McpSource, data: unknown, ctx: ResolveContext): LoadedDefinitions {
  const diagnostics: McpDiagnostic[] = [];
  const servers: McpServerDefinition[] = [];
  if (!isObject(data)) return { servers, diagnostics: [{ file: source.file, message: `${source.label} is not a JSON object; it is ignored.` }] };
  const declared = new Map<string, { description?: string; password: boolean }>();
  for (const i of Array.isArray(data.inputs) ? data.inputs : []) {
    const p = VsCodeInputZ.safeParse(i);
    if (p.success) declared.set(p.data.id, { ...(p.data.description ? { description: p.data.description } : {}), password: p.data.password ?? false });
  }
  const raw = data.servers;
  if (raw === undefined) return { servers, diagnostics };
  if (!isObject(raw)) return { servers, diagnostics: [{ file: source.file, message: `${source.label}: servers is not an object; no server loaded from it.` }] };
  for (const [name, entry] of Object.entries(raw)) {
    const bad = (message: string) => diagnostics.push({ file: source.file, server: name, message });
    const parsed = VsCodeServerZ.safeParse(entry);
    if (!parsed.success) {
      bad(`MCP server '${name}' in ${source.label} is skipped: ${zodMessage(parsed.error)}`);
      continue;
    }
    const e = parsed.data;
    const r = vsCodeResolver(source, ctx, declared);
    const mapValues = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, r.resolve(v)]));
    let env = mapValues(e.env);
    // What the envFile says is part of what the user approves: the file is the workspace's (the
    // agent can write it), so an edit to it (NODE_OPTIONS, PATH, LD_PRELOAD) must ask again.
    let envFileValues: Record<string, string> | undefined;
    if (e.envFile) {
      const file = resolve(ctx.workspaceFolder, r.resolve(e.envFile));
      const read = readEnvFile(file);
      if ("error" in read) {
        bad(`MCP server '${name}' in ${source.label} is skipped: envFile ${file}: ${read.error}`);
        continue;
      }
      envFileValues = read.values;
      env = { ...read.values, ...env };
    }
    // VS Code infers the transport from the fields when `type` is absent.
    const type = transportOf(e.type ?? (e.url !== undefined ? "http" : "stdio"));
    const cwd = e.cwd ? r.resolve(e.cwd) : undefined;
    const launch = launchOf(
      name,
      type,
      {
        ...(e.type !== undefined ? { type: e.type } : {}),
        ...(e.command !== undefined ? { command: r.resolve(e.command) } : {}),
        args: e.args.map(r.resolve),
        env,
        ...(cwd ? { cwd } : {}),
        ...(e.url !== undefined ? { url: r.resolve(e.url) } : {}),
        headers: mapValues(e.headers),
      },
      ctx,
      bad,
    );
    if (r.problems.length > 0) {
      bad(`MCP server '${name}' in ${source.label} is skipped: ${[...new Set(r.problems)].join("; ")}`);
      continue;
    }
    if (!launch) continue;
    servers.push({
      name,
      source,
      enabled: e.disabled !== true,
      description: e.description ?? "",
      launch,
      fingerprint: fingerprintOf(source, name, envFileValues ? { entry, envFile: envFileValues } : entry),
      toolNamePrefix: true,
      sessionInitTimeoutS: DEFAULT_SESSION_INIT_TIMEOUT_S,
      alwaysAllow: [],
      routing: { mode: "off", priority: 0, keywords: [] },
      toolRouting: {},
      inputs: [...r.inputs.values()],
      readsEnv: [...r.reads].sort(),
      missingInputs: [...r.missing],
    });
  }
  return { servers, diagnostics };
}

/** A dotenv file: `KEY=value`, `export KEY=value`, `#` comments, optional quotes. */
function readEnvFile(file: string): { values: Record<string, string> } | { error: string } {
  let text: string;
  try {
    if (statSync(file).size > MAX_CONFIG_BYTES) return { error: "over 1 MB" };
    text = readFileSync(file, "utf8");
  } catch (err) {
    return { error: (err as NodeJS.ErrnoException).code ?? errorMessage(err) };
  }
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith("#")) continue;
    let value = m[2] ?? "";
    const quoted = /^(["'])(.*)\1$/.exec(value);
    if (quoted) value = quoted[1] === '"' ? (quoted[2] ?? "").replace(/\\n/g, "\n") : (quoted[2] ?? "");
    else value = value.replace(/\s+#.*$/, "");
    values[m[1]!] = value;
  }
  return { values };
}
