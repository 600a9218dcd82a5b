/**
 * Each MCP server's log (issue 23): what it writes on stderr, and its lifecycle (started, exited,
 * the error that stopped it). It goes to a file per server in the data directory
 * (`<data-dir>/workspaces/<key>/mcp/logs/<server>.log`, rotated at 1 MB, one old file kept),
 * which `deerflow mcp list` names, and to a listener (the harness server's `mcp/log`
 * notification, shown by "DeerFlow: Show MCP Logs"). Never to the model: a server's stderr is
 * untrusted text and may carry secrets it was given, so each line passes the secret scrubber
 * before it is kept, written or shown (the tail also reaches a failure's reason, which the
 * journal records).
 */
import { appendFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { sanitizeName } from "./names.js";
import { scrubText } from "../trust/secrets.js";

const ROTATE_BYTES = 1024 * 1024;
/** Lines kept in memory per server: the last ones go into a start failure's reason. */
const TAIL_LINES = 20;
const MAX_LINE = 2000;

export type McpLogListener = (server: string, line: string) => void;

export class McpServerLogs {
  private readonly tails = new Map<string, string[]>();
  private readonly listeners = new Set<McpLogListener>();
  /** Bytes in each server's current file, counted here: a stderr chunk costs one append, not a stat. */
  private readonly sizes = new Map<string, number>();
  private dirMade = false;

  constructor(readonly dir: string) {}

  path(server: string): string {
    return join(this.dir, `${sanitizeName(server)}.log`);
  }

  onLine(listener: McpLogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A chunk of the server's stderr, or a lifecycle line of ours (`[deerflow] …`). */
  append(server: string, text: string): void {
    const lines = text
      .split(/\r?\n/)
      .filter((l) => l.trim() !== "")
      .map((l) => scrubText(l.length > MAX_LINE ? `${l.slice(0, MAX_LINE)}…` : l));
    if (lines.length === 0) return;
    const tail = this.tails.get(server) ?? [];
    tail.push(...lines);
    this.tails.set(server, tail.slice(-TAIL_LINES));
    const stamp = new Date().toISOString();
    try {
      if (!this.dirMade) {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        this.dirMade = true;
      }
      const file = this.path(server);
      let size = this.sizes.get(server) ?? sizeOf(file);
      if (size > ROTATE_BYTES) {
        size = 0;
        try {
          renameSync(file, `${file}.1`);
        } catch {
          /* removed meanwhile: the append starts a new one */
        }
      }
      const chunk = lines.map((l) => `${stamp} ${l}\n`).join("");
      appendFileSync(file, chunk, { mode: 0o600 });
      this.sizes.set(server, size + Buffer.byteLength(chunk));
    } catch {
      // A log that cannot be written must not stop the server; the listener still gets it.
    }
    for (const listener of this.listeners) for (const l of lines) listener(server, l);
  }

  /** The last lines (for a failure's reason shown to the user; never to the model). */
  tail(server: string, n = 5): string[] {
    return (this.tails.get(server) ?? []).slice(-n);
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0; // no file yet
  }
}
