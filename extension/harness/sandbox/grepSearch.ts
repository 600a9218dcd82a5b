/**
 * The line search behind grep (DeerFlow's `search.py` grep): which files are read, how lines are
 * cut, what a match line looks like. Reading and cutting happen here, on the event loop (linear
 * work); the pattern runs in a worker (regexWorker.ts), a batch of files at a time, so a
 * catastrophic pattern can neither freeze the harness nor outlive the run's signal.
 */
import { RegexMatcher, REGEX_BATCH_MAX_CHARS, REGEX_BATCH_MAX_TEXTS } from "./regexWorker.js";
import { openForRead } from "../trust/openChecked.js";

export interface GrepMatch {
  readonly path: string;
  readonly lineNumber: number;
  readonly line: string;
}

export interface SearchResult<T> {
  readonly matches: T[];
  readonly truncated: boolean;
}

const MAX_GREP_FILE_BYTES = 1_000_000;
const LINE_SUMMARY_LENGTH = 200;
const MAX_GREP_LINE_CHARS = LINE_SUMMARY_LENGTH * 10;
const BINARY_SNIFF_BYTES = 8192;

function truncateLine(line: string): string {
  const stripped = line.replace(/[\r\n]+$/, "");
  return stripped.length <= LINE_SUMMARY_LENGTH ? stripped : `${stripped.slice(0, LINE_SUMMARY_LENGTH - 3)}...`;
}

/** A file's text for grep, or undefined to skip it (too big, binary, not a regular file, unreadable). */
async function grepText(path: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await openForRead(path);
    if ((await handle.stat()).size > MAX_GREP_FILE_BYTES) return undefined;
    const bytes = await handle.readFile();
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
    return bytes.toString("utf8");
  } catch {
    // Unreadable files are skipped, as DeerFlow does on OSError.
    return undefined;
  } finally {
    await handle?.close();
  }
}

/** The lines grep tests: too-long and trailing empty lines are skipped; line breaks removed, so no line holds one. */
interface Candidates {
  readonly virtual: string;
  /** The lines to test, without their line breaks. */
  readonly lines: string[];
  /** Per candidate: its 1-based line number and its raw text (for the summary). */
  readonly numbers: number[];
  readonly raws: string[];
}

function candidatesOf(text: string, virtual: string): Candidates {
  const all = text.split(/(?<=\r\n|\n|\r(?!\n))/);
  const out: Candidates = { virtual, lines: [], numbers: [], raws: [] };
  for (let i = 0; i < all.length; i += 1) {
    const raw = all[i] as string;
    if (raw === "") continue;
    if (raw.replace(/\r\n$/, "\n").length > MAX_GREP_LINE_CHARS) continue;
    out.lines.push(raw.replace(/[\r\n]+$/, ""));
    out.numbers.push(i + 1);
    out.raws.push(raw);
  }
  return out;
}

export interface LineSearchOptions {
  readonly source: string;
  readonly flags: string;
  readonly maxResults: number;
  readonly signal?: AbortSignal | undefined;
  /** Test seam for the deadline (regexWorker.ts's default otherwise). */
  readonly deadlineMs?: number;
}

/**
 * Collects matches file by file, in the order files are offered; `offer` resolves false once
 * `maxResults` is reached (stop walking). `finish` searches what is still batched.
 */
export class LineSearch {
  private readonly matcher: RegexMatcher;
  private readonly matches: GrepMatch[] = [];
  private batch: Candidates[] = [];
  private batchChars = 0;
  private truncated = false;

  constructor(private readonly o: LineSearchOptions) {
    this.matcher = new RegexMatcher(o.source, o.flags, o.deadlineMs);
  }

  /** Read `file` (a host path, shown as `virtual`) into the batch; search the batch when it is full. */
  async offer(file: string, virtual: string): Promise<boolean> {
    if (this.truncated) return false;
    const text = await grepText(file);
    if (text === undefined) return true;
    const c = candidatesOf(text, virtual);
    if (c.lines.length === 0) return true;
    this.batch.push(c);
    this.batchChars += text.length;
    if (this.batchChars >= REGEX_BATCH_MAX_CHARS || this.batch.length >= REGEX_BATCH_MAX_TEXTS) await this.flush();
    return !this.truncated;
  }

  async finish(): Promise<SearchResult<GrepMatch>> {
    try {
      await this.flush();
      return { matches: this.matches, truncated: this.truncated };
    } finally {
      this.close();
    }
  }

  /** Hands the worker back; safe to call more than once (finish calls it, and so does a caller that failed). */
  close(): void {
    this.matcher.close();
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    this.batchChars = 0;
    const left = this.o.maxResults - this.matches.length;
    if (batch.length === 0 || left <= 0) return;
    const hits = await this.matcher.match(
      batch.map((c) => c.lines.join("\n")),
      left,
      this.o.signal,
    );
    batch.forEach((c, f) => {
      for (const i of hits[f] ?? []) {
        this.matches.push({ path: c.virtual, lineNumber: c.numbers[i] as number, line: truncateLine(c.raws[i] as string) });
      }
    });
    if (this.matches.length >= this.o.maxResults) this.truncated = true;
  }
}
