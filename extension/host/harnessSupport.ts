/**
 * Small pieces of the harness client (harnessClient.ts) that need no client: a promise settled
 * from outside, and the output channel protocol traces go to (nowhere).
 */
import type * as vscode from "vscode";

export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
  settled: boolean;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const d: Deferred<T> = {
    promise,
    settled: false,
    resolve: (v) => {
      d.settled = true;
      resolve(v);
    },
    reject: (e) => {
      d.settled = true;
      reject(e);
    },
  };
  // A generation nobody waited for must not become an unhandled rejection.
  promise.catch(() => undefined);
  return d;
}

/** An output channel that drops everything (see traceOutputChannel above). */
export function nullOutputChannel(): vscode.OutputChannel {
  const noop = (): void => undefined;
  return {
    name: "DeerFlow Harness (trace off)",
    append: noop,
    appendLine: noop,
    replace: noop,
    clear: noop,
    show: noop,
    hide: noop,
    dispose: noop,
  };
}

/**
 * The connection a harness → host request came on (HarnessClient.onRequest): the local harness
 * process this window started, or a remote `deerflow serve` (its URL as the settings name it).
 */
export type HarnessSource = { kind: "local" } | { kind: "remote"; url: string; shown: string };
