/**
 * grep's regular expressions run in a worker thread, never on the harness's event loop.
 *
 * The pattern is the model's, and JavaScript's engine backtracks: `(a+)+b` against a line of forty
 * `a`s takes longer than the universe has, synchronously. On the event loop that froze every run
 * of the harness (in VS Code, every thread of every workspace), and neither `--timeout` nor Cancel
 * could end the run, since both are timers and events on that same loop. In a worker the loop stays
 * free, and the worker can be terminated: when the run's signal aborts (timeout, Cancel), and when
 * one batch of text takes longer than its deadline, which grep reports to the model as an error
 * result it can act on (a simpler pattern, `literal`, a narrower path).
 *
 * Why not a linear-time engine: `re2` is a native addon (a prebuilt download or a compiler at
 * install time), `re2-wasm` is unmaintained since 2021, and `re2js` (pure JavaScript) scans about
 * 70× slower than V8 on ordinary patterns and drops lookaround and backreferences. A worker keeps
 * V8's speed and dialect and bounds only the time.
 *
 * Workers are pooled (one kept idle, unreferenced so it never holds a CLI process open); a worker
 * that was terminated or failed is never reused. The worker's code is a string (`eval`), so the
 * harness bundle and the sources under tsx run the same thing without a second entry point.
 */
import { Worker } from "node:worker_threads";

/** Wall clock for one batch (at most ~1 MB of text): V8 scans that in milliseconds with a sane pattern. */
export const REGEX_BATCH_DEADLINE_MS = 3_000;
export const REGEX_BATCH_MAX_CHARS = 1_000_000;
export const REGEX_BATCH_MAX_TEXTS = 64;
const MAX_IDLE_WORKERS = 1;

/** One batch ran past its deadline; the worker was terminated. */
export class RegexTimeoutError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`the pattern took longer than ${deadlineMs / 1000} seconds on one batch of files and was stopped`);
    this.name = "RegexTimeoutError";
  }
}

/**
 * Each text is lines joined by "\n" (the caller removed line breaks from the lines); the answer
 * is, per text, the indexes of the lines the pattern matches, at most `limit` in all.
 */
const WORKER_SOURCE = `
"use strict";
const { parentPort } = require("node:worker_threads");
let key = null;
let re = null;
parentPort.on("message", (job) => {
  try {
    if (job.key !== key) {
      re = new RegExp(job.source, job.flags);
      key = job.key;
    }
    let left = job.limit;
    const hits = [];
    for (const text of job.texts) {
      const found = [];
      if (left > 0) {
        const lines = text.split("\\n");
        for (let i = 0; i < lines.length; i += 1) {
          if (re.test(lines[i])) {
            found.push(i);
            if (--left === 0) break;
          }
        }
      }
      hits.push(found);
    }
    parentPort.postMessage({ hits });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message ? err.message : err) });
  }
});
`;

const idle: Worker[] = [];

function takeWorker(): Worker {
  const worker = idle.pop() ?? new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 256 } });
  // Referenced only while a batch is in flight (match()): a worker between batches, idle in the
  // pool, or held by a matcher nobody closed, never keeps the process alive.
  worker.unref();
  return worker;
}

function returnWorker(worker: Worker): void {
  if (idle.length >= MAX_IDLE_WORKERS) {
    void worker.terminate();
    return;
  }
  idle.push(worker);
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException("The search was aborted", "AbortError");
}

/** One grep call's matcher: batches go to one worker, in order; `close()` hands the worker back. */
export class RegexMatcher {
  private worker: Worker | undefined;
  private readonly key: string;

  constructor(
    private readonly source: string,
    private readonly flags: string,
    private readonly deadlineMs: number = REGEX_BATCH_DEADLINE_MS,
  ) {
    this.key = `${flags}/${source}`;
  }

  /** Per text, the matching line indexes (see WORKER_SOURCE), at most `limit` in all. */
  match(texts: readonly string[], limit: number, signal?: AbortSignal): Promise<number[][]> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const worker = (this.worker ??= takeWorker());
    return new Promise<number[][]>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void, kill: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        worker.unref();
        if (kill) {
          // Never reused: it may still be inside the pattern.
          this.worker = undefined;
          void worker.terminate();
        }
        outcome();
      };
      const onMessage = (m: { hits?: number[][]; error?: string }): void => {
        if (m.hits) finish(() => resolve(m.hits as number[][]), false);
        else finish(() => reject(new Error(m.error ?? "the regex worker failed")), true);
      };
      const onError = (err: Error): void => finish(() => reject(err), true);
      const onExit = (code: number): void => finish(() => reject(new Error(`the regex worker exited (${code})`)), true);
      const onAbort = (): void => finish(() => reject(abortReason(signal as AbortSignal)), true);
      const timer = setTimeout(() => finish(() => reject(new RegexTimeoutError(this.deadlineMs)), true), this.deadlineMs);
      worker.on("message", onMessage);
      worker.once("error", onError);
      worker.once("exit", onExit);
      signal?.addEventListener("abort", onAbort, { once: true });
      worker.ref();
      worker.postMessage({ key: this.key, source: this.source, flags: this.flags, texts, limit });
    });
  }

  close(): void {
    if (this.worker) returnWorker(this.worker);
    this.worker = undefined;
  }
}
