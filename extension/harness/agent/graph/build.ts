/**
 * The agent graph: the middleware chain's behaviour in few LangGraph steps (issue 20).
 *
 * langchain's createAgent makes every middleware hook its own graph node, so one tool turn of the
 * lead chain cost ~13 steps: the default recursion limit ended runs after 7 tool calls, and each
 * step re-wrote the whole state. Here each hook POINT runs its hooks composed (./hooks.ts) inside
 * a node, and the model call and the tool calls are one node each:
 *
 *   START → before_model → model_request → after_model ─┬→ tools → before_model …
 *                                                        └→ END
 *
 * The run's own hook points have no step of their own: the run's first before_model runs the
 * `beforeAgent` hooks first, and whichever node ends the run (after_model with a final answer, or
 * an approval pause; before_model on a clarification or the turn cap) runs the `afterAgent` hooks
 * last. Each node applies its hooks' updates in order, so composing two points in one node is the
 * same as two nodes one after the other, minus the checkpoint between them.
 *
 * Steps: a tool turn is before_model, model_request, after_model, tools = 4; an answer turn
 * before_model, model_request, after_model = 3, and that is a whole one-answer run
 * (test/unit/agent/graphSteps.test.ts counts them). Parallel tool calls are one step: each call is
 * its own task of the `tools` step (a Send), so each result is streamed as soon as it exists.
 * Every step is checkpointed, so a run killed during a model or a tool call leaves the thread at
 * the last finished step (the AI message with its calls), which the next run repairs.
 *
 * Routing is createAgent's, decided in the node that knows (a Command's goto), with its `jumpTo`
 * semantics: beforeAgent → end runs the afterAgent hooks; beforeModel → end stops at once
 * (createAgent's beforeModel router); afterModel → end runs the afterAgent hooks; "tools" runs the
 * last AI message's unanswered calls; "model" calls the model without the beforeModel hooks. A
 * successful result of a `returnDirect` tool (ask_clarification) ends the run.
 *
 * A run is bounded by MODEL TURNS, not steps: with a turn budget, the model is called at most
 * `maxTurns` times per invocation; the next time the run would call it, the run ends instead with
 * a visible AI message stamped `stop_reason: "turn_capped"` (every tool call of the last turn is
 * answered by then) and the afterAgent hooks still run. The recursion limit is derived from the
 * budget with headroom (`turnLimits`), so it never fires first. The run's counters live in
 * untracked channels: never checkpointed, so every invocation starts them afresh.
 */
import { AIMessage, ToolMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StateSnapshot } from "@langchain/langgraph";
import { Command, END, MessagesValue, ReducedValue, START, Send, StateGraph, StateSchema, UntrackedValue, isCommand } from "@langchain/langgraph";
import type { AgentMiddleware } from "langchain";
import { applyUpdate, hooksAt, roundWrites, runHooks, runtimeOf, type HookPoint, type JumpTarget, type Reducer } from "./hooks.js";
import { modelCaller } from "./modelCall.js";
import { toolRunner, type ToolResult } from "./toolCalls.js";

/** The graph's node names (what `updates` events and the `messages` stream's `langgraph_node` say). */
export const NODE = {
  beforeModel: "before_model",
  model: "model_request",
  afterModel: "after_model",
  tools: "tools",
} as const;

/** Model calls of this invocation, and whether its first before_model ran (untracked channels). */
const TURNS = "_model_turns";
const STARTED = "_run_started";

/** Steps a model turn may take at most (a tool turn is 4), and the run's fixed steps and detours. */
const STEPS_PER_TURN = 5;
const STEPS_FIXED = 20;

/** The LangGraph recursion limit for a turn budget, and DeerFlow's `max_recursion_limit` ceiling. */
export function turnLimits(maxTurns: number, maxRecursionLimit?: number): { maxTurns: number; recursionLimit: number } {
  const derived = maxTurns * STEPS_PER_TURN + STEPS_FIXED;
  if (maxRecursionLimit === undefined || maxRecursionLimit >= derived) return { maxTurns, recursionLimit: derived };
  // The ceiling is lower: the turn budget shrinks with it, so the turn cap still ends the run first.
  return { maxTurns: Math.max(1, Math.floor((maxRecursionLimit - STEPS_FIXED) / STEPS_PER_TURN)), recursionLimit: maxRecursionLimit };
}

