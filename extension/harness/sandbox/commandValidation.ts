/**
 * DeerFlow's validate_local_bash_command_paths (sandbox/tools.py), ported rule for rule.
 *
 * Runs only for host (local) bash, which the user has explicitly allowed. It is a best-effort
 * guard that nudges the model towards virtual paths, not isolation from the host: the shell can
 * always build a path at runtime. Differences from DeerFlow: there are no ACP, custom-mount or MCP
 * filesystem paths yet, and `/mnt/user-data` itself (or an unknown child of it) is refused,
 * because here the three thread dirs have no common parent to map it to. `/mnt/skills` paths are
 * allowed, as DeerFlow's `_is_skills_path` branch does (a skill's scripts run from there; the
 * paths are rewritten to the run's skills view, paths.ts).
 */
import { HarnessError } from "../errors.js";
import {
  OUTPUTS_VIRTUAL_PATH,
  PATH_TRAVERSAL_MESSAGE,
  SKILLS_VIRTUAL_PATH,
  isSkillsPath,
  UPLOADS_VIRTUAL_PATH,
  VIRTUAL_PATH_PREFIX,
  WORKSPACE_VIRTUAL_PATH,
  rejectPathTraversal,
} from "./paths.js";

const ABSOLUTE_PATH_PATTERN = /(?<![:\w])(?<!:\/)\/(?:[^\s"'`;&|<>()]+)/g;
const IDENTIFIER_BRACE_BLOCK_PATTERN = /\{([^{}]*)\}/g;
const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FILE_URL_PATTERN = /\bfile:\/\/\S+/i;
const URL_WITH_SCHEME_PATTERN = /^[a-z][a-z0-9+.-]*:\/\//i;
const URL_IN_COMMAND_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`;&|<>()]+/gi;
const DOTDOT_PATH_SEGMENT_PATTERN = /(?:^|[/\\=])\.\.(?:$|[/\\])/;
const SUBSTITUTION_BODY_PATTERN = /\$\(([^)]*)/g;
const CD_WORD_PATTERN = /\b(?:cd|pushd)\b/;

/** Executables and devices a command may name by absolute path. */
const SYSTEM_PATH_PREFIXES = ["/bin/", "/usr/bin/", "/usr/sbin/", "/sbin/", "/opt/homebrew/bin/", "/dev/"];
const CWD_COMMANDS = new Set(["cd", "pushd"]);
const COMMAND_WRAPPERS = new Set(["command", "builtin"]);
const PREFIX_KEYWORDS = new Set(["!", "{", "case", "do", "elif", "else", "for", "if", "select", "then", "time", "until", "while"]);
const END_KEYWORDS = new Set(["}", "done", "esac", "fi"]);
const ROOT_PATH_COMMANDS = new Set([
  "awk", "cat", "cp", "du", "find", "grep", "head", "less", "ln", "ls", "more", "mv", "rm", "sed", "tail", "tar",
]);
const SEPARATORS = new Set([";", "&&", "||", "|", "|&", "&", "(", ")"]);
const REDIRECTIONS = new Set(["<", ">", "<<", ">>", "<<<", "<>", ">&", "<&", "&>", "&>>", ">|"]);
const PUNCTUATION = new Set(["(", ")", ";", "<", ">", "|", "&"]);

function deny(message: string): HarnessError {
  return new HarnessError("path_denied", message);
}

const useVirtual = `Use paths under ${VIRTUAL_PATH_PREFIX}`;

/**
 * Throws `HarnessError("path_denied")` with DeerFlow's message when the command names a host path,
 * changes directory out of the workspace, uses `..`, or uses a `file://` URL.
 */
export function validateLocalBashCommandPaths(command: string): void {
  const fileUrl = FILE_URL_PATTERN.exec(command);
  if (fileUrl) throw deny(`Unsafe file:// URL in command: ${fileUrl[0]}. ${useVirtual}`);

  validateShellTokens(command);
  const urlSpans = nonFileUrlSpans(command);
  const unsafe: string[] = [];
  const unmapped: string[] = [];
  // Paths and URL spans both come in command order: one pointer, not a scan of every span per path
  // (a long command of paths and URLs made that quadratic, synchronously, on the harness's loop).
  let span = 0;
  for (const match of command.matchAll(ABSOLUTE_PATH_PATTERN)) {
    const index = match.index;
    while (span < urlSpans.length && (urlSpans[span] as [number, number])[1] <= index) span += 1;
    const inUrl = span < urlSpans.length && (urlSpans[span] as [number, number])[0] <= index;
    if (inUrl) continue;
    const path = match[0];
    if (isNonPathLiteralFragment(path)) continue;
    if (isVirtualPath(path)) {
      rejectPathTraversal(path);
      if (!isMappedVirtualPath(path)) unmapped.push(path);
      continue;
    }
    if (isSystemPath(path)) continue;
    unsafe.push(path);
  }
  if (unsafe.length > 0) {
    const list = [...new Set(unsafe)].sort().join(", ");
    throw deny(`Unsafe absolute paths in command: ${list}. ${useVirtual}`);
  }
  if (unmapped.length > 0) {
    const list = [...new Set(unmapped)].sort().join(", ");
    throw deny(
      `Unsupported virtual path in command: ${list}. Use paths under ${WORKSPACE_VIRTUAL_PATH}, ${UPLOADS_VIRTUAL_PATH} or ${OUTPUTS_VIRTUAL_PATH}`,
    );
  }
}

function isVirtualPath(path: string): boolean {
  return path === VIRTUAL_PATH_PREFIX || path.startsWith(`${VIRTUAL_PATH_PREFIX}/`) || isSkillsPath(path);
}

function isMappedVirtualPath(path: string): boolean {
  return [WORKSPACE_VIRTUAL_PATH, UPLOADS_VIRTUAL_PATH, OUTPUTS_VIRTUAL_PATH, SKILLS_VIRTUAL_PATH].some(
    (root) => path === root || path.startsWith(`${root}/`),
  );
}

function isSystemPath(path: string): boolean {
  return SYSTEM_PATH_PREFIXES.some((prefix) => path === prefix.slice(0, -1) || path.startsWith(prefix));
}

function nonFileUrlSpans(command: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const m of command.matchAll(URL_IN_COMMAND_PATTERN)) {
    if (!m[0].toLowerCase().startsWith("file://")) spans.push([m.index, m.index + m[0].length]);
  }
  return spans;
}

function isNonFileUrlToken(token: string): boolean {
  const values = [token];
  const eq = token.indexOf("=");
  if (eq >= 0) values.push(token.slice(eq + 1));
  return values.some((v) => URL_WITH_SCHEME_PATTERN.test(v) && !v.toLowerCase().startsWith("file://"));
}

/**
 * `/端口{port}` in an f-string or `/devices/{id}/port` in a REST template is text, not a path;
 * brace *expansion* (`/etc/{passwd,shadow}`) and `${VAR}` rebuild real host paths, so they are not.
 */
function isNonPathLiteralFragment(fragment: string): boolean {
  if ([...fragment].some((ch) => ch.charCodeAt(0) > 127)) return true;
  if (!fragment.includes("{") && !fragment.includes("}")) return false;
  if (fragment.includes("${")) return false;
  const blocks = [...fragment.matchAll(IDENTIFIER_BRACE_BLOCK_PATTERN)].map((m) => m[1] ?? "");
  const count = (ch: string): number => fragment.split(ch).length - 1;
  if (count("{") !== blocks.length || count("}") !== blocks.length) return false;
  return blocks.every((inner) => IDENTIFIER_PATTERN.test(inner));
}

// ---- shell tokens ---------------------------------------------------------------------------------

/**
 * Python's `shlex.shlex(posix=True, punctuation_chars=True, whitespace_split=True)` with no
 * comment characters, after newlines became ` ; `. Unbalanced quotes fall back to a whitespace
 * split, as DeerFlow does: the shell will reject the command anyway.
 */
export function splitShellTokens(command: string): string[] {
  const normalized = command.replace(/\r\n?/g, "\n").replace(/\n/g, " ; ");
  const tokens: string[] = [];
  let word: string | undefined;
  let i = 0;
  const flush = (): void => {
    if (word !== undefined) tokens.push(word);
    word = undefined;
  };
  while (i < normalized.length) {
    const ch = normalized[i] as string;
    if (/\s/.test(ch)) {
      flush();
      i += 1;
    } else if (PUNCTUATION.has(ch)) {
      flush();
      let run = "";
      while (i < normalized.length && PUNCTUATION.has(normalized[i] as string)) run += normalized[i++];
      tokens.push(run);
    } else if (ch === "'" || ch === '"') {
      const close = ch;
      i += 1;
      let text = "";
      for (;;) {
        if (i >= normalized.length) return command.split(/\s+/).filter((t) => t !== "");
        const c = normalized[i] as string;
        if (c === close) break;
        if (close === '"' && c === "\\" && (normalized[i + 1] === '"' || normalized[i + 1] === "\\")) {
          text += normalized[i + 1];
          i += 2;
          continue;
        }
        text += c;
        i += 1;
      }
      i += 1;
      word = (word ?? "") + text;
    } else if (ch === "\\") {
      if (i + 1 >= normalized.length) return command.split(/\s+/).filter((t) => t !== "");
      word = (word ?? "") + normalized[i + 1];
      i += 2;
    } else {
      word = (word ?? "") + ch;
      i += 1;
    }
  }
  flush();
  return tokens;
}

function isAssignment(token: string): boolean {
  const eq = token.indexOf("=");
  return eq > 0 && IDENTIFIER_PATTERN.test(token.slice(0, eq));
}

/**
 * A `cd`/`pushd` between `$(` and the next `)`. Span by span, so linear: the single pattern
 * `\$\([^)]*\b(?:cd|pushd)\b` re-scanned the rest of the command from every `$(`, and a long
 * command of `$(`s took seconds of the harness's event loop.
 */
function cdInSubstitution(command: string): boolean {
  for (const m of command.matchAll(SUBSTITUTION_BODY_PATTERN)) if (CD_WORD_PATTERN.test(m[1] ?? "")) return true;
  return false;
}

function validateShellTokens(command: string): void {
  if (cdInSubstitution(command)) {
    throw deny(`Unsafe working directory change in command substitution. ${useVirtual}`);
  }
  const tokens = splitShellTokens(command);
  for (const token of tokens) {
    if (SEPARATORS.has(token) || REDIRECTIONS.has(token)) continue;
    if (!isNonFileUrlToken(token) && DOTDOT_PATH_SEGMENT_PATTERN.test(token)) throw deny(PATH_TRAVERSAL_MESSAGE);
  }

  let atCommandStart = true;
  let index = 0;
  while (index < tokens.length) {
    const token = tokens[index] as string;
    if (SEPARATORS.has(token)) {
      atCommandStart = true;
      index += 1;
      continue;
    }
    if (REDIRECTIONS.has(token) || !atCommandStart) {
      index += 1;
      continue;
    }
    if (isAssignment(token)) {
      index += 1;
      continue;
    }
    const name = commandName(token);
    if (PREFIX_KEYWORDS.has(name) || END_KEYWORDS.has(name)) {
      index += 1;
      continue;
    }
    atCommandStart = false;
    const wrapped = tokens[index + 1];
    if (COMMAND_WRAPPERS.has(name) && wrapped !== undefined) {
      const wrappedName = commandName(wrapped);
      if (CWD_COMMANDS.has(wrappedName)) {
        const [target, next] = nextCdTarget(tokens, index + 2);
        validateCwdTarget(wrappedName, target);
        index = next;
        continue;
      }
      validateRootPathArgs(wrappedName, tokens, index + 2);
    }
    if (!CWD_COMMANDS.has(name)) {
      validateRootPathArgs(name, tokens, index + 1);
      index += 1;
      continue;
    }
    const [target, next] = nextCdTarget(tokens, index + 1);
    validateCwdTarget(name, target);
    index = next;
  }
}

function commandName(token: string): string {
  return token.slice(token.lastIndexOf("/") + 1);
}

function nextCdTarget(tokens: string[], start: number): [string | undefined, number] {
  let index = start;
  while (index < tokens.length) {
    const token = tokens[index] as string;
    if (SEPARATORS.has(token)) return [undefined, index];
    if (REDIRECTIONS.has(token)) {
      index += 2;
      continue;
    }
    if (token.startsWith("-") && token !== "-") {
      index += 1;
      continue;
    }
    return [token, index + 1];
  }
  return [undefined, index];
}

function validateCwdTarget(name: string, target: string | undefined): void {
  if (target === undefined || target === "-") {
    throw deny(`Unsafe working directory change in command: ${name}. ${useVirtual}`);
  }
  const unsafe = (): HarnessError => deny(`Unsafe working directory change in command: ${name} ${target}. ${useVirtual}`);
  if (target.startsWith("$") || target.startsWith("`") || target.startsWith("~")) throw unsafe();
  if (target.startsWith("/")) {
    rejectPathTraversal(target);
    if (!isVirtualPath(target) || !isMappedVirtualPath(target)) throw unsafe();
  }
}

function validateRootPathArgs(name: string, tokens: string[], start: number): void {
  if (!ROOT_PATH_COMMANDS.has(name)) return;
  for (let index = start; index < tokens.length; index += 1) {
    const token = tokens[index] as string;
    if (SEPARATORS.has(token)) return;
    if (REDIRECTIONS.has(token)) {
      index += 1;
      continue;
    }
    if (token === "/") throw deny(`Unsafe absolute paths in command: /. ${useVirtual}`);
  }
}
