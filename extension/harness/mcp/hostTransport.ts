/**
 * stdio to a server process on this machine (issue 23): the SDK's newline-delimited JSON-RPC
 * framing (its ReadBuffer and serializeMessage) over a child of our own, because the SDK's
 * StdioClientTransport stops only its direct child, and `npx pkg` is a process tree (npx, then
 * node): the server would outlive us. Here the child leads a process group; `close()` is the
 * spec's shutdown (stdin closed, then SIGTERM, then SIGKILL, 2 s apart, VS Code's
 * `mcpStdioStateHandler` order) on the whole group.
 *
 * The environment is only what the caller gives (launch.ts: a few login basics, the resolved
 * PATH and the server's configured `env`), never the harness's own: a model key in the harness's
 * environment must not reach a server that did not ask for it. stderr is a pipe to the server's
 * log, never inherited (it would land in the JSON-RPC stream of the harness) and never to the model.
 *
 * On Windows the SDK's transport is used as it is (cross-spawn runs `npx.cmd`, which a plain
 * spawn refuses: cline#902); its process tree is not reaped there.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { drainMessages } from "./stdioFraming.js";

export interface HostStdioOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly onStderr: (text: string) => void;
  /** The process exited (code or signal), for the log and the connection's error reason. */
  readonly onExit?: (how: string) => void;
}

const STEP_MS = 2000;

export function hostStdioTransport(o: HostStdioOptions): Transport {
  if (process.platform === "win32") {
    const t = new StdioClientTransport({ command: o.command, args: [...o.args], env: { ...o.env }, cwd: o.cwd, stderr: "pipe" });
    t.stderr?.on("data", (c: Buffer) => o.onStderr(c.toString("utf8")));
    return t;
  }
  return new GroupStdioTransport(o);
}

class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private exited: Promise<void> | undefined;

  constructor(private readonly o: HostStdioOptions) {}

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.o.command, [...this.o.args], {
        env: { ...this.o.env },
        cwd: this.o.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        shell: false,
      });
      this.child = child;
      this.exited = new Promise((r) => child.once("close", () => r()));
      child.once("error", (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once("spawn", () => resolve());
      child.once("exit", (code, signal) => this.o.onExit?.(signal ? `killed by ${signal}` : `exit code ${code}`));
      child.once("close", () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("data", (chunk: Buffer) => drainMessages(this.buffer, chunk, this.onmessage, this.onerror));
      child.stderr?.on("data", (chunk: Buffer) => this.o.onStderr(chunk.toString("utf8")));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new Error("Not connected"));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return;
    const pid = child.pid;
    const gone = this.exited ?? Promise.resolve();
    const within = (ms: number) => Promise.race([gone.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    try {
      child.stdin?.end();
    } catch {
      /* already closed */
    }
    if (!(await within(STEP_MS))) {
      killGroup(pid, "SIGTERM");
      if (!(await within(STEP_MS))) killGroup(pid, "SIGKILL");
    }
    // The leader may be gone while a grandchild (npx's node) still holds the group: sweep it.
    killGroup(pid, "SIGKILL");
    await within(STEP_MS);
    this.buffer.clear();
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is gone */
  }
}
