/**
 * Truncation and result shaping for the sandbox tools, in one place, with DeerFlow's exact strings
 * (`sandbox/tools.py` _truncate_*, _format_*; `local_sandbox.py` execute_command).
 */
import type { ThreadDirs } from "../../threads/threadDirs.js";
import { maskLocalPathsInOutput } from "../../sandbox/paths.js";
import type { ExecResult } from "../../sandbox/provider.js";
import type { GrepMatch } from "../../sandbox/files.js";
import { isPathRefusal } from "../../trust/toolPaths.js";

export const BASH_OUTPUT_MAX_CHARS = 20_000;
export const READ_FILE_OUTPUT_MAX_CHARS = 50_000;
export const LS_OUTPUT_MAX_CHARS = 20_000;
export const WRITE_FILE_ERROR_MAX_CHARS = 2_000;
export const DEFAULT_GLOB_MAX_RESULTS = 200;
export const MAX_GLOB_MAX_RESULTS = 1_000;
export const DEFAULT_GREP_MAX_RESULTS = 100;
export const MAX_GREP_MAX_RESULTS = 500;
/** 80 KiB: larger single-shot payloads correlate with streaming chunk-gap timeouts (DeerFlow #3189). */
export const WRITE_FILE_CONTENT_MAX_BYTES = 80 * 1024;
export const WRITE_FILE_MAX_BYTES_ENV = "DEERFLOW_WRITE_FILE_MAX_BYTES";

/** Middle truncation, 50/50 head and tail; never longer than `maxChars`; 0 disables. */
export function truncateBashOutput(output: string, maxChars: number = BASH_OUTPUT_MAX_CHARS): string {
  if (maxChars === 0 || output.length <= maxChars) return output;
  const total = output.length;
  const markerMax = `\n... [middle truncated: ${total} chars skipped] ...\n`.length;
  const kept = Math.max(0, maxChars - markerMax);
  if (kept === 0) return output.slice(0, maxChars);
  const head = Math.floor(kept / 2);
  const tail = kept - head;
  const marker = `\n... [middle truncated: ${total - kept} chars skipped] ...\n`;
  return `${output.slice(0, head)}${marker}${tail > 0 ? output.slice(-tail) : ""}`;
}

function headTruncate(output: string, maxChars: number, hint: string): string {
  if (maxChars === 0 || output.length <= maxChars) return output;
  const total = output.length;
  const markerMax = `\n... [truncated: showing first ${total} of ${total} chars. ${hint}] ...`.length;
  const kept = Math.max(0, maxChars - markerMax);
  if (kept === 0) return output.slice(0, maxChars);
  return `${output.slice(0, kept)}\n... [truncated: showing first ${kept} of ${total} chars. ${hint}] ...`;
}

/** Head truncation: source is read top to bottom, the head carries the most context. */
export function truncateReadFileOutput(output: string, maxChars: number = READ_FILE_OUTPUT_MAX_CHARS): string {
  return headTruncate(output, maxChars, "Use start_line/end_line to read a specific range");
}

export function truncateLsOutput(output: string, maxChars: number = LS_OUTPUT_MAX_CHARS): string {
  return headTruncate(output, maxChars, "Use a more specific path to see fewer results");
}

/** Middle truncation of write_file error details (marker differs from bash's). */
export function truncateWriteFileErrorDetail(detail: string, maxChars: number): string {
  if (maxChars === 0 || detail.length <= maxChars) return detail;
  const total = detail.length;
  const markerMax = `\n... [write_file error truncated: ${total} chars skipped] ...\n`.length;
  const kept = Math.max(0, maxChars - markerMax);
  if (kept === 0) return detail.slice(0, maxChars);
  const head = Math.floor(kept / 2);
  const tail = kept - head;
  const marker = `\n... [write_file error truncated: ${total - kept} chars skipped] ...\n`;
  return `${detail.slice(0, head)}${marker}${tail > 0 ? detail.slice(-tail) : ""}`;
}

/** "Error: Failed to write file '{p}': {Type}: {detail}", bounded to 2000 chars, host paths masked. */
export function formatWriteFileError(requestedPath: string, err: unknown, dirs: ThreadDirs): string {
  const header = `Error: Failed to write file '${requestedPath}'`;
  const detail = sanitizeError(err, dirs);
  const budget = WRITE_FILE_ERROR_MAX_CHARS - header.length - 2;
  if (budget <= 0) return truncateWriteFileErrorDetail(`${header}: ${detail}`, WRITE_FILE_ERROR_MAX_CHARS);
  return `${header}: ${truncateWriteFileErrorDetail(detail, budget)}`;
}

/** "{Type}: {message}" with every host path of the thread rewritten to its virtual form. */
export function sanitizeError(err: unknown, dirs: ThreadDirs): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : `Error: ${String(err)}`;
  return maskLocalPathsInOutput(text, dirs);
}

