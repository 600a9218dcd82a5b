/**
 * The harness process's logger: every line becomes a `log/message` notification, which the host
 * routes to its LogOutputChannel ("DeerFlow: Show Logs"). The harness never writes to stdout (it
 * carries the JSON-RPC stream) and has no console (lint): this is the one way out for diagnostics.
 *
 * Never log secrets: API keys are not passed to the logger anywhere, and run prompts are not logged.
 */
import type { HarnessToHost } from "../../protocol/rpc.js";

export type LogLevel = HarnessToHost["log/message"]["level"];

export interface Logger {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** `send` posts one notification; a failure to send (the host went away) is swallowed. */
export function createLogger(send: (params: HarnessToHost["log/message"]) => void): Logger {
  const log = (level: LogLevel) => (message: string) => {
    try {
      send({ level, message });
    } catch {
      /* the connection is gone: nobody is left to tell */
    }
  };
  return { trace: log("trace"), debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}
