/**
 * The bash command audit (DeerFlow's SandboxAuditMiddleware classification, reference §3.3): every
 * `bash` command is classified before it runs, on the host and in a container alike.
 *
 * - block: wipes of `/`, the home directory or the workspace (`rm -rf /`, `/*`, `~`,
 *   `--no-preserve-root`, mkfs, dd onto a disk), fork bombs, and download-and-execute
 *   (`curl … | sh`, `wget -O- … | bash`, `$(curl …)` in command position, `bash <(curl …)`,
 *   `bash -c "$(curl …)"`, `eval "$(wget …)"`). The command never reaches the sandbox.
 * - warn: package installs that change the environment (`pip install`, `npm i -g`, `apt-get
 *   install`, …), a download piped into something that does not execute it, and DeerFlow's other
 *   medium-risk forms (`chmod 777`, `sudo`/`su`, `PATH=`). The command runs; a warning follows.
 *
 * Like DeerFlow's, this is an audit, not the security boundary: a shell can always build a
 * command at run time (`"r""m" -rf /`). The boundaries are the container and the user's consent
 * to host commands (trust/README.md, the threat model). What it buys is that the common destructive and
 * remote-code shapes a model produces are stopped with a reason the model can act on.
 *
 * Where we differ from DeerFlow on purpose: the rules read the command's structure
 * (shellStructure.ts: pipelines, stages, substitutions; splitShellTokens for words) instead of
 * regexes over the whole text, so `echo "pip install x"` or `x=$(curl …)` pass, `rm -rf "$HOME"`
 * and `sudo sh -c 'rm -rf /'` do not, and the reason names what was found. DeerFlow's rules for
 * `/etc/shadow`, `/proc/*\/environ`, `LD_PRELOAD` and `/dev/tcp` are not ported: in a container
 * with a scrubbed environment they guard nothing, and on the host bash runs only with consent.
 */
import { splitShellTokens } from "./commandValidation.js";
import { scanShell } from "./shellStructure.js";
import type { Pipeline } from "./shellStructure.js";

export type AuditResult =
  | { readonly verdict: "pass" }
  | { readonly verdict: "warn"; readonly reason: string }
  | { readonly verdict: "block"; readonly reason: string };

/** DeerFlow's limit: far above any real command, far below ARG_MAX. */
export const MAX_COMMAND_LENGTH = 10_000;
const MAX_DEPTH = 6;

/** DeerFlow's wording for a blocked call (`_build_block_message`). */
export function blockedMessage(reason: string): string {
  return `Command blocked: ${reason}. Please use a safer alternative approach.`;
}

