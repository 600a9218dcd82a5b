/**
 * The way out to the extension host's vscode.lm, when there is one. The harness server sets it
 * from its JSON-RPC connection (server/lmTransport.ts); the CLI never does, so a vscode.lm model
 * named there fails with `vscode_lm_unavailable` instead of a silent fallback. A process-wide
 * port (like diagnostics.ts) because every model a run builds (lead, title, summary, subagent)
 * goes through createChatModel, far from the connection.
 */
import type { LmChatParams, LmChatResult, LmStreamPart } from "../../../protocol/lm.js";

export interface LmTransport {
  /**
   * One LM request: `onParts` gets the streamed parts in order, before the promise resolves.
   * Rejects with an LmBridgeError; an abort of `signal` cancels the host's request.
   */
  chat(params: Omit<LmChatParams, "requestId">, onParts: (parts: LmStreamPart[]) => void, signal?: AbortSignal): Promise<LmChatResult>;
}

let transport: LmTransport | undefined;

export function setLmTransport(t: LmTransport | undefined): void {
  transport = t;
}

export function lmTransport(): LmTransport | undefined {
  return transport;
}
