/**
 * ChatVSCodeLM: a LangChain chat model whose requests the extension host serves with
 * `LanguageModelChat.sendRequest` (issue 25; wave3-anchors §3.5). The harness runs in its own
 * process, so each call goes over the JSON-RPC connection (port.ts): text and tool-call parts
 * stream back as chunks (the panel sees tokens as they come), an abort of the run cancels the
 * host's request, and the host's failure ends the call with a readable VsCodeLmError.
 *
 * Usage: the LM API reports no tokens; the host counts them with `countTokens`, and the message's
 * usage carries them (`estimated` in its response metadata). `requests` counts this model's
 * calls: Copilot bills each one as a premium request, so the run's `end` reports it.
 */
import { BaseChatModel, type BaseChatModelCallOptions, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { LmChatResult, LmModelSelector, LmStreamPart, LmTool } from "../../../protocol/lm.js";
import type { LmTransport } from "./port.js";
import { toLmMessages } from "./messages.js";
import { toLmTools } from "./tools.js";

export interface ChatVSCodeLMCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

export interface ChatVSCodeLMFields {
  selector: LmModelSelector;
  transport: LmTransport;
}

/** An async queue of the parts the host streams, ended by the request's outcome. */
class PartQueue {
  private readonly items: LmStreamPart[] = [];
  private wake: (() => void) | undefined;
  private done = false;
  private failure: unknown;
  result: LmChatResult | undefined;

  push(parts: LmStreamPart[]): void {
    this.items.push(...parts);
    this.wake?.();
  }
  finish(result: LmChatResult | undefined, failure?: unknown): void {
    this.result = result;
    this.failure = failure;
    this.done = true;
    this.wake?.();
  }
  async *drain(): AsyncGenerator<LmStreamPart> {
    for (;;) {
      const next = this.items.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.done) {
        if (this.failure !== undefined) throw this.failure instanceof Error ? this.failure : new Error("The vscode.lm request failed.", { cause: this.failure });
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

export class ChatVSCodeLM extends BaseChatModel<ChatVSCodeLMCallOptions> {
  readonly selector: LmModelSelector;
  /** `vendor/family`: also the circuit breaker's model id (middlewares/llmCircuitBreaker.ts endpointOf). */
  readonly model: string;
  readonly clientConfig = { baseURL: "vscode-lm:" };
  private readonly transport: LmTransport;
  /** Model requests sent so far (each one a billed request for Copilot models). */
  requests = 0;

  constructor(fields: ChatVSCodeLMFields) {
    super({});
    this.selector = fields.selector;
    this.model = `${fields.selector.vendor}/${fields.selector.family}`;
    this.transport = fields.transport;
  }

  _llmType(): string {
    return "vscode-lm";
  }

  override bindTools(tools: BindToolsInput[], kwargs?: Partial<ChatVSCodeLMCallOptions>): Runnable<BaseLanguageModelInput, AIMessageChunk, ChatVSCodeLMCallOptions> {
    return this.withConfig({ ...kwargs, tools });
  }

  override async *_streamResponseChunks(messages: BaseMessage[], options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): AsyncGenerator<ChatGenerationChunk> {
    const { tools, original } = toLmTools(options.tools ?? []);
    const lmName = lmNames(original);
    const toolChoice = (options as { tool_choice?: unknown }).tool_choice;
    const params = {
      model: this.selector,
      messages: toLmMessages(messages, lmName),
      ...(tools.length > 0 ? { tools, ...(requiredMode(toolChoice, tools) ? { toolMode: "required" as const } : {}) } : {}),
    };
    options.signal?.throwIfAborted();
    this.requests += 1;
    const queue = new PartQueue();
    this.transport.chat(params, (parts) => queue.push(parts), options.signal).then(
      (r) => queue.finish(r),
      (err: unknown) => queue.finish(undefined, err),
    );
    let index = 0;
    let calledTools = false;
    for await (const part of queue.drain()) {
      let chunk: ChatGenerationChunk;
      if (part.type === "text") {
        if (!part.text) continue;
        chunk = new ChatGenerationChunk({ text: part.text, message: new AIMessageChunk({ content: part.text }) });
      } else {
        calledTools = true;
        const name = original.get(part.name) ?? part.name;
        chunk = new ChatGenerationChunk({
          text: "",
          message: new AIMessageChunk({ content: "", tool_call_chunks: [{ type: "tool_call_chunk", id: part.callId, name, args: JSON.stringify(part.input ?? {}), index: index++ }] }),
        });
      }
      yield chunk;
      await runManager?.handleLLMNewToken(chunk.text, undefined, undefined, undefined, undefined, { chunk });
    }
    const result = queue.result;
    // The last chunk: why it stopped and the host's estimated usage (also what TokenUsage reads).
    yield new ChatGenerationChunk({
      text: "",
      message: new AIMessageChunk({
        content: "",
        response_metadata: { finish_reason: calledTools ? "tool_calls" : "stop", model_provider: "vscode-lm", model_name: result?.model.id ?? this.model, usage_estimated: true },
        ...(result
          ? { usage_metadata: { input_tokens: result.usage.input_tokens, output_tokens: result.usage.output_tokens, total_tokens: result.usage.input_tokens + result.usage.output_tokens } }
          : {}),
      }),
    });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    let all: ChatGenerationChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) all = all ? all.concat(chunk) : chunk;
    const m = all!.message as AIMessageChunk;
    const message = new AIMessage({
      content: m.content,
      tool_calls: m.tool_calls ?? [],
      response_metadata: m.response_metadata,
      ...(m.usage_metadata ? { usage_metadata: m.usage_metadata } : {}),
    });
    return { generations: [{ text: all!.text, message }] };
  }
}

/** Our name → the LM name, from tools.ts's way back. */
function lmNames(original: Map<string, string>): (ours: string) => string {
  const back = new Map([...original].map(([lm, ours]) => [ours, lm]));
  return (ours) => back.get(ours) ?? ours;
}

/** LanguageModelChatToolMode.Required works with one tool only; otherwise the model decides. */
function requiredMode(toolChoice: unknown, tools: LmTool[]): boolean {
  return tools.length === 1 && (toolChoice === "required" || toolChoice === "any" || (typeof toolChoice === "object" && toolChoice !== null));
}