/** DeerFlow's wording for a medium-risk call (`_append_warn_to_result`). */
export function warningSuffix(command: string): string {
  return `\n\n⚠️ Warning: \`${command}\` is a medium-risk command that may modify the runtime environment.`;
}

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh"]);
const INTERPRETER = /^(python[\d.]*|pypy[\d.]*|perl[\d.]*|ruby[\d.]*|node|nodejs|php[\d.]*|lua[\d.]*|deno|bun|tclsh|Rscript)$/;
const DOWNLOADERS = new Set(["curl", "wget", "fetch", "aria2c", "http", "https", "xh"]);
/** Commands whose output, run as a command, is remote or generated code (DeerFlow's list). */
const SUBSTITUTION_EXECUTABLES = /^(curl|wget|fetch|aria2c|bash|sh|dash|zsh|python[\d.]*|perl|ruby|node|base64)$/;
const KEYWORDS = new Set(["!", "{", "(", "then", "do", "else", "elif", "if", "while", "until", "time", "exec", "command", "builtin", "nohup"]);
/** Folders whose recursive removal is a wipe (after `~`/$HOME and the workspace, below). */
const SYSTEM_DIRS = ["bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "mnt", "opt", "proc", "root", "sbin", "srv", "sys", "usr", "var"];
const WORKSPACE = "/mnt/user-data/workspace";

/** A command in one stage, with the wrappers (`sudo`, `env`, `nohup`, …) skipped. */
interface Invocation {
  readonly name: string;
  readonly args: readonly string[];
  readonly sudo: boolean;
  readonly setsPath: boolean;
}

export function auditCommand(command: string): AuditResult {
  if (command.trim() === "") return { verdict: "block", reason: "empty command" };
  if (command.length > MAX_COMMAND_LENGTH) return { verdict: "block", reason: "command too long" };
  if (command.includes("\0")) return { verdict: "block", reason: "null byte detected" };
  return audit(command, 0);
}

function audit(command: string, depth: number): AuditResult {
  if (depth > MAX_DEPTH) return { verdict: "pass" };
  const bomb = forkBomb(command);
  if (bomb) return { verdict: "block", reason: bomb };
  const { pipelines, substitutions } = scanShell(command);
  let warning: string | undefined;
  const consider = (r: AuditResult): AuditResult | undefined => {
    if (r.verdict === "block") return r;
    if (r.verdict === "warn") warning ??= r.reason;
    return undefined;
  };
  for (const pipeline of pipelines) {
    const blocked = consider(auditPipeline(pipeline, depth));
    if (blocked) return blocked;
  }
  // What a substitution runs, runs: `echo $(rm -rf ~)` is a wipe.
  for (const sub of substitutions) {
    const blocked = consider(audit(sub.body, depth + 1));
    if (blocked) return blocked;
  }
  return warning ? { verdict: "warn", reason: warning } : { verdict: "pass" };
}

function auditPipeline(stages: Pipeline, depth: number): AuditResult {
  let warning: string | undefined;
  let downloaded = false;
  for (const [index, stage] of stages.entries()) {
    const raw = stage.trim();
    if (commandPositionSubstitution(raw)) {
      return { verdict: "block", reason: `download-and-execute: the output of \`${firstWords(raw)}\` would run as a command` };
    }
    const inv = invocation(splitShellTokens(raw));
    if (!inv) continue;
    const piped = index > 0;
    // A shell after a pipe runs whatever it reads (DeerFlow blocks every `| sh`); an interpreter
    // only counts when the text it reads was downloaded (`… | python3` is common for data).
    if (piped && readsProgramFromStdin(inv) && (downloaded || SHELLS.has(inv.name))) {
      return {
        verdict: "block",
        reason: downloaded
          ? `download-and-execute: downloaded content is piped into \`${inv.name}\``
          : `text piped into \`${inv.name}\` would run as a program`,
      };
    }
    const wipe = wipeReason(inv);
    if (wipe) return { verdict: "block", reason: wipe };
    const fetched = executesDownload(inv, raw);
    if (fetched) return { verdict: "block", reason: fetched };
    // `sh -c SCRIPT`, `eval WORDS`: the script is a command line of its own.
    const script = inlineScript(inv);
    if (script !== undefined) {
      const inner = audit(script, depth + 1);
      if (inner.verdict === "block") return inner;
      if (inner.verdict === "warn") warning ??= inner.reason;
    }
    if (piped && downloaded) warning ??= `a download is piped into \`${inv.name}\``;
    if (DOWNLOADERS.has(inv.name)) downloaded = true;
    warning ??= mediumRisk(inv);
  }
  return warning ? { verdict: "warn", reason: warning } : { verdict: "pass" };
}

/** Skips assignments, keywords and wrappers; undefined for an empty stage. */
function invocation(tokens: readonly string[]): Invocation | undefined {
  let i = 0;
  let sudo = false;
  let setsPath = false;
  const skipOptions = (withValue: ReadonlySet<string>): void => {
    while (i < tokens.length && (tokens[i] as string).startsWith("-")) {
      const opt = tokens[i] as string;
      i += 1;
      if (opt === "--") break;
      if (withValue.has(opt)) i += 1;
    }
  };
  while (i < tokens.length) {
    const token = tokens[i] as string;
    const name = token.slice(token.lastIndexOf("/") + 1);
    if (isAssignment(token)) {
      if (token.startsWith("PATH=")) setsPath = true;
      i += 1;
    } else if (KEYWORDS.has(name)) {
      i += 1;
    } else if (name === "sudo" || name === "doas") {
      sudo = true;
      i += 1;
      skipOptions(new Set(["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"]));
    } else if (name === "env") {
      i += 1;
      skipOptions(new Set(["-u", "-C", "--unset", "--chdir"]));
    } else if (name === "nice" || name === "ionice" || name === "stdbuf" || name === "setsid" || name === "chrt" || name === "taskset") {
      i += 1;
      skipOptions(new Set(["-n", "-c", "-p", "-o", "-e", "-i"]));
    } else if (name === "timeout") {
      i += 1;
      skipOptions(new Set(["-s", "-k", "--signal", "--kill-after"]));
      i += 1; // the duration
    } else if (name === "xargs") {
      i += 1;
      skipOptions(new Set(["-n", "-I", "-P", "-d", "-L", "-s", "-a", "-E"]));
    } else if (name === "busybox" && i + 1 < tokens.length) {
      i += 1;
    } else {
      return { name, args: tokens.slice(i + 1), sudo, setsPath };
    }
  }
  return undefined;
}

function isAssignment(token: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*=/.test(token);
}

// ---- block rules ------------------------------------------------------------------------------

function wipeReason(inv: Invocation): string | undefined {
  const { name, args } = inv;
  if (name === "rm") {
    const options = args.slice(0, Math.max(0, args.indexOf("--")) || args.length).filter((a) => a.startsWith("-"));
    if (options.includes("--no-preserve-root")) return "recursive deletion with `--no-preserve-root`";
    const recursive = options.some((o) => o === "--recursive" || /^-[A-Za-z]*[rR]/.test(o));
    const target = args.filter((a) => !a.startsWith("-")).find(isWipeTarget);
    if (recursive && target !== undefined) return `recursive deletion of \`${target}\``;
  }
  // `find ROOT -delete` with no test narrowing it down (`-name`, `-type`, …) deletes everything.
  const narrowed = args.some((a) => /^-(i?name|i?path|i?wholename|i?regex|type|newer\w*|[acm]time|[acm]min|size|user|group|perm|empty|links|inum|samefile)$/.test(a));
  if (name === "find" && args.includes("-delete") && !narrowed) {
    const root = args.find((a) => !a.startsWith("-"));
    if (root !== undefined && isWipeTarget(root)) return `\`find ${root} -delete\` would wipe it`;
  }
  if (/^mkfs(\.|$)/.test(name) || name === "mke2fs" || name === "wipefs") return `\`${name}\` formats a disk`;
  if (name === "dd") {
    const target = args.find((a) => /^of=\/dev\/(?!null$|zero$|stdout$|stderr$|tty$)/.test(a));
    if (target) return `\`dd ${target}\` overwrites a device`;
  }
  return undefined;
}

/** `/`, `/*`, a top-level system folder, the home directory, the workspace itself. */
function isWipeTarget(arg: string): boolean {
  let path = arg.replace(/\/{2,}/g, "/");
  while (/.\/\.?$/.test(path)) path = path.replace(/\/\.?$/, "");
  path = path.replace(/\/\*$/, "") || "/";
  if (path === "/" || path === "/*" || path === "/." || path === "/..") return true;
  if (/^(~|\$HOME|\$\{HOME\})$/.test(path) || /^~[A-Za-z_][\w-]*$/.test(path)) return true;
  if (path === WORKSPACE || path === "/mnt/user-data") return true;
  return SYSTEM_DIRS.some((dir) => path === `/${dir}`) || /^\/home\/[^/]+$/.test(path);
}

/** A function that calls itself in the background or through a pipe; an endless loop that forks. */
function forkBomb(command: string): string | undefined {
  // Anchored at word starts: a long word is scanned once, not once per character.
  const definitions = /(?<![^\s;&|({])(?:function\s+)?([^\s(){};|&<>'"`]+)\s*\(\s*\)\s*\{([^}]*)\}|function\s+([^\s(){};|&<>'"`]+)\s*\{([^}]*)\}/g;
  for (const m of command.matchAll(definitions)) {
    const name = m[1] ?? m[3] ?? "";
    const body = m[2] ?? m[4] ?? "";
    const self = new RegExp(`(?:^|[\\s;{(|&])${escapeRegExp(name)}\\s*(?:\\|(?!\\|)|&(?!&))`);
    if (name !== "" && self.test(body)) return `fork bomb (\`${name}\` starts copies of itself)`;
  }
  const loop = /\b(?:while|until)\s+(?:true|:|1|\[\s*1\s*\])\s*;?\s*do\b([\s\S]*?)\bdone\b|\bfor\s*\(\(\s*;\s*;\s*\)\)\s*;?\s*do\b([\s\S]*?)\bdone\b/g;
  for (const m of command.matchAll(loop)) {
    const body = m[1] ?? m[2] ?? "";
    if (/[^&>]&(?![&>])/.test(` ${body}`)) return "fork bomb (an endless loop that starts background processes)";
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `$(curl …)` / `` `curl …` `` as the command itself (after assignments and wrappers). */
function commandPositionSubstitution(stage: string): boolean {
  const prefix = String.raw`^(?:(?:[!{(]|then|do|else|env|command|builtin|exec|nohup|time|sudo|doas|setsid)\s+|[A-Za-z_]\w*=\S*\s+)*`;
  const open = new RegExp(`${prefix}["']?(?:\\$\\(|\`)\\s*(\\S+)`);
  const m = open.exec(stage);
  if (!m) return false;
  const word = (m[1] ?? "").replace(/[)`'"]+$/, "");
  return SUBSTITUTION_EXECUTABLES.test(word.slice(word.lastIndexOf("/") + 1));
}

/** A shell or interpreter after a pipe with no script of its own runs what it reads. */
function readsProgramFromStdin(inv: Invocation): boolean {
  if (SHELLS.has(inv.name)) return !inv.args.some((a) => /^-[A-Za-z]*c[A-Za-z]*$/.test(a)) && !inv.args.some(isScriptFile);
  if (INTERPRETER.test(inv.name)) return !inv.args.some((a) => /^-[A-Za-z]*[ceEr]$/.test(a) || a === "-m" || a === "--eval") && !inv.args.some(isScriptFile);
  return false;
}

function isScriptFile(arg: string): boolean {
  return !arg.startsWith("-") && arg !== "-";
}

/** `bash <(curl …)`, `bash -c "$(curl …)"`, `eval "$(wget …)"`, `source <(curl …)`. */
function executesDownload(inv: Invocation, stage: string): string | undefined {
  const runsCode = SHELLS.has(inv.name) || INTERPRETER.test(inv.name) || inv.name === "eval" || inv.name === "source" || inv.name === ".";
  if (!runsCode) return undefined;
  for (const sub of scanShell(stage).substitutions) {
    if (sub.kind === ">(") continue;
    const inner = scanShell(sub.body).pipelines.flat().map((s) => invocation(splitShellTokens(s))?.name);
    const source = inner.find((n) => n !== undefined && (DOWNLOADERS.has(n) || n === "base64"));
    if (source !== undefined) return `download-and-execute: \`${inv.name}\` would run what \`${source}\` fetched`;
  }
  return undefined;
}

/** The script of `sh -c SCRIPT`, `su -c SCRIPT`, `eval WORDS…`, to audit on its own. */
function inlineScript(inv: Invocation): string | undefined {
  if (inv.name === "eval") return inv.args.join(" ");
  if (SHELLS.has(inv.name) || inv.name === "su") {
    const flag = inv.args.findIndex((a) => /^-[A-Za-z]*c[A-Za-z]*$/.test(a) || a === "--command");
    if (flag >= 0) return inv.args[flag + 1];
  }
  return undefined;
}

// ---- warn rules -------------------------------------------------------------------------------

function mediumRisk(inv: Invocation): string | undefined {
  const { name, args } = inv;
  const words = args.filter((a) => !a.startsWith("-"));
  const sub = words[0];
  const global = args.some((a) => a === "-g" || a === "--global" || a === "--location=global");
  if (/^pip[\d.]*$/.test(name) && sub === "install") return "pip install";
  if (INTERPRETER.test(name) && args[0] === "-m" && args[1] === "pip" && args[2] === "install") return "pip install";
  if ((name === "uv" && sub === "pip" && words[1] === "install") || (name === "pipx" && sub === "install")) return `${name} install`;
  if ((name === "npm" || name === "pnpm" || name === "bun") && ["install", "i", "add"].includes(sub ?? "") && global) return `${name} global install`;
  if (name === "yarn" && sub === "global") return "yarn global add";
  if (["apt", "apt-get", "aptitude", "dnf", "yum", "microdnf", "zypper", "brew", "gem", "cargo", "conda", "mamba"].includes(name) && sub === "install") {
    return `${name} install`;
  }
  if (name === "go" && sub === "install") return "go install";
  if (name === "apk" && sub === "add") return "apk add";
  if (name === "pacman" && args.some((a) => /^-S/.test(a))) return "pacman -S";
  if (name === "chmod" && args.some((a) => /^0?777$/.test(a))) return "chmod 777";
  if (inv.sudo || name === "su") return "sudo/su";
  if (inv.setsPath || (name === "export" && args.some((a) => a.startsWith("PATH=")))) return "PATH change";
  return undefined;
}

function firstWords(stage: string): string {
  const text = stage.replace(/\s+/g, " ").trim();
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
