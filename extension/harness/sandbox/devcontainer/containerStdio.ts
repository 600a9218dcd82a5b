/**
 * A long-lived process in the folder's dev container whose stdin and stdout are a byte stream:
 * an MCP stdio server (issue 23) run where the agent's commands run, not on the host. It goes
 * through the same Engine API exec path as `bash` (containerExec.ts): the same wrapper reports
 * the exec's root pid first, so `kill()` reaps the whole tree inside the container
 * (killTree.ts), `npx` grandchildren included; the environment is only what the caller passes
 * (the engine never forwards the harness's own).
 *
 * Unlike a command, nothing bounds its lifetime but the caller: the caller ends stdin to ask it
 * to stop, then kills it.
 */
import { randomUUID } from "node:crypto";
import type { Duplex } from "node:stream";
import type { EngineApi } from "./engineApi.js";
import { demultiplex, RootPidPreamble } from "./containerExec.js";
import { EXEC_ID_ENV, EXEC_WRAPPER, killExecTree } from "./killTree.js";

export interface ContainerStdioRequest {
  readonly containerId: string;
  readonly cmd: readonly string[];
  readonly user?: string;
  readonly workingDir?: string;
  readonly env: readonly string[];
  readonly onStdout: (chunk: Buffer) => void;
  readonly onStderr: (chunk: Buffer) => void;
  /** The stream closed: the process exited (`exitCode` when the engine knows it) or was killed. */
  readonly onClose: (exitCode: number | null) => void;
  readonly signal?: AbortSignal;
}

export class ContainerStdioProcess {
  private constructor(
    private readonly api: EngineApi,
    private readonly containerId: string,
    private readonly token: string,
    private readonly stream: Duplex,
    private readonly preamble: RootPidPreamble,
    readonly closed: Promise<void>,
  ) {}

  static async start(api: EngineApi, req: ContainerStdioRequest): Promise<ContainerStdioProcess> {
    const token = randomUUID();
    const execId = await api.createExec(
      req.containerId,
      {
        cmd: ["sh", "-c", EXEC_WRAPPER, "deerflow-exec", ...req.cmd],
        env: [...req.env, `${EXEC_ID_ENV}=${token}`],
        attachStdin: true,
        ...(req.user !== undefined ? { user: req.user } : {}),
        ...(req.workingDir !== undefined ? { workingDir: req.workingDir } : {}),
      },
      req.signal,
    );
    const stream = await api.startExecAttached(execId, req.signal);
    const preamble = new RootPidPreamble();
    stream.on(
      "data",
      demultiplex((type, frame) => {
        if (type === 2) {
          const rest = preamble.strip(frame);
          if (rest.length > 0) req.onStderr(rest);
        } else req.onStdout(frame);
      }),
    );
    stream.once("error", () => undefined);
    const closed = new Promise<void>((resolve) => {
      stream.once("close", () => {
        void api.inspectExec(execId).then(
          (info) => req.onClose(info.Running ? null : info.ExitCode),
          () => req.onClose(null),
        ).finally(resolve);
      });
    });
    return new ContainerStdioProcess(api, req.containerId, token, stream, preamble, closed);
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stream.destroyed || this.stream.writableEnded) {
        reject(new Error("Not connected"));
        return;
      }
      if (this.stream.write(data)) resolve();
      else this.stream.once("drain", resolve);
    });
  }

  /** EOF on the process's stdin: an MCP server's cue to exit. */
  endInput(): void {
    if (!this.stream.writableEnded) this.stream.end();
  }

  /** Kills the exec's process tree in the container and drops the stream. */
  async kill(): Promise<void> {
    await killExecTree(this.api, this.containerId, this.token, this.preamble.root).catch(() => undefined);
    this.stream.destroy();
  }
}
