/**
 * The agent graph: the middleware chain's behaviour in few LangGraph steps (issue 20).
 *
 * langchain's createAgent makes every middleware hook its own graph node, so one tool turn of the
 * lead chain cost ~13 steps: the default recursion limit ended runs after 7 tool calls, and each
 * step re-wrote the whole state. Here each hook POINT is one node running its hooks composed
 * (./hooks.ts), and the model call and tool calls are one node each:
 *
 *   START → before_agent → before_model → model_request → after_model ─┬→ tools → before_model …
 *                                                                      └→ after_agent → END
 *
 * Steps: a tool turn is before_model, model_request, after_model, tools = 4; an answer turn is
 * before_model, model_request, after_model = 3; before_agent and after_agent once per run
 * (test/unit/agent/graphSteps.test.ts counts them). Parallel tool calls are one step: each call is
 * its own task of the `tools` step (a Send), so each result is streamed as soon as it exists.
 * Every step is checkpointed, so a run killed during a model or a tool call leaves the thread at
 * the last finished step (the AI message with its calls), which the next run repairs.
 *
 * Routing is createAgent's, decided in the node that knows (a Command's goto), with its `jumpTo`
 * semantics: before_agent → end runs after_agent; before_model → end stops at once (createAgent's
 * beforeModel router); after_model → end runs after_agent; "tools" runs the last AI message's
 * unanswered calls; "model" calls the model without the before_model hooks. A successful result of
 * a `returnDirect` tool (ask_clarification) ends the turn (through after_agent).
 *
 * A run is bounded by MODEL TURNS, not steps: with a turn budget, the model is called at most
 * `maxTurns` times per invocation; the next time the run would call it, the run ends instead with
 * a visible AI message stamped `stop_reason: "turn_capped"` (every tool call of the last turn is
 * answered by then) and after_agent's hooks still run. The recursion limit is derived from the
 * budget with headroom (`recursionLimitFor`), so it never fires first.
 */
import { AIMessage, ToolMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StateSnapshot } from "@langchain/langgraph";
import { Command, END, MessagesValue, ReducedValue, START, Send, StateGraph, StateSchema, isCommand } from "@langchain/langgraph";
import type { AgentMiddleware } from "langchain";
import { z } from "zod";
import { hooksAt, runHooks, runtimeOf, type HookPoint, type JumpTarget, type Reducer } from "./hooks.js";
import { modelCaller } from "./modelCall.js";
import { toolRunner, type ToolResult } from "./toolCalls.js";

/** The graph's node names (what `updates` events and the `messages` stream's `langgraph_node` say). */
export const NODE = {
  beforeAgent: "before_agent",
  beforeModel: "before_model",
  model: "model_request",
  afterModel: "after_model",
  tools: "tools",
  afterAgent: "after_agent",
} as const;

/** The per-invocation count of model calls (private: never journaled, reset by before_agent). */
const TURNS = "_model_turns";

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

