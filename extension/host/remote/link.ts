/**
 * The way to one remote harness: connect (connect.ts), and when the server cannot be reached,
 * try again with backoff (0.5 s, 1 s, 2 s … 30 s) for as long as this target is current, saying so
 * once per outage; a refused token (401/403) ends the attempts at once, with what to do. The
 * harness client calls `connect` before each (re)start of its language client over the socket.
 *
 * No `vscode` import (the state goes out through `onState`), so the unit tests drive it.
 */
import { connectRemote, RemoteConnectError, type Connected } from "./connect.js";

export type LinkState =
  | { state: "connecting" }
  | { state: "connected" }
  | { state: "unreachable"; message: string; retryMs: number; attempt: number }
  | { state: "unauthorized"; message: string }
  | { state: "failed"; message: string };

export interface RemoteTarget {
  url: string;
  /** The URL as shown (no credentials). */
  shown: string;
  token: string | undefined;
}

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

export class RemoteLink {
  constructor(
    readonly target: RemoteTarget,
    private readonly onState: (s: LinkState) => void,
    private readonly firstRetryMs = FIRST_RETRY_MS,
  ) {}

  /**
   * Resolves with an open socket; rejects with a RemoteConnectError `unauthorized` (not retried),
   * or when `signal` aborts (the target changed, the extension is going away).
   */
  async connect(signal: AbortSignal): Promise<Connected> {
    this.onState({ state: "connecting" });
    for (let attempt = 1; ; attempt++) {
      try {
        const c = await connectRemote(this.target.url, this.target.token, signal);
        this.onState({ state: "connected" });
        return c;
      } catch (err) {
        if (signal.aborted) throw err;
        if (err instanceof RemoteConnectError && err.code === "unauthorized") {
          this.onState({ state: "unauthorized", message: err.message });
          throw err;
        }
        const retryMs = Math.min(this.firstRetryMs * 2 ** (attempt - 1), MAX_RETRY_MS);
        const message = err instanceof Error ? err.message : String(err);
        this.onState({ state: "unreachable", message, retryMs, attempt });
        await abortableDelay(retryMs, signal);
      }
    }
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new RemoteConnectError("unreachable", "Connecting was cancelled."));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new RemoteConnectError("unreachable", "Connecting was cancelled."));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
