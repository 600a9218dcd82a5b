/**
 * "Always allow" (issue 21): what one yes may cover from now on in a thread, and what it covers.
 *
 * A rule is keyed by tool, class and sandbox kind (protocol/approvals.ts AlwaysAllowRule):
 * - never a protected write: each one is the user's decision, so the card offers no rule;
 * - only in the sandbox kind of the card: "in the dev container" never covers a call on the host;
 * - for web_fetch, the URL's host (issue 35): "always" covers pages of that host only;
 * - for bash, a command prefix the card shows, as VS Code's terminal auto-approve rules are read:
 *   the command line is split into its sub-commands (`;`, `&&`, `||`, `|`, `&`, new lines) and
 *   every one must start with the prefix's words. A line with command or process substitution
 *   (`$(…)`, backticks, `<(…)`, `>(…)`) or an output redirection to a file is never covered, and
 *   neither is a sub-command that starts with a variable assignment. Programs that run whatever
 *   they are given (sudo, env, xargs, eval, …) get no rule; shells and interpreters only with
 *   the script they run (`python build.py`), never alone.
 *
 * Threads from before issue 21 hold `approval_always_allow` as tool names, which covered every
 * call of the tool (protected writes and host commands included). Those entries are not migrated:
 * none says which sandbox or which command the user saw, so they are read as no rule and the
 * user is asked again; the thread's next decision stores rules only.
 */
import type { AlwaysAllowRule, SandboxKind, ToolClass } from "../../protocol/approvals.js";

/**
 * Run their arguments as another command or as code (`find -exec`, awk's `system()`): a prefix
 * of them would cover anything.
 */
