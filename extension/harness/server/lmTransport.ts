/**
 * The harness end of the vscode.lm bridge (protocol/lm.ts): `lm/chat` requests to the host over
 * the process's JSON-RPC connection, `lm/chunk` notifications routed to the request they belong
 * to. An abort cancels the request (`$/cancelRequest`, which cancels the host's LM request token)
 * and rejects at once; the host's refusal becomes a VsCodeLmError that says what to do.
 */
import { randomUUID } from "node:crypto";
import { CancellationTokenSource, ResponseError, type CancellationToken } from "vscode-languageserver/node.js";
import type { LmChatResult, LmChunk, LmStreamPart } from "../../protocol/lm.js";
import type { LmTransport } from "../models/vscodeLm/port.js";
import { isLmErrorCode, vsCodeLmError, VsCodeLmError } from "../models/vscodeLm/errors.js";

/** What the bridge needs of a connection (vscode-languageserver's Connection and a MessageConnection both fit). */
export interface LmConnection {
  sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
  onNotification(method: string, handler: (params: LmChunk) => void): unknown;
}

export function connectionLmTransport(connection: LmConnection): LmTransport {
  const streams = new Map<string, (parts: LmStreamPart[]) => void>();
  connection.onNotification("lm/chunk", (p: LmChunk) => {
    if (p && typeof p.requestId === "string" && Array.isArray(p.parts)) streams.get(p.requestId)?.(p.parts);
  });
  return {
    async chat(params, onParts, signal) {
      const model = `${params.model.vendor}/${params.model.family}`;
      signal?.throwIfAborted();
      const requestId = randomUUID();
      const cts = new CancellationTokenSource();
      streams.set(requestId, onParts);
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => {
          cts.cancel();
          reject(signal?.reason instanceof Error ? signal.reason : new Error("The vscode.lm request was aborted."));
        };
        signal?.addEventListener("abort", onAbort, { once: true });
      });
      aborted.catch(() => undefined);
      try {
        return await Promise.race([connection.sendRequest<LmChatResult>("lm/chat", { ...params, requestId }, cts.token), aborted]);
      } catch (err) {
        if (signal?.aborted || err instanceof VsCodeLmError) throw err;
        if (err instanceof ResponseError) {
          const code = (err.data as { code?: unknown } | undefined)?.code;
          throw vsCodeLmError(isLmErrorCode(code) ? code : "lm_failed", model, err.message);
        }
        throw vsCodeLmError("lm_failed", model, err instanceof Error ? err.message : String(err));
      } finally {
        streams.delete(requestId);
        if (onAbort) signal?.removeEventListener("abort", onAbort);
        cts.dispose();
      }
    },
  };
}