/** "1.5 seconds", "1 second", "600 seconds" (Python's `{:g}` for fractions). */
export function formatTimeoutDuration(timeoutMs: number): string {
  const seconds = timeoutMs / 1000;
  const amount = Number.isInteger(seconds) ? String(seconds) : String(Number(seconds.toPrecision(6)));
  return `${amount} ${seconds === 1 ? "second" : "seconds"}`;
}

export function formatTimeoutNotice(timeoutMs: number): string {
  return (
    `Command timed out after ${formatTimeoutDuration(timeoutMs)} and was terminated. ` +
    "To run a long-lived process such as a web server, start it in the background " +
    "and redirect its output, e.g. `your-command > /mnt/user-data/workspace/server.log 2>&1 &`."
  );
}

/**
 * stdout; then "\nStd Error:\n{stderr}" (or stderr alone when stdout is empty); then the timeout
 * notice or "\nExit Code: {n}" for a non-zero exit; "(no output)" when all is empty.
 */
export function formatExecResult(result: ExecResult): string {
  let output = result.stdout;
  if (result.stderr) output += output ? `\nStd Error:\n${result.stderr}` : result.stderr;
  if (result.timedOut) {
    const notice = formatTimeoutNotice(result.timeoutMs);
    output += output ? `\n${notice}` : notice;
  } else if (result.exitCode !== 0 && result.exitCode !== null) {
    output += `\nExit Code: ${result.exitCode}`;
  }
  return output || "(no output)";
}

export function formatGlobResults(root: string, matches: string[], truncated: boolean): string {
  if (matches.length === 0) return `No files matched under ${root}`;
  let first = `Found ${matches.length} paths under ${root}`;
  if (truncated) first += ` (showing first ${matches.length})`;
  const lines = [first, ...matches.map((m, i) => `${i + 1}. ${m}`)];
  if (truncated) lines.push("Results truncated. Narrow the path or pattern to see fewer matches.");
  return lines.join("\n");
}

export function formatGrepResults(root: string, matches: GrepMatch[], truncated: boolean): string {
  if (matches.length === 0) return `No matches found under ${root}`;
  let first = `Found ${matches.length} matches under ${root}`;
  if (truncated) first += ` (showing first ${matches.length})`;
  const lines = [first, ...matches.map((m) => `${m.path}:${m.lineNumber}: ${m.line}`)];
  if (truncated) lines.push("Results truncated. Narrow the path or add a glob filter.");
  return lines.join("\n");
}

/** Non-positive requests fall back to the default; larger ones are capped. */
export function clampMaxResults(value: number | null | undefined, fallback: number, upperBound: number): number {
  if (value == null || !Number.isFinite(value) || value <= 0) return fallback;
  return Math.min(Math.floor(value), upperBound);
}

/** Read at call time so the setting applies without a restart; malformed → default; ≤0 → off. */
export function effectiveWriteFileMaxBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[WRITE_FILE_MAX_BYTES_ENV];
  if (raw === undefined) return WRITE_FILE_CONTENT_MAX_BYTES;
  const trimmed = raw.trim();
  return /^[+-]?\d+$/.test(trimmed) ? Number.parseInt(trimmed, 10) : WRITE_FILE_CONTENT_MAX_BYTES;
}

export function writeFileTooLargeMessage(contentBytes: number, maxBytes: number): string {
  return (
    `Error: write_file content (${contentBytes} bytes) exceeds the ${maxBytes}-byte single-call limit. ` +
    "Split the content into smaller pieces: either (a) write the first section now, then use `str_replace` " +
    "for further edits, or (b) call write_file again with append=True carrying the next section. " +
    "See SIZE POLICY in the tool docstring or issue #3189 for the rationale."
  );
}

/**
 * DeerFlow's "Permission denied ..." text, plus the reason when the harness refused the path
 * (traversal, outside the thread's roots, a protected path and its rule, a redirected thread
 * folder): the model can act on "use /mnt/user-data/..." or tell the user, not on a bare
 * "denied". The reason never names a host path (the trust module builds it from virtual roots
 * and workspace-relative names).
 */
export function permissionDenied(prefix: string, requested: string, err: unknown): string {
  const base = `${prefix}: ${requested}`;
  if (isPathRefusal(err)) return `${base} (${err.message})`;
  return base;
}

/**
 * A write tool's answer when writing `requested` is not permitted (the trust boundary refused the
 * path, or the file system did): the text write_file and str_replace return, and the one the
 * approval preflight (approvals/preflight.ts) answers with when the boundary would refuse a write.
 */
export function writeDeniedText(tool: "write_file" | "str_replace", requested: string, err: unknown): string {
  if (tool === "str_replace") return permissionDenied("Error: Permission denied accessing file", requested, err);
  return truncateWriteFileErrorDetail(permissionDenied("Error: Permission denied writing to file", requested, err), WRITE_FILE_ERROR_MAX_CHARS);
}