const RUNS_ANYTHING = new Set([
  "sudo", "su", "doas", "pkexec", "runuser", "env", "xargs", "parallel", "nohup", "time", "timeout", "nice", "ionice", "flock",
  "command", "builtin", "exec", "eval", "watch", "ssh", "chroot", "nsenter", "unshare", "strace", "busybox", "script", "setsid",
  "stdbuf", "find", "awk", "gawk", "mawk", "nawk",
]);
/** Run a script: a rule needs the script's name as well. */
const INTERPRETERS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish", "source", ".", "python", "python3", "python2", "node", "deno", "bun", "perl", "ruby", "php", "lua", "pwsh", "powershell"]);
/** A word that may join a prefix: a sub-command or a script name, not a flag, a quote or a pattern. */
const PLAIN_WORD = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/;
const SUBSTITUTION = /\$\(|`|<\(|>\(/;
/** Redirections that write no file. */
const HARMLESS_REDIRECT = /\d?>>?\s*\/dev\/null|&>>?\s*\/dev\/null|\d?>&\d/g;
const SEPARATORS = /\r?\n|&&|\|\||\|&|;|\||&/;
const MAX_SHOWN = 80;

function words(subCommand: string): string[] {
  return subCommand.trim().split(/\s+/).filter(Boolean);
}

/** The command line's sub-commands, or undefined when no prefix rule may cover it at all. */
export function subCommands(command: string): string[] | undefined {
  if (SUBSTITUTION.test(command)) return undefined;
  // `2>&1` is no background `&`: harmless redirections leave before the line is split.
  const line = command.replace(HARMLESS_REDIRECT, " ");
  if (line.includes(">")) return undefined;
  const parts = line.split(SEPARATORS).map((s) => s.trim()).filter(Boolean);
  return parts.length > 0 ? parts : undefined;
}

function startsWith(subCommand: string, prefix: readonly string[]): boolean {
  const w = words(subCommand);
  return prefix.length > 0 && prefix.every((p, i) => w[i] === p);
}

/** The prefix a card offers for this command: its first words, when they cover the whole line. */
export function commandPrefix(command: string): string | undefined {
  const subs = subCommands(command);
  if (!subs) return undefined;
  const w = words(subs[0]!);
  const program = w[0];
  if (!program || program.includes("=") || RUNS_ANYTHING.has(program)) return undefined;
  const next = w[1];
  const withNext = next !== undefined && PLAIN_WORD.test(next);
  if (INTERPRETERS.has(program) && !withNext) return undefined;
  const prefix = withNext ? [program, next] : [program];
  if (prefix.join(" ").length > MAX_SHOWN) return undefined;
  return subs.every((s) => startsWith(s, prefix)) ? prefix.join(" ") : undefined;
}

/** The host name of a web_fetch call's URL, lower case, or undefined when it has none. */
function urlHost(args: unknown): string | undefined {
  const url = (args && typeof args === "object" ? (args as Record<string, unknown>).url : undefined);
  if (typeof url !== "string") return undefined;
  try {
    return new URL(url).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

function where(sandbox: SandboxKind): string {
  return sandbox === "devcontainer" ? "in the dev container" : "on this machine";
}

/** What the card's "Always allow" would cover, with its words; undefined when it offers none. */
export function alwaysAllowFor(call: { name: string; args?: unknown }, cls: ToolClass, sandbox: SandboxKind): { rule: AlwaysAllowRule; label: string } | undefined {
  if (cls === "protected" || cls === "read") return undefined;
  if (call.name === "bash") {
    const args = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>;
    const prefix = typeof args.command === "string" ? commandPrefix(args.command) : undefined;
    if (!prefix) return undefined;
    return { rule: { tool: "bash", class: cls, sandbox, prefix }, label: `Always allow commands starting with "${prefix}" ${where(sandbox)} in this thread` };
  }
  if (call.name === "web_fetch") {
    const host = urlHost(call.args);
    if (!host) return undefined;
    return { rule: { tool: "web_fetch", class: cls, sandbox, host }, label: `Always allow web_fetch of pages on ${host} in this thread` };
  }
  const scope = cls === "write" ? " (not protected paths)" : "";
  return { rule: { tool: call.name, class: cls, sandbox }, label: `Always allow ${call.name}${scope} in this thread` };
}

/** The rule covers this call, classified `cls`, in a run on `sandbox`. */
export function ruleCovers(rule: AlwaysAllowRule, call: { name: string; args?: unknown }, cls: ToolClass, sandbox: SandboxKind): boolean {
  if (cls === "protected" || rule.class === "protected") return false;
  if (rule.tool !== call.name || rule.class !== cls || rule.sandbox !== sandbox) return false;
  if (call.name === "web_fetch") return rule.prefix === undefined && typeof rule.host === "string" && rule.host === urlHost(call.args);
  if (call.name !== "bash") return rule.prefix === undefined && rule.host === undefined;
  const args = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>;
  if (typeof rule.prefix !== "string" || typeof args.command !== "string") return false;
  const prefix = words(rule.prefix);
  const subs = subCommands(args.command);
  return subs !== undefined && subs.every((s) => startsWith(s, prefix));
}

const CLASSES = new Set<string>(["read", "write", "protected", "shell", "web", "other"]);

function isRule(v: unknown): v is AlwaysAllowRule {
  if (v === null || typeof v !== "object") return false;
  const r = v as Record<string, unknown>;
  return typeof r.tool === "string" && typeof r.class === "string" && CLASSES.has(r.class) && r.class !== "protected" &&
    (r.sandbox === "local" || r.sandbox === "devcontainer") && (r.prefix === undefined || typeof r.prefix === "string") && (r.host === undefined || typeof r.host === "string");
}

/** The thread's rules from its `approval_always_allow` channel; legacy tool names are dropped (see above). */
export function readRules(raw: unknown): AlwaysAllowRule[] {
  return Array.isArray(raw) ? raw.filter(isRule) : [];
}

/** `rules` with `rule` added once. */
export function withRule(rules: readonly AlwaysAllowRule[], rule: AlwaysAllowRule): AlwaysAllowRule[] {
  const same = (r: AlwaysAllowRule) => r.tool === rule.tool && r.class === rule.class && r.sandbox === rule.sandbox && r.prefix === rule.prefix && r.host === rule.host;
  return rules.some(same) ? [...rules] : [...rules, rule];
}
