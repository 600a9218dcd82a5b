/**
 * `deerflow mcp list|approve` (issue 23): a folder's MCP servers from a terminal.
 *
 * - `list` starts every server that may start (where the folder's sandbox is: its dev container
 *   when that is the sandbox), waits for each up to its `session_init_timeout`, and prints one
 *   JSON line per server (like `threads`, `runs`, `changes`): its source, state, tools or the
 *   reason it has none. `--no-start` lists without starting any. The same facts, the skipped
 *   entries of bad files and the notes go to stderr for a person. Exit 0 either way: a server that
 *   fails is a state, not a failure of the command.
 * - `approve` records the user's yes to the folder's workspace servers (`.deerflow/
 *   extensions_config.json`, `.vscode/mcp.json`) as they are now, by fingerprint: every one
 *   waiting for approval, or `--server NAME` (with `--fingerprint SHA`, only if it still has
 *   that fingerprint). It prints what it approved, one JSON line per server (the command and
 *   where it runs, or the URL, on stderr).
 *
 * Like every subcommand, stdout carries JSON (a contract for scripts); stderr is for people.
 */
import { parse, workspaceArg, writeJsonLine, UsageError, valueUsageError } from "./args.js";
import { defaultDataDir } from "../store/db.js";
import { loadHarnessConfig } from "../config/harnessConfig.js";
import { HarnessError } from "../errors.js";
import { createSandboxProvider, parseSandboxChoice } from "../sandbox/select.js";
import type { SandboxProvider } from "../sandbox/provider.js";
import { openMcpRegistry } from "../mcp/open.js";
import { McpConfigChanged } from "../mcp/registry.js";
import type { McpListView, McpServerView } from "../../protocol/mcp.js";

const options = {
  workspace: { type: "string" },
  "data-dir": { type: "string" },
  sandbox: { type: "string" },
  "no-start": { type: "boolean" },
  server: { type: "string" },
  fingerprint: { type: "string" },
} as const;

export async function mcpCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "list" && sub !== "approve") throw new UsageError(`deerflow mcp: ${sub ? `unknown subcommand "${sub}"` : "list or approve?"}`);
  const command = `mcp ${sub}`;
  const v = parse(rest, options, command);
  const workspace = workspaceArg(v.workspace, command);
  const dataDir = v["data-dir"] ?? defaultDataDir();
  if (sub === "list" && (v.server !== undefined || v.fingerprint !== undefined)) throw new UsageError(`deerflow ${command}: --server and --fingerprint are for mcp approve`);
  if (sub === "approve" && (v["no-start"] !== undefined || v.sandbox !== undefined)) throw new UsageError(`deerflow ${command}: --no-start and --sandbox are for mcp list`);
  if (v.fingerprint !== undefined && (v.server === undefined || !/^[0-9a-f]{16,64}$/.test(v.fingerprint))) {
    throw new UsageError(`deerflow ${command}: --fingerprint takes the hex fingerprint mcp list printed, with --server NAME`);
  }
  let provider: SandboxProvider | undefined;
  if (sub === "list" && !v["no-start"]) {
    try {
      const config = loadHarnessConfig(dataDir);
      provider = createSandboxProvider(v.sandbox !== undefined ? parseSandboxChoice(v.sandbox) : config.sandbox.provider, { workspaceFolder: workspace, dataDir }).provider;
    } catch (err) {
      if (err instanceof HarnessError && err.code === "usage") throw valueUsageError(command, err.message);
      throw err;
    }
  }
  const registry = openMcpRegistry({
    workspaceFolder: workspace,
    dataDir,
    ...(provider ? { sandbox: provider } : {}),
    notes: ["VS Code's secret storage is not readable here: an ${input:ID} value comes from DEERFLOW_MCP_INPUT_<ID>."],
  });
  try {
    if (sub === "list") {
      const view = v["no-start"] ? registry.list() : await registry.start();
      process.stderr.write(`${describeList(view)}\n`);
      for (const server of view.servers) writeJsonLine(server);
      return 0;
    }
    return approve(registry, command, v.server, v.fingerprint);
  } finally {
    await registry.dispose();
    await provider?.shutdown?.().catch(() => undefined);
  }
}

function approve(registry: ReturnType<typeof openMcpRegistry>, command: string, server: string | undefined, fingerprint: string | undefined): number {
  const listed = registry.list().servers;
  const targets = server !== undefined ? listed.filter((s) => s.name === server) : listed.filter((s) => s.state === "needs_approval");
  if (server !== undefined && targets.length === 0) {
    throw new UsageError(`deerflow ${command}: no MCP server ${JSON.stringify(server)} in this folder's configuration (servers: ${listed.map((s) => s.name).join(", ") || "none"})`);
  }
  const user = targets.find((s) => s.source.scope === "user");
  if (user) throw new UsageError(`deerflow ${command}: ${user.name} is from your own configuration (${user.source.label}) and starts without an approval`);
  const approved: McpServerView[] = [];
  for (const t of targets) {
    try {
      const view = registry.approve(t.name, fingerprint);
      if (view) approved.push(view);
    } catch (err) {
      if (err instanceof McpConfigChanged) {
        process.stderr.write(`deerflow ${command}: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
  }
  for (const a of approved) process.stderr.write(`Approved: ${a.approval_text.join("\n  ")}\n  fingerprint: ${a.fingerprint}\n`);
  if (approved.length === 0) process.stderr.write("Nothing to approve: no workspace MCP server waits for approval.\n");
  for (const a of approved) writeJsonLine({ name: a.name, source: a.source, fingerprint: a.fingerprint, launch: a.launch, where: a.where, state: a.state, approved: true });
  return 0;
}

/** For a person: one block per server. */
function describeList(view: McpListView): string {
  const lines: string[] = [];
  for (const s of view.servers) {
    lines.push(`${s.name}: ${s.state}${s.state === "ready" ? ` (${s.tools.length} tools)` : ""} — ${s.source.label} (${s.source.scope}), ${s.transport} ${s.where}: ${s.launch}`);
    if (s.reason) lines.push(`  ${s.reason}`);
    if (s.tools.length > 0) lines.push(`  tools: ${s.tools.map((t) => t.name).join(", ")}`);
    lines.push(`  log: ${s.log_file}`);
  }
  if (view.servers.length === 0) lines.push("No MCP servers configured (extensions_config.json in the data directory, .deerflow/extensions_config.json or .vscode/mcp.json in the folder).");
  for (const d of view.diagnostics) lines.push(`skipped: ${d.file}${d.server ? ` (${d.server})` : ""}: ${d.message}`);
  for (const n of view.notes) lines.push(`note: ${n}`);
  return lines.join("\n");
}