function stateOf(fields: Record<string, unknown>, middleware: readonly AgentMiddleware[]) {
  // First declaration wins, as in createAgent: the agent's schema, then each middleware's.
  const all: Record<string, unknown> = { messages: MessagesValue, ...fields };
  for (const m of middleware) {
    const schema = m.stateSchema as unknown;
    if (!schema) continue;
    if (!StateSchema.isInstance(schema)) throw new Error(`Middleware ${m.name}: stateSchema must be a StateSchema.`);
    for (const [k, v] of Object.entries(schema.fields as Record<string, unknown>)) if (!(k in all)) all[k] = v;
  }
  all[TURNS] = z.number().optional();
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
  const exit = at.afterAgent.length > 0 ? NODE.afterAgent : END;

  const capped = (s: State) => maxTurns !== undefined && ((s[TURNS] as number | undefined) ?? 0) >= maxTurns;
  const toolSends = (s: State, calls: ToolCall[]) => calls.map((c) => new Send(NODE.tools, { ...s, lg_tool_call: c }));
  const hooked = (point: HookPoint, s: State, config: Config) => runHooks(point, at[point], s, runtimeOf(config), reducers);

  /** Where the run goes after the model answered (createAgent's after-model router, jumps first). */
  const afterModelRoute = (s: State, jumpTo: JumpTarget | undefined): string | Send[] => {
    if (jumpTo === "end") return exit;
    if (jumpTo === "model") return capped(s) ? NODE.beforeModel : NODE.model;
    const pending = unansweredCalls(s.messages);
    if (jumpTo === "tools") return pending.length > 0 ? toolSends(s, pending) : exit;
    const last = s.messages.at(-1);
    if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return exit;
    return pending.length > 0 ? toolSends(s, pending) : exit;
  };

  const beforeAgent = async (s: State, config: Config) => {
    const round = await hooked("beforeAgent", s, config);
    const update: Array<[string, unknown]> = [...round.writes, [TURNS, 0]];
    const view = { ...round.state, [TURNS]: 0 } as unknown as State;
    const goto =
      round.jumpTo === "end" ? exit : round.jumpTo === "model" ? NODE.model : round.jumpTo === "tools" ? toolSends(view, unansweredCalls(view.messages)) : NODE.beforeModel;
    return new Command({ update, goto });
  };

  const beforeModel = async (s: State, config: Config) => {
    const last = s.messages.at(-1);
    if (last && ToolMessage.isInstance(last) && last.status !== "error" && last.name && returnDirect.has(last.name)) return new Command({ goto: exit });
    if (capped(s)) return new Command({ update: { messages: [turnCappedMessage(maxTurns!)] }, goto: exit });
    const round = await hooked("beforeModel", s, config);
    const view = round.state as State;
    const goto =
      round.jumpTo === "end" ? END : round.jumpTo === "tools" ? toolSends(view, unansweredCalls(view.messages)) : NODE.model;
    return new Command({ update: round.writes, goto: Array.isArray(goto) && goto.length === 0 ? NODE.model : goto });
  };

  const model = async (s: State, config: Config) => {
    const answer = await callModel(s, config, runtimeOf(config));
    const update = { messages: [answer], [TURNS]: ((s[TURNS] as number | undefined) ?? 0) + 1 };
    const goto = hasAfterModel ? NODE.afterModel : afterModelRoute({ ...s, messages: [...s.messages, answer] }, undefined);
    return new Command({ update, goto });
  };

  const afterModel = async (s: State, config: Config) => {
    const round = await hooked("afterModel", s, config);
    return new Command({ update: round.writes, goto: afterModelRoute(round.state as State, round.jumpTo) });
  };

  const runTools = async (input: State & { lg_tool_call?: ToolCall }, config: Config) => {
    const { lg_tool_call: one, ...state } = input;
    const runtime = runtimeOf(config);
    const calls = one ? [one] : unansweredCalls(state.messages);
    const results = await Promise.all(calls.map((c) => runTool(c, state, config, runtime)));
    return new Command({ update: toolWrites(results), goto: NODE.beforeModel });
  };

  const afterAgent = async (s: State, config: Config) => {
    const round = await hooked("afterAgent", s, config);
    const view = round.state as State;
    if (round.jumpTo === "model") {
      if (!capped(view)) return new Command({ update: round.writes, goto: NODE.model });
      return new Command({ update: [...round.writes, ["messages", [turnCappedMessage(maxTurns!)]]], goto: END });
    }
    if (round.jumpTo === "tools") {
      const pending = unansweredCalls(view.messages);
      if (pending.length > 0) return new Command({ update: round.writes, goto: toolSends(view, pending) });
    }
    return new Command({ update: round.writes, goto: END });
  };

  const hasAfterModel = at.afterModel.length > 0;
  const present = (...names: string[]) => [...new Set(names.filter((n) => n !== NODE.afterModel || hasAfterModel).filter((n) => n !== NODE.afterAgent || exit !== END))];
  const g = new StateGraph(schema as never) as unknown as GraphBuilder;
  g.addNode(NODE.beforeAgent, beforeAgent, { ends: present(NODE.beforeModel, NODE.model, NODE.tools, exit) });
  g.addNode(NODE.beforeModel, beforeModel, { ends: present(NODE.model, NODE.tools, exit, END) });
  g.addNode(NODE.model, model, { ends: present(NODE.afterModel, NODE.tools, exit) });
  if (hasAfterModel) g.addNode(NODE.afterModel, afterModel, { ends: present(NODE.tools, NODE.model, NODE.beforeModel, exit) });
  g.addNode(NODE.tools, runTools, { ends: [NODE.beforeModel] });
  if (exit !== END) g.addNode(NODE.afterAgent, afterAgent, { ends: [NODE.model, NODE.tools, END] });
  g.addEdge(START, NODE.beforeAgent);
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
