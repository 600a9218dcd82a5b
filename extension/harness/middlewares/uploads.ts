/**
 * UploadsMiddleware (DeerFlow `uploads_middleware.py`): before the agent runs, the files uploaded
 * with the latest human message become `uploaded_files` and a `<current_uploads>` block is
 * prepended to that message, so the model knows what it was just given and where to read it.
 *
 * - Only THIS message's uploads are listed; earlier ones are never re-injected (DeerFlow lets the
 *   agent discover them on demand with `list_uploaded_files`, not ported yet; until then `ls` on
 *   /mnt/user-data/uploads lists them).
 * - Every run without new uploads writes `uploaded_files: []`, so a stale list never survives.
 * - The rewritten message keeps its id (the messages reducer replaces it in place), its name and
 *   all `additional_kwargs`; `original_user_content` keeps the text the user typed (first writer
 *   wins) so the Title middleware and the UI can show it without the block.
 *
 * Where we differ: the entry's `path` is recomputed from the filename, as DeerFlow does, but the
 * existence check uses the thread's uploads folder from ThreadDirs; the outline is read from
 * Markdown `#` headings only (DeerFlow also recognises pymupdf4llm's bold headings, which only
 * its PDF converter produces). User-derived text (names, outline titles, previews) goes through
 * `neutralizeUntrustedTags` (shared/harnessTags.ts), as in DeerFlow, so a file name cannot forge a
 * framework block inside ours.
 */
import { createMiddleware } from "langchain";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseMessage, MessageContent } from "@langchain/core/messages";
import { StateSchema } from "@langchain/langgraph";
import { lstatSync } from "node:fs";
import { basename, extname, join } from "node:path";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { threadStateFields } from "../state/threadState.js";
import type { UploadedFile } from "../state/threadState.js";
import { UPLOADS_VIRTUAL_PATH } from "../sandbox/paths.js";
import { readFileCheckedSync } from "../trust/openChecked.js";
import { neutralizeUntrustedTags as neutralize } from "./shared/harnessTags.js";
import { contentText, ORIGINAL_USER_CONTENT_KEY } from "./shared/messages.js";

/** DeerFlow `_MAX_FILES_PER_CONTEXT_SECTION`. */
export const MAX_FILES_PER_CONTEXT_SECTION = 10;
/** DeerFlow `MAX_OUTLINE_ENTRIES` / `_OUTLINE_PREVIEW_LINES`. */
const MAX_OUTLINE_ENTRIES = 50;
const OUTLINE_PREVIEW_LINES = 5;
/** Outlines are read from the first bytes only: a huge upload must not stall the run. */
const OUTLINE_READ_BYTES = 1 << 20;

interface OutlineEntry {
  title: string;
  line: number;
}
interface ContextFile extends UploadedFile {
  outline: OutlineEntry[];
  outlineTruncated: boolean;
  preview: string[];
}

const uploadsState = new StateSchema({ uploaded_files: threadStateFields.uploaded_files });

/** DeerFlow's size label: one decimal, KB below 1 MiB, MB above. */
export function formatSize(bytes: number): string {
  const kb = bytes / 1024;
  return kb < 1024 ? `${kb.toFixed(1)} KB` : `${(kb / 1024).toFixed(1)} MB`;
}

/** DeerFlow `is_upload_staging_file`: in-flight uploads are `.upload-*.part`. */
function isStagingName(name: string): boolean {
  return name.startsWith(".upload-") && name.endsWith(".part");
}

/**
 * The valid upload entries of a human message's `additional_kwargs.files` (DeerFlow
 * `_files_from_kwargs`): dicts with a bare filename that exists in the uploads folder.
 */
export function filesFromKwargs(message: BaseMessage, uploadsDir: string): UploadedFile[] {
  const raw: unknown = message.additional_kwargs?.files;
  if (!Array.isArray(raw)) return [];
  const files: UploadedFile[] = [];
  for (const f of raw as unknown[]) {
    if (!f || typeof f !== "object" || Array.isArray(f)) continue;
    const entry = f as Record<string, unknown>;
    const filename = typeof entry.filename === "string" ? entry.filename : "";
    if (!filename || basename(filename) !== filename || filename === "." || filename === ".." || isStagingName(filename)) continue;
    const host = join(uploadsDir, filename);
    try {
      // lstat: the sandbox can write uploads; a link planted there is not an upload.
      if (!lstatSync(host).isFile()) continue;
    } catch {
      continue;
    }
    const size = Math.trunc(Number(entry.size));
    files.push({
      filename,
      size: Number.isFinite(size) && size > 0 ? size : 0,
      path: `${UPLOADS_VIRTUAL_PATH}/${filename}`,
      extension: extname(filename),
    });
  }
  return files;
}

