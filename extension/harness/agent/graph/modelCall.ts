/**
 * The model call of one turn: the chain's `wrapModelCall` wrappers around the request, the first
 * in the list outermost (createAgent's order), and the provider call at the centre.
 *
 * The request is createAgent's `ModelRequest`: `{model, messages, systemPrompt, systemMessage,
 * tools, toolChoice?, modelSettings?, state, runtime}`. A wrapper may change any of it for the
 * handler it calls (request-only: nothing here is written to state but the answer). Between
 * wrappers the system prompt is normalised as createAgent does: a wrapper may replace the
 * `systemMessage` or the `systemPrompt` text, not both.
 */
import { AIMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { RunnableBinding, raceWithSignal, type Runnable } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { MiddlewareError, type AgentMiddleware } from "langchain";
import type { HookRuntime } from "./hooks.js";

export interface ModelRequest {
  model: BaseChatModel;
  messages: BaseMessage[];
  systemPrompt: string;
  systemMessage: SystemMessage;
  tools: StructuredToolInterface[];
  toolChoice?: unknown;
  modelSettings?: Record<string, unknown>;
  state: Record<string, unknown>;
  runtime: HookRuntime;
}

type Handler = (request: ModelRequest) => Promise<AIMessage>;
type Wrapper = (request: ModelRequest, handler: Handler) => Promise<unknown>;

/** The name createAgent gives every answer of its model node; kept so requests and history stay as they were. */
const ANSWER_NAME = "model";

interface BindableModel {
  bindTools: (tools: StructuredToolInterface[], options?: Record<string, unknown>) => Runnable;
}
const canBind = (m: unknown): m is BindableModel => typeof (m as Partial<BindableModel> | null)?.bindTools === "function";

/** `model.bindTools`, also through a RunnableBinding (a model with bound call options). */
function bindTools(model: unknown, tools: StructuredToolInterface[], options: Record<string, unknown>): Runnable {
  if (canBind(model)) return model.bindTools(tools, options);
  if (RunnableBinding.isRunnableBinding(model) && canBind(model.bound)) {
    const inner = model.bound.bindTools(tools, options);
    return RunnableBinding.isRunnableBinding(inner)
      ? new RunnableBinding({ bound: inner.bound, config: { ...model.config, ...inner.config }, kwargs: { ...model.kwargs, ...inner.kwargs } })
      : new RunnableBinding({ bound: inner, config: model.config, kwargs: model.kwargs });
  }
  throw new Error("The chat model cannot bind tools (it has no bindTools method).");
}

/** createAgent's normalisation at each wrapper boundary: a changed prompt text or a changed message, not both. */
function normalise(req: ModelRequest, current: SystemMessage, wrapper: string): ModelRequest {
  const promptChanged = req.systemPrompt !== current.text;
  const messageChanged = req.systemMessage !== current;
  if (promptChanged && messageChanged) throw new Error(`Cannot change both systemPrompt and systemMessage in the same request (middleware "${wrapper}").`);
  if (promptChanged) {
    const systemMessage = new SystemMessage({ content: [{ type: "text", text: req.systemPrompt }] });
    return { ...req, systemMessage, systemPrompt: systemMessage.text };
  }
  if (messageChanged) return { ...req, systemPrompt: req.systemMessage.text };
  return req;
}

export interface ModelCallOptions {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  systemPrompt: string;
  middleware: readonly AgentMiddleware[];
}

/**
 * A function that makes the turn's model call for `state` with the node's LangGraph `config`
 * (its callbacks carry the token stream to the `messages` stream mode).
 */
export function modelCaller(o: ModelCallOptions): (state: Record<string, unknown>, config: Record<string, unknown>, runtime: HookRuntime) => Promise<AIMessage> {
  const systemMessage = new SystemMessage(o.systemPrompt);
  const wrappers = o.middleware.filter((m) => typeof m.wrapModelCall === "function").map((m) => ({ name: m.name, wrap: m.wrapModelCall as unknown as Wrapper }));

  return async (state, config, runtime) => {
    const signal = config.signal as AbortSignal | undefined;
    const provider: Handler = async (req) => {
      const bound = bindTools(req.model, req.tools, { ...(req.modelSettings ?? {}), tool_choice: req.toolChoice });
      const messages = [...(req.systemMessage.text === "" ? [] : [req.systemMessage]), ...req.messages];
      const call = bound.invoke(messages, { ...config, signal }) as Promise<AIMessage>;
      return signal ? raceWithSignal(call, signal) : call;
    };
    // Innermost first: wrappers[0] ends up outermost.
    let handler: Handler = provider;
    for (let i = wrappers.length - 1; i >= 0; i--) {
      const { name, wrap } = wrappers[i]!;
      const inner = handler;
      handler = async (req) => {
        const entered = req.systemMessage;
        const next: Handler = (passed) => inner(normalise(passed, entered, name));
        let response: unknown;
        try {
          response = await wrap({ ...req, state, runtime }, next);
        } catch (err) {
          throw MiddlewareError.wrap(err, name);
        }
        if (!AIMessage.isInstance(response)) throw new Error(`Invalid response from "wrapModelCall" in middleware "${name}": expected an AIMessage, got ${typeof response}`);
        return response;
      };
    }
    const answer = await handler({ model: o.model, messages: state.messages as BaseMessage[], systemPrompt: systemMessage.text, systemMessage, tools: o.tools, state, runtime });
    answer.name = ANSWER_NAME;
    (answer.lc_kwargs as { name?: string }).name = ANSWER_NAME;
    return answer;
  };
}