/** The visible answer of a run that used its turn budget (DeerFlow has none: its runs hit the recursion limit). */
export function turnCappedMessage(maxTurns: number): AIMessage {
  return new AIMessage({
    content:
      `I stopped here: this run reached its budget of ${maxTurns} model turns (max_turns). ` +
      "Everything done so far is kept in the thread; continue the thread to let me go on from this point.",
    additional_kwargs: { stop_reason: "turn_capped", max_turns: maxTurns },
  });
}

export interface AgentGraphOptions {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  systemPrompt: string;
  /** The state's business channels (ThreadState's fields); `messages` and the middlewares' own are added. */
  stateFields: Record<string, unknown>;
  middleware: AgentMiddleware[];
  /** `false`: no checkpointer even inside another graph (a subagent, as DeerFlow runs it). */
  checkpointer?: BaseCheckpointSaver | false;
  /** Model calls per invocation; absent → the graph does not cap turns (a middleware may). */
  maxTurns?: number;
  /** Turn budget the recursion limit is derived from when `maxTurns` is absent (a subagent's own cap). */
  recursionTurns?: number;
  /** DeerFlow's `max_recursion_limit`: a hard ceiling on steps. */
  maxRecursionLimit?: number;
}

/** What callers use: LangGraph's compiled graph, and the run limits derived for it. */
export interface AgentGraph {
  graph: CompiledAgentGraph;
  /** Pass as `recursionLimit` in every invocation's config. */
  recursionLimit: number;
  /** The effective turn budget (after `max_recursion_limit`), when the graph caps turns. */
  maxTurns?: number;
}

/** The compiled graph's surface the harness uses (LangGraph's generics are not worth spelling here). */
export interface CompiledAgentGraph {
  stream(input: unknown, config: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  invoke(input: unknown, config: Record<string, unknown>): Promise<unknown>;
  getState(config: Record<string, unknown>): Promise<StateSnapshot>;
  getStateHistory(config: Record<string, unknown>): AsyncIterableIterator<StateSnapshot>;
  updateState(config: Record<string, unknown>, values: Record<string, unknown>, asNode?: string): Promise<RunnableConfig>;
  checkpointer?: unknown;
}

type State = Record<string, unknown> & { messages: BaseMessage[] };
type Config = Record<string, unknown>;
type Writes = Array<[string, unknown]>;

function stateOf(fields: Record<string, unknown>, middleware: readonly AgentMiddleware[]) {
  // First declaration wins, as in createAgent: the agent's schema, then each middleware's.
  const all: Record<string, unknown> = { messages: MessagesValue, ...fields };
  for (const m of middleware) {
    const schema = m.stateSchema as unknown;
    if (!schema) continue;
    if (!StateSchema.isInstance(schema)) throw new Error(`Middleware ${m.name}: stateSchema must be a StateSchema.`);
    for (const [k, v] of Object.entries(schema.fields as Record<string, unknown>)) if (!(k in all)) all[k] = v;
  }
  all[TURNS] = new UntrackedValue<number>();
  all[STARTED] = new UntrackedValue<boolean>();
  const reducers = new Map<string, Reducer>();
  for (const [k, v] of Object.entries(all)) if (ReducedValue.isInstance(v)) reducers.set(k, v.reducer);
  return { schema: new StateSchema(all as never), reducers };
}

const lastAi = (messages: readonly BaseMessage[]): AIMessage | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) if (AIMessage.isInstance(messages[i])) return messages[i] as AIMessage;
  return undefined;
};

