/**
 * The one reader of an MCP stdio server's stdout, for both transports (hostTransport.ts,
 * containerTransport.ts): newline-delimited JSON-RPC through the SDK's ReadBuffer. A line that is
 * not JSON-RPC (a server printing to stdout) is reported and skipped, never fatal: ReadBuffer has
 * already consumed it when it throws.
 */
import type { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export function drainMessages(
  buffer: ReadBuffer,
  chunk: Buffer,
  onmessage: ((message: JSONRPCMessage) => void) | undefined,
  onerror: ((error: Error) => void) | undefined,
): void {
  buffer.append(chunk);
  for (;;) {
    let message: JSONRPCMessage | null;
    try {
      message = buffer.readMessage();
    } catch (err) {
      onerror?.(err as Error);
      continue;
    }
    if (message === null) return;
    onmessage?.(message);
  }
}
