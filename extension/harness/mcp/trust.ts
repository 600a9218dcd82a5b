/**
 * Who may start an MCP server (issue 23), VS Code's `_checkTrust` semantics: a stdio server is
 * code, an HTTP one sends the workspace's data somewhere.
 *
 * - a server from the user's own configuration (data directory, VS Code profile) starts as
 *   configured;
 * - a server from a workspace file (`.deerflow/extensions_config.json`, `.vscode/mcp.json`)
 *   starts only after the user approved that exact entry, by fingerprint, in the trust
 *   boundary's consent store (trust/consents.ts, also the dev container's): the CLI's
 *   `deerflow mcp approve`, or Allow in VS Code. The fingerprint (`McpApprovals.consentOf`, the
 *   one place it is made) is the entry's (config.ts) with the bytes of the workspace files its
 *   command and arguments name (`node scripts/server.js`): the agent can edit that script as
 *   freely as any file, so an edited script is a changed server, like an edited entry (issue 31
 *   item 3). It is read when the configuration is (every use) and again right before every
 *   start of the process (registry.ts). A change asks again; going back to an approved form
 *   does not;
 * - in an untrusted workspace (VS Code's Restricted Mode) a workspace server never starts.
 *
 * A workspace file also cannot lower its tools' approval class (`always_allow` is read from
 * user files only, config.ts): approving a server lets it start, never lets its calls skip the
 * user.
 */
import { FingerprintConsents, namedWorkspaceFiles, withNamedFiles, type NamedFile } from "../trust/consents.js";
import type { McpServerDefinition } from "./types.js";

/** What approving a server covers, as it is now. */
export interface McpConsent {
  /** The entry's fingerprint with the named files' bytes: what `approve` records and `has` looks for. */
  readonly fingerprint: string;
  /** The workspace files its command line names (shown at approval). */
  readonly files: readonly NamedFile[];
}

export type McpTrustVerdict =
  | { readonly decision: "run" }
  | { readonly decision: "needs_approval"; readonly changed: boolean }
  | { readonly decision: "refused"; readonly reason: string };

export const RESTRICTED_MODE_REASON =
  "the workspace is not trusted (Restricted Mode): MCP servers from its files never start. Trust the folder to use them.";

/** How many consents are kept per workspace folder (every server's, newest first). */
const KEEP = 200;

export class McpApprovals {
  private readonly consents: FingerprintConsents<{ readonly server: string; readonly file: string }>;

  constructor(dataDir: string, workspaceFolder: string) {
    this.consents = new FingerprintConsents(dataDir, workspaceFolder, "mcp", KEEP);
  }

  /** `<data-dir>/workspaces/<key>/mcp`: the consents, and what the MCP subsystem keeps beside them. */
  get dir(): string {
    return this.consents.dir;
  }

  /** realpath of the workspace folder. */
  get workspaceFolder(): string {
    return this.consents.workspaceFolder;
  }

  /**
   * The consent `def` needs now; `cwd` is the host folder its relative words are found from
   * (the launcher's `cwdOf`: the entry's `cwd`, the server's own folder, the container's
   * workspace). A user server's is its entry's fingerprint: it starts as configured.
   */
  consentOf(def: McpServerDefinition, cwd: string | undefined): McpConsent {
    const l = def.launch;
    if (def.source.scope !== "workspace" || l.type !== "stdio" || cwd === undefined) return { fingerprint: def.fingerprint, files: [] };
    const files = namedWorkspaceFiles([l.command, ...l.args], { workspaceFolder: this.workspaceFolder, cwd });
    return { fingerprint: withNamedFiles(def.fingerprint, files), files };
  }

  has(consent: McpConsent): boolean {
    return this.consents.has(consent.fingerprint);
  }

  /** Whether this server (same name, same file) was approved before in another form: then it changed. */
  approvedBefore(def: McpServerDefinition): boolean {
    return this.consents.latest((r) => r.server === def.name && r.file === def.source.file) !== undefined;
  }

  approve(def: McpServerDefinition, consent: McpConsent): void {
    this.consents.record(consent.fingerprint, { server: def.name, file: def.source.file });
  }
}

export function mcpTrust(def: McpServerDefinition, consent: McpConsent, o: { workspaceTrusted: boolean; approvals: McpApprovals }): McpTrustVerdict {
  if (def.source.scope === "user") return { decision: "run" };
  if (!o.workspaceTrusted) return { decision: "refused", reason: RESTRICTED_MODE_REASON };
  if (o.approvals.has(consent)) return { decision: "run" };
  return { decision: "needs_approval", changed: o.approvals.approvedBefore(def) };
}

/** A workspace server's process was about to start in a form the user has not approved (it changed since the configuration was read): nothing started. */
export class McpNotApproved extends Error {
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super(`MCP server '${server}' was not started: ${reason}`);
    this.name = "McpNotApproved";
  }
}

/**
 * What approving the server lets run, for the person deciding (CLI `mcp approve`, VS Code's
 * notification): the file, the command and its arguments or the URL, the environment it gets
 * (names only) and reads, and where it runs. Never a value of env or headers.
 */
export function describeLaunch(def: McpServerDefinition, where: "host" | "container", files: readonly NamedFile[] = []): string[] {
  const l = def.launch;
  const lines = [`${def.name} (${def.source.label}: ${def.source.file})`];
  if (l.type === "stdio") {
    lines.push(`runs ${where === "container" ? "in the folder's dev container" : "on THIS MACHINE"}: ${[l.command, ...l.args].map(word).join(" ")}`);
    if (l.cwd) lines.push(`in ${l.cwd}`);
    if (files.length > 0) lines.push(`with these workspace files as they are now (an edit asks again): ${files.map((f) => f.rel).join(", ")}`);
    const names = Object.keys(l.env);
    if (names.length > 0) lines.push(`with environment variables: ${names.join(", ")}`);
  } else {
    lines.push(`connects to ${l.url} (${l.type === "sse" ? "SSE" : "streamable HTTP"})`);
    const names = Object.keys(l.headers);
    if (names.length > 0) lines.push(`sending headers: ${names.join(", ")}`);
  }
  if (def.readsEnv.length > 0) lines.push(`reads your environment variables: ${def.readsEnv.join(", ")}`);
  return lines;
}

function word(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
