/**
 * Running the model's tool calls: each call goes through the chain's `wrapToolCall` wrappers (the
 * first in the list outermost, createAgent's order) to the tool. The tool gets createAgent's
 * call config: `toolCallId`, the graph `state` of its task, the run's signal.
 *
 * Errors (createAgent's ToolNode): an unknown tool answers "Error: X is not a valid tool, try one
 * of [...]"; arguments that do not parse become an error result (ToolInvocationError); any other
 * error a wrapper lets through fails the run, as ToolErrorHandling [13] catches the tools' own
 * (with no wrapper at all, every tool error becomes an error result, as in createAgent).
 * A cancelled run's error always propagates: nothing is answered for a call that did not finish.
 */
import { ToolMessage, type ToolCall } from "@langchain/core/messages";
import { ToolInputParsingException, type StructuredToolInterface } from "@langchain/core/tools";
import { isCommand, isGraphInterrupt, type Command } from "@langchain/langgraph";
import { MiddlewareError, ToolInvocationError, type AgentMiddleware } from "langchain";
import { interopParseAsync, isInteropZodError, isInteropZodSchema } from "@langchain/core/utils/types";
import { Validator } from "@langchain/core/utils/json_schema";
import { z } from "zod";
import type { HookRuntime } from "./hooks.js";

export interface ToolCallRequest {
  toolCall: ToolCall;
  tool: StructuredToolInterface | undefined;
  state: Record<string, unknown>;
  runtime: HookRuntime;
}
export type ToolResult = ToolMessage | Command;
type Handler = (request: ToolCallRequest) => Promise<ToolResult>;
type Wrapper = (request: ToolCallRequest, handler: Handler) => Promise<unknown>;

/**
 * The error result for a call whose arguments its tool's schema refuses: langchain's
 * ToolInvocationError text (the tool's name, the arguments, the schema's complaint), without a
 * stack trace. The tool runner answers with it, and the approval preflight (approvals/preflight.ts).
 */
export function invalidArgumentsResult(call: ToolCall, parsingError: unknown): ToolMessage {
  const err = parsingError instanceof Error ? parsingError : new Error(String(parsingError));
  const plain = new Error(err.message);
  plain.stack = `${err.name}: ${err.message}`;
  return new ToolMessage({ content: new ToolInvocationError(plain, call).message, tool_call_id: call.id ?? "", name: call.name, status: "error" });
}

/**
 * Whether `call`'s arguments pass its tool's schema, checked the way the tool checks them when
 * invoked (StructuredTool.call: a zod schema parsed, a JSON schema validated); undefined when
 * they do. Only for telling early: the tool still checks when it runs.
 */
export async function argumentsRefusal(tool: StructuredToolInterface, call: ToolCall): Promise<ToolMessage | undefined> {
  const schema = (tool as { schema?: unknown }).schema;
  if (schema === undefined || schema === null) return undefined;
  const args = call.args ?? {};
  const message = "Received tool input did not match expected schema";
  if (isInteropZodSchema(schema)) {
    try {
      await interopParseAsync(schema, args);
      return undefined;
    } catch (e) {
      const detail = isInteropZodError(e) ? `\n\n${z.prettifyError(e as z.ZodError)}` : "";
      return invalidArgumentsResult(call, new ToolInputParsingException(`${message}${detail}`, JSON.stringify(args)));
    }
  }
  if (typeof schema !== "object") return undefined;
  const result = new Validator(schema).validate(args);
  return result.valid ? undefined : invalidArgumentsResult(call, new ToolInputParsingException(message, JSON.stringify(args)));
}

const invalidTool = (name: string, available: readonly string[]) => `Error: ${name} is not a valid tool, try one of [${available.join(", ")}].`;

export function toolRunner(tools: readonly StructuredToolInterface[], middleware: readonly AgentMiddleware[]) {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const names = tools.map((t) => t.name);
  const wrappers = middleware.filter((m) => typeof m.wrapToolCall === "function").map((m) => ({ name: m.name, wrap: m.wrapToolCall as unknown as Wrapper }));

  /** One call through the wrappers; `state` is the task's graph state (what the tool sees as `state`). */
  return async function runTool(call: ToolCall, state: Record<string, unknown>, config: Record<string, unknown>, runtime: HookRuntime): Promise<ToolResult> {
    const signal = config.signal as AbortSignal | undefined;
    const invoke: Handler = async ({ toolCall, tool }) => {
      const target = tool ?? byName.get(toolCall.name);
      if (!target) return new ToolMessage({ content: invalidTool(toolCall.name, names), tool_call_id: toolCall.id ?? "", name: toolCall.name, status: "error" });
      try {
        const output: unknown = await target.invoke({ ...toolCall, type: "tool_call" }, { ...config, config, toolCallId: toolCall.id, state, signal } as never);
        if (ToolMessage.isInstance(output) || isCommand(output)) return output;
        return new ToolMessage({ name: target.name, content: typeof output === "string" ? output : JSON.stringify(output), tool_call_id: toolCall.id ?? "" });
      } catch (err) {
        if (err instanceof ToolInputParsingException) throw new ToolInvocationError(err, toolCall);
        throw err;
      }
    };
    let handler: Handler = invoke;
    for (let i = wrappers.length - 1; i >= 0; i--) {
      const { name, wrap } = wrappers[i]!;
      const inner = handler;
      handler = async (req) => {
        const downstream = new Set<unknown>();
        const next: Handler = async (passed) => {
          try {
            return await inner({ ...passed, state: { ...req.state, ...passed.state } });
          } catch (err) {
            downstream.add(err);
            throw err;
          }
        };
        let result: unknown;
        try {
          result = await wrap(req, next);
        } catch (err) {
          if (downstream.has(err)) throw err;
          throw MiddlewareError.wrap(err, name);
        }
        if (!ToolMessage.isInstance(result) && !isCommand(result)) throw new Error(`Invalid response from "wrapToolCall" in middleware "${name}": expected ToolMessage or Command, got ${typeof result}`);
        return result;
      };
    }
    try {
      return await handler({ toolCall: call, tool: byName.get(call.name), state, runtime });
    } catch (err) {
      if (isGraphInterrupt(err) || signal?.aborted) throw err;
      let cause: unknown = err;
      while (cause instanceof MiddlewareError) cause = cause.cause;
      if (cause instanceof ToolInvocationError) return invalidArgumentsResult(call, cause.toolError);
      // Without any wrapper, createAgent's ToolNode answers every tool error itself.
      if (wrappers.length === 0) return new ToolMessage({ content: `${String(err)}\n Please fix your mistakes.`, tool_call_id: call.id ?? "", name: call.name, status: "error" });
      throw err;
    }
  };
}
