/**
 * Who decides whether a tool call runs: the approval policy (issue 13). Every tool call gets a
 * class, and the class's policy says `auto` (run it), `ask` (pause the run until the user
 * decides) or `deny` (never run it; the model gets a refusal it can act on).
 *
 * The policy is the operator's, like host commands: the CLI flag `--approval`, the harness
 * config file in the data directory, or the extension's `deerflow.approval.*` settings read at
 * user or machine scope only. Never the workspace, never the client: a repository could
 * otherwise approve its own agent's shell commands.
 */
import { HarnessError } from "../errors.js";

export const TOOL_CLASSES = ["read", "write", "protected", "shell", "mcp", "web", "other"] as const;
export type ToolClass = (typeof TOOL_CLASSES)[number];

export const APPROVAL_MODES = ["auto", "ask", "deny"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

export type ApprovalPolicy = Readonly<Record<ToolClass, ApprovalMode>>;

/** What the user set; unnamed classes keep their defaults. */
export type PolicyOverrides = Partial<Record<ToolClass, ApprovalMode>>;

/**
 * The defaults: reading and ordinary writes run; writes that could make code run on the host
 * and tools we do not know ask; a shell asks on the host and runs inside a dev container (the
 * container is the boundary there); an MCP tool asks wherever its server runs (issue 23): it
 * acts outside the sandbox's rules, and its server's own annotations are no reason to trust it.
 * A web fetch asks (issue 35): the URL is the model's, and a URL can carry the thread's data out.
 */
export function defaultPolicy(sandboxKind: "local" | "devcontainer"): ApprovalPolicy {
  return { read: "auto", write: "auto", protected: "ask", shell: sandboxKind === "local" ? "ask" : "auto", mcp: "ask", web: "ask", other: "ask" };
}

export function resolvePolicy(sandboxKind: "local" | "devcontainer", overrides: PolicyOverrides | undefined): ApprovalPolicy {
  return { ...defaultPolicy(sandboxKind), ...(overrides ?? {}) };
}

function isClass(v: string): v is ToolClass {
  return (TOOL_CLASSES as readonly string[]).includes(v);
}

function isMode(v: string): v is ApprovalMode {
  return (APPROVAL_MODES as readonly string[]).includes(v);
}

/**
 * `read=auto,write=ask,shell=ask` → overrides. A malformed entry is a usage error naming it:
 * a typo must not silently leave a class at a looser default.
 */
export function parsePolicySpec(spec: string): PolicyOverrides {
  const out: PolicyOverrides = {};
  for (const raw of spec.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const [name, mode, ...extra] = entry.split("=").map((s) => s.trim());
    if (!name || mode === undefined || extra.length > 0 || !isClass(name) || !isMode(mode)) {
      throw new HarnessError(
        "usage",
        `--approval: "${entry}" is not CLASS=MODE (classes: ${TOOL_CLASSES.join(", ")}; modes: ${APPROVAL_MODES.join(", ")})`,
      );
    }
    if (name in out && out[name] !== mode) throw new HarnessError("usage", `--approval: ${name} is given twice`);
    out[name] = mode;
  }
  return out;
}

const STRICTNESS: Readonly<Record<ApprovalMode, number>> = { auto: 0, ask: 1, deny: 2 };

/** The stricter of two modes: deny over ask over auto. */
export function stricterMode(a: ApprovalMode, b: ApprovalMode): ApprovalMode {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

/**
 * The policy of a run that continues a paused turn (a decision, or a message that answers the
 * waiting calls), from the policy the paused run had: no continuation loosens what the turn
 * started with. Per class the stricter of the two, except the classes the decider names for this
 * invocation (`deerflow approve --approval CLASS=MODE`, the operator's own flag), which replace
 * the paused run's. Whoever decides in the editor or through serve names none: a settings change
 * made while calls wait applies from the next new run on.
 */
export function continuedPolicy(paused: PolicyOverrides, current: ApprovalPolicy, explicit: PolicyOverrides = {}): ApprovalPolicy {
  const out = { ...current };
  for (const c of TOOL_CLASSES) {
    const before = paused[c];
    if (explicit[c] === undefined && before !== undefined) out[c] = stricterMode(before, current[c]);
  }
  return out;
}

/** A stored policy read back (thread metadata): only well-formed CLASS: MODE entries count. */
export function storedPolicy(value: unknown): PolicyOverrides | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const out: PolicyOverrides = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (isClass(k) && typeof v === "string" && isMode(v)) out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The overrides as the same spec text (for logs and the run's stored context). */
export function formatPolicy(policy: ApprovalPolicy): string {
  return TOOL_CLASSES.map((c) => `${c}=${policy[c]}`).join(",");
}
