/**
 * ToolOutputBudgetMiddleware (DeerFlow `tool_output_budget_middleware.py` + `tool_output_synopsis.py`):
 * one oversized tool result must not blow the model's context. A text result longer than 12000
 * characters is saved in full to the thread's outputs, `/mnt/user-data/outputs/.tool-results/`, and
 * replaced in context by a synopsis and a pointer the model can page through with `read_file`.
 *
 * Second in the chain, so its tool wrapper is outside ToolErrorHandling: it also budgets the error
 * text of a tool that threw. `read_file` is exempt: re-reading a saved result must not loop.
 * If the file cannot be written the result is head+tail truncated to 30000 characters instead.
 * The model-call hook applies the same fallback to historical results (request-only).
 *
 * Where we differ from DeerFlow: the outputs folder is always on the host (the local provider, and
 * a dev container bind-mounts it), so there is no write-through-the-sandbox path; the synopsis
 * recognises text and JSON (DeerFlow adds CSV/TSV/XML/YAML/code shapes).
 *
 * The sandbox can write in outputs, so the spill goes through the trust boundary: the thread
 * folders and `.tool-results` are checked at every spill (a link is refused, never followed) and
 * each file is a new one opened with checks. A refused spill falls back to truncation.
 */
import { createMiddleware } from "langchain";
import { ToolMessage } from "@langchain/core/messages";
import { basename, join } from "node:path";
import { randomUUID } from "node:crypto";
import { OUTPUTS_VIRTUAL_PATH } from "../sandbox/paths.js";
import { createFileSync } from "../trust/openChecked.js";
import { ensureRealFolder, ensureThreadFolders } from "../trust/threadFolders.js";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { mapToolResult, withToolContent } from "./shared/toolResults.js";

export interface ToolOutputBudgetOptions {
  /** `tool_output.externalize_min_chars`: longer results are saved to a file. 0 disables. */
  externalizeMinChars: number;
  previewHeadChars: number;
  previewTailChars: number;
  /** Cap when the file cannot be written. 0 disables the fallback. */
  fallbackMaxChars: number;
  fallbackHeadChars: number;
  fallbackTailChars: number;
  exemptTools: readonly string[];
  /** Per-tool thresholds; 0 = never externalise that tool (the fallback still applies). */
  toolOverrides: Readonly<Record<string, number>>;
}

export const TOOL_RESULTS_DIRNAME = ".tool-results";

export const DEFAULT_TOOL_OUTPUT_BUDGET: ToolOutputBudgetOptions = {
  externalizeMinChars: 12_000,
  previewHeadChars: 2_000,
  previewTailChars: 1_000,
  fallbackMaxChars: 30_000,
  fallbackHeadChars: 8_000,
  fallbackTailChars: 3_000,
  exemptTools: ["read_file", "read_file_tool"],
  toolOverrides: {},
};

/** Command-like tools whose output reads as a log. */
const LOG_TOOLS = new Set(["bash", "bash_tool", "web_fetch"]);

/** Text of a tool result; undefined for anything with non-text blocks (images are never budgeted). */
function resultText(content: ToolMessage["content"]): string | undefined {
  if (typeof content === "string") return content;
  const parts: string[] = [];
  for (const b of content as unknown[]) {
    if (typeof b === "string") parts.push(b);
    else if (typeof b === "object" && b !== null && typeof (b as { text?: unknown }).text === "string") parts.push((b as { text: string }).text);
    else return undefined;
  }
  return parts.length > 0 ? parts.join("\n") : undefined;
}

function safeToolName(name: string): string {
  return basename(name).replace(/\.\./g, "").replace(/[/\\]/g, "_") || "unknown";
}

/** Write the full text; returns its virtual path, or undefined when it could not be written. */
function externalize(text: string, toolName: string, dirs: ThreadDirs): string | undefined {
  const file = `${safeToolName(toolName)}-${randomUUID().replace(/-/g, "").slice(0, 12)}.${LOG_TOOLS.has(toolName) ? "log" : "txt"}`;
  try {
    ensureThreadFolders(dirs, ["outputs"]);
    const dir = join(dirs.outputs, TOOL_RESULTS_DIRNAME);
    ensureRealFolder(dir, dirs);
    createFileSync(join(dir, file), text);
  } catch {
    return undefined;
  }
  return `${OUTPUTS_VIRTUAL_PATH}/${TOOL_RESULTS_DIRNAME}/${file}`;
}

const oneLine = (s: string, limit: number) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length <= limit ? t : `${t.slice(0, Math.max(0, limit - 3))}...`;
};

interface Synopsis {
  kind: "text" | "json";
  title: string;
  summary: string[];
  structure: string[];
}

function jsonSynopsis(text: string): Synopsis | undefined {
  const t = text.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(t);
  } catch {
    return undefined;
  }
  const describe = (v: unknown): string =>
    Array.isArray(v) ? `array(${v.length})` : v === null ? "null" : typeof v === "object" ? `object(${Object.keys(v).length} keys)` : typeof v;
  const structure: string[] = [];
  if (Array.isArray(value)) {
    const first: unknown = value[0];
    if (first && typeof first === "object" && !Array.isArray(first)) {
      for (const [k, v] of Object.entries(first).slice(0, 20)) structure.push(`$[0].${k}: ${describe(v)}`);
    }
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value).slice(0, 20)) structure.push(`$.${k}: ${describe(v)}`);
  }
  return { kind: "json", title: "JSON output", summary: [`Top-level value: ${describe(value)}.`], structure };
}