/** The last AI message's calls that have no ToolMessage yet. */
function unansweredCalls(messages: readonly BaseMessage[]): ToolCall[] {
  const ai = lastAi(messages);
  if (!ai?.tool_calls?.length) return [];
  const answered = new Set<string>();
  for (const m of messages) if (ToolMessage.isInstance(m)) answered.add(m.tool_call_id);
  return ai.tool_calls.filter((c) => c.id === undefined || !answered.has(c.id));
}

export function buildAgentGraph(o: AgentGraphOptions): AgentGraph {
  const middleware = o.middleware;
  const { schema, reducers } = stateOf(o.stateFields, middleware);
  const tools = [...o.tools, ...middleware.flatMap((m) => (m.tools ?? []) as StructuredToolInterface[])];
  const returnDirect = new Set(tools.filter((t) => (t as { returnDirect?: boolean }).returnDirect === true).map((t) => t.name));
  const callModel = modelCaller({ model: o.model, tools, systemPrompt: o.systemPrompt, middleware });
  const runTool = toolRunner(tools, middleware);
  const hooks = (p: HookPoint) => hooksAt(p, middleware);
  const at = { beforeAgent: hooks("beforeAgent"), beforeModel: hooks("beforeModel"), afterModel: hooks("afterModel"), afterAgent: hooks("afterAgent") };
  const limits = o.maxTurns !== undefined ? turnLimits(o.maxTurns, o.maxRecursionLimit) : turnLimits(o.recursionTurns ?? 100, o.maxRecursionLimit);
  const maxTurns = o.maxTurns !== undefined ? limits.maxTurns : undefined;
  const hasAfterModel = at.afterModel.length > 0 || at.afterAgent.length > 0;

  const turns = (s: State) => (s[TURNS] as number | undefined) ?? 0;
  const capped = (s: State) => maxTurns !== undefined && turns(s) >= maxTurns;
  const toolSends = (s: State, calls: ToolCall[]) => calls.map((c) => new Send(NODE.tools, { ...s, lg_tool_call: c }));
  const round = (point: HookPoint, s: State, config: Config, written: Writes) => runHooks(point, at[point], s, runtimeOf(config), reducers, written);
  const command = (written: Writes, view: State, goto: string | Send[]) => new Command({ update: roundWrites(written, reducers, view), goto });
  const withCapMessage = (view: State, written: Writes) => applyUpdate(view, { messages: [turnCappedMessage(maxTurns!)] }, reducers, written) as State;

  /** The run ends in this node: the afterAgent hooks, then END (or where one of them jumps). */
  const exit = async (s: State, config: Config, written: Writes): Promise<Command> => {
    const r = await round("afterAgent", s, config, written);
    const view = r.state as State;
    if (r.jumpTo === "model") return capped(view) ? command(written, withCapMessage(view, written), END) : command(written, view, NODE.model);
    if (r.jumpTo === "tools") {
      const pending = unansweredCalls(view.messages);
      if (pending.length > 0) return command(written, view, toolSends(view, pending));
    }
    return command(written, view, END);
  };

  /** After the model answered and the afterModel hooks ran (createAgent's after-model router, jumps first). */
  const afterModelRoute = (s: State, config: Config, written: Writes, jumpTo: JumpTarget | undefined): Promise<Command> | Command => {
    if (jumpTo === "end") return exit(s, config, written);
    if (jumpTo === "model") return command(written, s, capped(s) ? NODE.beforeModel : NODE.model);
    const pending = unansweredCalls(s.messages);
    if (jumpTo === "tools") return pending.length > 0 ? command(written, s, toolSends(s, pending)) : exit(s, config, written);
    const last = s.messages.at(-1);
    if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length || pending.length === 0) return exit(s, config, written);
    return command(written, s, toolSends(s, pending));
  };

  const beforeModel = async (s: State, config: Config) => {
    const written: Writes = [];
    let view = s;
    if (!s[STARTED]) {
      // The run's first step: its beforeAgent hooks, then on as if from a node of their own.
      view = applyUpdate(view, { [STARTED]: true }, reducers, written) as State;
      const r = await round("beforeAgent", view, config, written);
      view = r.state as State;
      if (r.jumpTo === "end") return exit(view, config, written);
      if (r.jumpTo === "model") return command(written, view, NODE.model);
      if (r.jumpTo === "tools") {
        const pending = unansweredCalls(view.messages);
        if (pending.length > 0) return command(written, view, toolSends(view, pending));
      }
    }
    const last = view.messages.at(-1);
    if (last && ToolMessage.isInstance(last) && last.status !== "error" && last.name && returnDirect.has(last.name)) return exit(view, config, written);
    if (capped(view)) return exit(withCapMessage(view, written), config, written);
    const r = await round("beforeModel", view, config, written);
    view = r.state as State;
    if (r.jumpTo === "end") return command(written, view, END);
    if (r.jumpTo === "tools") {
      const pending = unansweredCalls(view.messages);
      if (pending.length > 0) return command(written, view, toolSends(view, pending));
    }
    return command(written, view, NODE.model);
  };

  const model = async (s: State, config: Config) => {
    const answer = await callModel(s, config, runtimeOf(config));
    const update = { messages: [answer], [TURNS]: turns(s) + 1 };
    if (hasAfterModel) return new Command({ update, goto: NODE.afterModel });
    const written: Writes = [];
    const view = applyUpdate(s, update, reducers, written) as State;
    return afterModelRoute(view, config, written, undefined);
  };

  const afterModel = async (s: State, config: Config) => {
    const written: Writes = [];
    const r = await round("afterModel", s, config, written);
    return afterModelRoute(r.state as State, config, written, r.jumpTo);
  };

  const runTools = async (input: State & { lg_tool_call?: ToolCall }, config: Config) => {
    const { lg_tool_call: one, ...state } = input;
    const runtime = runtimeOf(config);
    const calls = one ? [one] : unansweredCalls(state.messages);
    const results = await Promise.all(calls.map((c) => runTool(c, state, config, runtime)));
    return new Command({ update: toolWrites(results), goto: NODE.beforeModel });
  };

  const g = new StateGraph(schema as never) as unknown as GraphBuilder;
  g.addNode(NODE.beforeModel, beforeModel, { ends: [NODE.model, NODE.tools, END] });
  g.addNode(NODE.model, model, { ends: hasAfterModel ? [NODE.afterModel] : [NODE.tools, NODE.model, NODE.beforeModel, END] });
  if (hasAfterModel) g.addNode(NODE.afterModel, afterModel, { ends: [NODE.tools, NODE.model, NODE.beforeModel, END] });
  g.addNode(NODE.tools, runTools, { ends: [NODE.beforeModel] });
  g.addEdge(START, NODE.beforeModel);
  const graph = g.compile({ ...(o.checkpointer !== undefined ? { checkpointer: o.checkpointer } : {}) });
  return { graph, recursionLimit: limits.recursionLimit, ...(maxTurns !== undefined ? { maxTurns } : {}) };
}

interface GraphBuilder {
  addNode(name: string, fn: (state: never, config: Config) => Promise<unknown>, options: { ends: string[] }): GraphBuilder;
  addEdge(from: string, to: string): GraphBuilder;
  compile(options: { checkpointer?: BaseCheckpointSaver | false }): CompiledAgentGraph;
}

/**
 * A tools task's writes: every ToolMessage (and a tool Command's messages) as one `messages`
 * write, a tool Command's other channels as they are. A tool cannot route the graph: only its
 * Command's update counts.
 */
function toolWrites(results: readonly ToolResult[]): Array<[string, unknown]> {
  const messages: unknown[] = [];
  const other: Array<[string, unknown]> = [];
  for (const r of results) {
    if (!isCommand(r)) {
      messages.push(r);
      continue;
    }
    for (const [k, v] of r._updateAsTuples() as Array<[string, unknown]>) {
      if (k === "messages") messages.push(...(Array.isArray(v) ? (v as unknown[]) : [v]));
      else other.push([k, v]);
    }
  }
  return [...(messages.length > 0 ? ([["messages", messages]] as Array<[string, unknown]>) : []), ...other];
}
