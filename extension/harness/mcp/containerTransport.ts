/**
 * The SDK's stdio framing (ReadBuffer, serializeMessage) over a process in the dev container
 * (sandbox/devcontainer/containerStdio.ts): the one Transport class the container needs. Close
 * follows the spec's order: stdin ends, the server gets 2 s to exit, then its tree is killed.
 */
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { drainMessages } from "./stdioFraming.js";
import type { ContainerStdioProcess } from "../sandbox/devcontainer/containerStdio.js";

export interface ContainerTransportOptions {
  readonly open: (handlers: {
    onStdout: (chunk: Buffer) => void;
    onStderr: (chunk: Buffer) => void;
    onClose: (exitCode: number | null) => void;
  }) => Promise<ContainerStdioProcess>;
  readonly onStderr: (text: string) => void;
  readonly onExit: (how: string) => void;
}

const GRACE_MS = 2000;

export function containerStdioTransport(o: ContainerTransportOptions): Transport {
  return new ContainerTransport(o);
}

class ContainerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private proc: ContainerStdioProcess | undefined;
  private readonly buffer = new ReadBuffer();

  constructor(private readonly o: ContainerTransportOptions) {}

  async start(): Promise<void> {
    this.proc = await this.o.open({
      onStdout: (chunk) => drainMessages(this.buffer, chunk, this.onmessage, this.onerror),
      onStderr: (chunk) => this.o.onStderr(chunk.toString("utf8")),
      onClose: (code) => {
        this.o.onExit(code === null ? "killed, or the container stopped" : `exit code ${code}`);
        this.proc = undefined;
        this.onclose?.();
      },
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.proc) return Promise.reject(new Error("Not connected"));
    return this.proc.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    proc.endInput();
    const exited = await Promise.race([proc.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), GRACE_MS).unref())]);
    if (!exited) await proc.kill();
    this.buffer.clear();
  }
}