function textSynopsis(text: string, toolName: string): Synopsis {
  const lines = text.split(/\r?\n/);
  const words = text.trim() ? text.trim().split(/\s+/).length : 0;
  const headers: string[] = [];
  for (const line of lines) {
    const s = line.trim();
    if (!s || !(/^#{1,6}\s+/.test(s) || /^[A-Z0-9][A-Z0-9\s:_-]{6,}$/.test(s))) continue;
    const h = oneLine(s, 160);
    if (!headers.includes(h)) headers.push(h);
    if (headers.length >= 12) break;
  }
  return {
    kind: "text",
    title: "Text output",
    summary: [
      `Text output${toolName ? ` from ${toolName}` : ""} with ${text.length} characters, ${words} words, and ${lines.length} lines.`,
      `Detected section headers: ${headers.length > 0 ? headers.join(" | ") : "none detected"}.`,
    ],
    structure: [],
  };
}

function rawSample(text: string, head: number, tail: number): string {
  if (head + tail <= 0) return "";
  if (text.length <= head + tail) return text;
  let h = text.slice(0, head);
  const hs = h.lastIndexOf("\n");
  if (hs > 0) h = h.slice(0, hs);
  if (tail <= 0) return h;
  let t = text.slice(-tail);
  const ts = t.indexOf("\n");
  if (ts >= 0 && ts < t.length - 1) t = t.slice(ts + 1);
  return `${h}\n...\n${t}`;
}

export function renderPreview(text: string, toolName: string, virtualPath: string, o: ToolOutputBudgetOptions): string {
  const syn = jsonSynopsis(text) ?? textSynopsis(text, toolName);
  const lines = [
    `[Full ${toolName} output saved to ${virtualPath} (${text.length} chars, ~${Math.floor(text.length / 4)} tokens).]`,
    `[Preview kind: ${syn.kind}. This is a structured synopsis, not a raw head/tail truncation.]`,
    "",
    `${syn.title}:`,
    ...syn.summary.map((s) => `- ${s}`),
  ];
  if (syn.structure.length > 0) lines.push("", "Structure:", ...syn.structure.map((s) => `- ${s}`));
  const sample = rawSample(text, o.previewHeadChars, o.previewTailChars);
  if (sample) lines.push("", "Raw sample (head + tail, clipped to head_chars / tail_chars):", sample);
  lines.push("", "Access:", `- Use read_file on ${virtualPath} with start_line and end_line to inspect the raw output.`);
  return lines.join("\n");
}

const snapEnd = (text: string, pos: number) => {
  if (pos <= 0 || pos >= text.length) return pos;
  const nl = text.lastIndexOf("\n", pos - 1);
  return nl >= Math.floor(pos / 2) ? nl + 1 : pos;
};
const snapStart = (text: string, pos: number) => {
  if (pos <= 0 || pos >= text.length) return pos;
  const nl = text.indexOf("\n", pos);
  return nl >= 0 && nl < pos + Math.floor((text.length - pos) / 2) ? nl + 1 : pos;
};

/** Head + tail within `max` characters, line-snapped, with DeerFlow's marker. */
export function fallbackTruncate(text: string, toolName: string, o: ToolOutputBudgetOptions): string {
  const max = o.fallbackMaxChars;
  if (max <= 0 || text.length <= max) return text;
  const marker = (n: number) =>
    `\n\n[... ${n} chars omitted from ${toolName} output. Persistent storage unavailable. Consider narrowing the query or using more specific parameters.]\n\n`;
  const overhead = marker(text.length).length;
  if (overhead >= max) return text.slice(0, max);
  const budget = max - overhead;
  const head = Math.min(o.fallbackHeadChars, budget);
  const tail = Math.min(o.fallbackTailChars, Math.max(0, budget - head));
  const headEnd = snapEnd(text, Math.min(head, text.length));
  const tailStart = snapStart(text, Math.max(headEnd, text.length - tail));
  const tailText = tailStart < text.length ? text.slice(tailStart) : "";
  return text.slice(0, headEnd) + marker(text.length - headEnd - tailText.length) + tailText;
}

function budgetText(text: string, toolName: string, dirs: ThreadDirs | undefined, o: ToolOutputBudgetOptions): string | undefined {
  const threshold = o.toolOverrides[toolName] ?? o.externalizeMinChars;
  if (threshold > 0 && text.length > threshold && dirs) {
    const vpath = externalize(text, toolName, dirs);
    if (vpath) return renderPreview(text, toolName, vpath, o);
  }
  if (o.fallbackMaxChars > 0 && text.length > o.fallbackMaxChars) return fallbackTruncate(text, toolName, o);
  return undefined;
}

function budgetMessage(msg: ToolMessage, dirs: ThreadDirs | undefined, o: ToolOutputBudgetOptions): ToolMessage {
  const toolName = msg.name || "unknown";
  if (o.exemptTools.includes(toolName)) return msg;
  const text = resultText(msg.content);
  if (text === undefined) return msg;
  const replaced = budgetText(text, toolName, dirs, o);
  if (replaced === undefined) return msg;
  return withToolContent(msg, replaced);
}

export function toolOutputBudgetMiddleware(dirs: ThreadDirs, options: Partial<ToolOutputBudgetOptions> = {}) {
  const o: ToolOutputBudgetOptions = { ...DEFAULT_TOOL_OUTPUT_BUDGET, ...options };
  return createMiddleware({
    name: "ToolOutputBudgetMiddleware",
    wrapToolCall: async (request, handler) => mapToolResult(await handler(request), (m) => budgetMessage(m, dirs, o)),
    wrapModelCall: (request, handler) => {
      // History was budgeted when it was produced; only the no-storage fallback can still apply.
      let changed = false;
      const messages = request.messages.map((m) => {
        if (!ToolMessage.isInstance(m)) return m;
        const b = budgetMessage(m, undefined, o);
        if (b !== m) changed = true;
        return b;
      });
      return handler(changed ? { ...request, messages } : request);
    },
  });
}
