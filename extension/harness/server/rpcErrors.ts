/**
 * JSON-RPC errors of the harness: every failure a handler meets becomes a ResponseError with a
 * readable message and `data: { code }` (a HarnessError code, rpc.ts RpcErrorData), so the host
 * branches on the code and shows the message. Nothing a client sends can crash the process.
 *
 * Numeric JSON-RPC codes: -32602 (InvalidParams) for params that fail validation, -32002
 * (ServerNotInitialized) before `harness/initialize`, -32603 (InternalError) for bugs, and
 * -32000 for every other HarnessError (the string code says which).
 */
import { ErrorCodes, ResponseError } from "vscode-languageserver/node.js";
import type { z } from "zod";
import type { RpcErrorData } from "../../protocol/rpc.js";
import { HarnessError, errorMessage } from "../errors.js";
import type { Logger } from "./logger.js";

export const HARNESS_ERROR = -32000;

export function toResponseError(err: unknown, method: string, log: Logger): ResponseError<RpcErrorData> {
  if (err instanceof ResponseError) return err as ResponseError<RpcErrorData>;
  if (err instanceof HarnessError) {
    const numeric =
      err.code === "invalid_params" ? ErrorCodes.InvalidParams : err.code === "not_initialized" ? ErrorCodes.ServerNotInitialized : HARNESS_ERROR;
    return new ResponseError(numeric, err.message, { code: err.code });
  }
  // Not a typed error: a bug or an unexpected failure of a dependency. Log the stack for the
  // report; answer with the message only.
  log.error(`${method} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return new ResponseError(ErrorCodes.InternalError, `${method} failed: ${errorMessage(err)}`, { code: "internal" });
}

/** Validates params against a schema; the message names each offending field. */
export function parseParams<T>(schema: z.ZodType<T>, params: unknown, method: string): T {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "params"}: ${i.message}`).join("; ");
  throw new HarnessError("invalid_params", `Invalid params for ${method}: ${issues}`);
}