/** Headings of the file's Markdown sibling (`<stem>.md`, the file itself for Markdown). */
function outlineFor(hostPath: string): { outline: OutlineEntry[]; truncated: boolean; preview: string[] } {
  const ext = extname(hostPath);
  const md = ext ? `${hostPath.slice(0, -ext.length)}.md` : `${hostPath}.md`;
  const none = { outline: [], truncated: false, preview: [] };
  let text: string;
  try {
    // Checked (trust/openChecked.ts): a link or a FIFO the sandbox planted as `<stem>.md` is
    // neither followed nor waited on.
    text = readFileCheckedSync(md, OUTLINE_READ_BYTES).toString("utf8");
  } catch {
    return none;
  }
  const outline: OutlineEntry[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    const s = line.trim();
    if (!s.startsWith("#")) continue;
    const title = s.replace(/^#+/, "").trim().replace(/\*\*\s*\*\*/g, " ").replace(/^\*\*(.+)\*\*$/, "$1").trim();
    if (!title) continue;
    if (outline.length === MAX_OUTLINE_ENTRIES) return { outline, truncated: true, preview: [] };
    outline.push({ title, line: i + 1 });
  }
  if (outline.length > 0) return { outline, truncated: false, preview: [] };
  return { outline, truncated: false, preview: lines.map((l) => l.trim()).filter(Boolean).slice(0, OUTLINE_PREVIEW_LINES) };
}

function formatEntry(file: ContextFile, lines: string[]): void {
  lines.push(`- ${neutralize(file.filename)} (${formatSize(file.size)})`);
  lines.push(`  Path: ${neutralize(file.path)}`);
  if (file.outline.length > 0) {
    lines.push("  Document outline (use `read_file` with line ranges to read sections):");
    for (const e of file.outline) lines.push(`    L${e.line}: ${neutralize(e.title)}`);
    if (file.outlineTruncated) {
      lines.push(`    ... (showing first ${file.outline.length} headings; use \`read_file\` to explore further)`);
    }
  } else {
    if (file.preview.length > 0) {
      lines.push("  No structural headings detected. Document begins with:");
      for (const p of file.preview) lines.push(`    > ${neutralize(p)}`);
    }
    lines.push("  Use `grep` to search for keywords (e.g. `grep(pattern='keyword', path='/mnt/user-data/uploads/')`).");
  }
  lines.push("");
}

function omittedTypes(files: UploadedFile[]): string {
  const counts = new Map<string, number>();
  for (const f of files) {
    const label = neutralize((f.extension || extname(f.filename)).toLowerCase()) || "(no extension)";
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([ext, n]) => `${n} ${ext}`)
    .join(", ");
}

/** The `<current_uploads>` block, line for line DeerFlow's `_create_files_message`. */
export function createFilesMessage(files: ContextFile[], omitted: UploadedFile[]): string {
  const lines = ["<current_uploads>", "The following files were uploaded in this message:", ""];
  if (files.length > 0) {
    for (const f of files) formatEntry(f, lines);
    if (omitted.length > 0) {
      lines.push(`... (${omitted.length} more file(s) from this message omitted from this context.)`);
      lines.push(`  Omitted file types: ${omittedTypes(omitted)}`);
      lines.push("  Use `glob(pattern='**/*', path='/mnt/user-data/uploads/')` to list all uploads.");
      lines.push("  Use `grep(pattern='keyword', path='/mnt/user-data/uploads/')` to search across uploads.");
      lines.push("");
    }
  } else {
    lines.push("(empty)", "");
  }
  lines.push(
    "To work with these files:",
    "- Read from the file first — use the outline line numbers and `read_file` to locate relevant sections.",
    "- Use `grep` to search for keywords when you are not sure which section to look at",
    "  (e.g. `grep(pattern='revenue', path='/mnt/user-data/uploads/')`).",
    "- Use `glob` to find files by name pattern",
    "  (e.g. `glob(pattern='**/*.md', path='/mnt/user-data/uploads/')`).",
    "- Only fall back to web search if the file content is clearly insufficient to answer the question.",
    "</current_uploads>",
  );
  return lines.join("\n");
}

function withBlock(content: MessageContent, block: string): MessageContent {
  if (typeof content === "string") return `${block}\n\n${content}`;
  return [{ type: "text", text: `${block}\n\n` }, ...content] as MessageContent;
}

export function uploadsMiddleware(dirs: ThreadDirs) {
  return createMiddleware({
    name: "UploadsMiddleware",
    stateSchema: uploadsState,
    beforeAgent: (state) => {
      const last = state.messages.at(-1);
      if (!last || !HumanMessage.isInstance(last)) return { uploaded_files: [] };
      const files = filesFromKwargs(last, dirs.uploads);
      if (files.length === 0) return { uploaded_files: [] };

      const context: ContextFile[] = files.slice(0, MAX_FILES_PER_CONTEXT_SECTION).map((f) => {
        const o = outlineFor(join(dirs.uploads, f.filename));
        return { ...f, outline: o.outline, outlineTruncated: o.truncated, preview: o.preview };
      });
      const block = createFilesMessage(context, files.slice(MAX_FILES_PER_CONTEXT_SECTION));
      const kwargs = { ...last.additional_kwargs };
      if (typeof kwargs[ORIGINAL_USER_CONTENT_KEY] !== "string") kwargs[ORIGINAL_USER_CONTENT_KEY] = contentText(last.content);
      const updated = new HumanMessage({
        content: withBlock(last.content, block),
        ...(last.id ? { id: last.id } : {}),
        ...(last.name ? { name: last.name } : {}),
        additional_kwargs: kwargs,
      });
      return { uploaded_files: files, messages: [updated] };
    },
  });
}
