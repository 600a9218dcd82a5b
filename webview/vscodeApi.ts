/**
 * The webview's handle on VS Code: post typed messages and keep the little state a reload needs
 * ({threadId, lastSeq}; the messages themselves are replayed by the host, never stored here).
 * Outside VS Code (the static harness page) a stand-in records what was posted.
 */
import type { WebviewToHost } from "../extension/protocol/webview.js";

export interface SavedState {
  threadId?: string;
  lastSeq?: number;
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare global {
  // Provided by VS Code inside webviews; callable once per page.
  function acquireVsCodeApi(): VsCodeApi;
  interface Window {
    /** Messages posted when running outside VS Code (test/fixtures/webview-harness.html). */
    __deerflowPosted?: WebviewToHost[];
  }
}

export interface HostPort {
  post(message: WebviewToHost): void;
  saved(): SavedState;
  save(state: SavedState): void;
}

export function connect(): HostPort {
  const api: VsCodeApi = typeof acquireVsCodeApi === "function" ? acquireVsCodeApi() : standIn();
  return {
    post: (m) => api.postMessage(m),
    saved: () => {
      const s = api.getState();
      if (typeof s !== "object" || s === null) return {};
      const { threadId, lastSeq } = s as Record<string, unknown>;
      return {
        ...(typeof threadId === "string" ? { threadId } : {}),
        ...(typeof lastSeq === "number" && Number.isFinite(lastSeq) ? { lastSeq } : {}),
      };
    },
    save: (state) => api.setState(state),
  };
}

function standIn(): VsCodeApi {
  let state: unknown;
  window.__deerflowPosted = [];
  return {
    postMessage: (m) => void window.__deerflowPosted?.push(m as WebviewToHost),
    getState: () => state,
    setState: (s) => void (state = s),
  };
}
