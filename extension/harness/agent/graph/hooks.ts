/**
 * The middleware chain's node hooks, composed: all `beforeAgent` (or `beforeModel`, `afterModel`,
 * `afterAgent`) hooks of the chain run inside ONE graph node, in the chain's documented order
 * (before*: list order; after*: reverse list order, as langchain's createAgent runs them).
 *
 * The contract each hook sees is createAgent's: `(state, runtime)` in, a partial state update (or
 * nothing) out, optionally with `jumpTo` among the hook's declared `canJumpTo`. Each hook's update
 * is applied to the node's local view of the state with the state's own reducers (messages by id,
 * artifacts de-duplicated, viewed_images merged, …) before the next hook sees it; a `jumpTo` ends
 * the round there, as createAgent's routers skip the remaining hook nodes of that point.
 *
 * What the node writes back is the rounds' DELTA, never the whole state (createAgent's middleware
 * nodes return `{...state, ...result}`, so every hook re-wrote every channel it declared, the whole
 * message list included): one write per channel, which LangGraph's reducers turn into exactly the
 * local view (see `roundWrites`).
 */
import { Overwrite } from "@langchain/langgraph";
import { RemoveMessage, coerceMessageLikeToMessage, type BaseMessage, type BaseMessageLike } from "@langchain/core/messages";
import type { AgentMiddleware } from "langchain";
import { randomUUID } from "node:crypto";

export type HookPoint = "beforeAgent" | "beforeModel" | "afterModel" | "afterAgent";
/** Where a hook may send the run next (langchain's `model` / `tools` / `end`). */
export type JumpTarget = "model" | "tools" | "end";

/** A channel's reducer; channels without one keep the last value written. */
export type Reducer = (current: unknown, update: unknown) => unknown;

/** What hooks and wrappers receive as `runtime` (createAgent's shape). */
export interface HookRuntime {
  context: unknown;
  store: unknown;
  configurable: Record<string, unknown> | undefined;
  writer: ((chunk: unknown) => void) | undefined;
  interrupt: unknown;
  signal: AbortSignal | undefined;
}

type HookFn = (state: Record<string, unknown>, runtime: HookRuntime) => unknown;
interface Hook {
  middleware: string;
  fn: HookFn;
  canJumpTo: readonly string[];
}

export interface HookRound {
  /** The state after every hook of the round, with the reducers applied. */
  state: Record<string, unknown>;
  /** Every hook's update, in order (`roundWrites` turns rounds into a node's writes). */
  written: Array<[string, unknown]>;
  jumpTo?: JumpTarget;
}

/** The runtime createAgent hands hooks, from the node's LangGraph config. */
export function runtimeOf(config: Record<string, unknown> | undefined): HookRuntime {
  const c = (config ?? {}) as Partial<Record<keyof HookRuntime, unknown>>;
  return Object.freeze({
    context: c.context ?? {},
    store: c.store,
    configurable: c.configurable as Record<string, unknown> | undefined,
    writer: c.writer as ((chunk: unknown) => void) | undefined,
    interrupt: c.interrupt,
    signal: c.signal as AbortSignal | undefined,
  });
}

/** The chain's hooks at one point, in the order they run. */
export function hooksAt(point: HookPoint, middleware: readonly AgentMiddleware[]): Hook[] {
  const hooks: Hook[] = [];
  for (const m of middleware) {
    const h = (m as unknown as Record<HookPoint, unknown>)[point];
    if (!h) continue;
    if (typeof h === "function") hooks.push({ middleware: m.name, fn: h as HookFn, canJumpTo: [] });
    else {
      const spec = h as { hook: HookFn; canJumpTo?: readonly string[] };
      hooks.push({ middleware: m.name, fn: spec.hook, canJumpTo: spec.canJumpTo ?? [] });
    }
  }
  return point === "afterModel" || point === "afterAgent" ? hooks.reverse() : hooks;
}

/** langchain's jump spellings, normalised (`parseJumpToTarget`). */
function jumpTarget(raw: unknown, hook: Hook, point: HookPoint): JumpTarget | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "string" || !hook.canJumpTo.includes(raw)) {
    const allowed = hook.canJumpTo.length > 0 ? `must be one of: ${hook.canJumpTo.join(", ")}` : `no ${point}.canJumpTo defined in middleware ${hook.middleware}`;
    throw new Error(`Invalid jump target: ${JSON.stringify(raw)}, ${allowed}.`);
  }
  if (raw === "model" || raw === "model_request") return "model";
  if (raw === "tools") return "tools";
  if (raw === "end" || raw === "__end__") return "end";
  throw new Error(`Invalid jump target: ${raw}, must be "model", "tools" or "end".`);
}

/** Messages as the reducer will hold them, with their ids fixed now so later hooks can refer to them. */
function asMessages(value: unknown): BaseMessage[] {
  const list = (Array.isArray(value) ? value : [value]) as BaseMessageLike[];
  return list.map((like) => {
    const m = coerceMessageLikeToMessage(like);
    if (m.id === undefined || m.id === null || m.id === "") {
      m.id = randomUUID();
      (m.lc_kwargs as { id?: string }).id = m.id;
    }
    return m;
  });
}

/** Apply one update to a local view with the reducers; its write is appended to `written`. */
export function applyUpdate(view: Record<string, unknown>, update: Record<string, unknown>, reducers: ReadonlyMap<string, Reducer>, written: Array<[string, unknown]>): Record<string, unknown> {
  const next = { ...view };
  for (const [key, raw] of Object.entries(update)) {
    if (key === "jumpTo") continue;
    const value = key === "messages" ? asMessages(raw) : raw;
    const reduce = reducers.get(key);
    next[key] = reduce ? reduce(next[key], value) : value;
    written.push([key, value]);
  }
  return next;
}

/**
 * Run one hook point's hooks over `state`. Hooks see the state as the previous hooks left it;
 * the first `jumpTo` ends the round. `written` carries an earlier round's updates of the same
 * node (a node may run two hook points: the run's first before_model runs beforeAgent first).
 */
export async function runHooks(
  point: HookPoint,
  hooks: readonly Hook[],
  state: Record<string, unknown>,
  runtime: HookRuntime,
  reducers: ReadonlyMap<string, Reducer>,
  written: Array<[string, unknown]> = [],
): Promise<HookRound> {
  let view = state;
  for (const hook of hooks) {
    let result = (await hook.fn({ ...view }, runtime)) as Record<string, unknown> | undefined | null;
    if (!result) continue;
    // createAgent's control action (`{type: "terminate"}`), kept for parity.
    if ("type" in result && typeof result.type === "string" && !("messages" in result)) {
      if (result.type !== "terminate") throw new Error(`Invalid control action: ${JSON.stringify(result)}`);
      if (result.error) throw result.error instanceof Error ? result.error : new Error(String(JSON.stringify(result.error)));
      result = { ...((result.result as Record<string, unknown> | undefined) ?? {}), jumpTo: result.jumpTo };
    }
    const jumpTo = jumpTarget(result.jumpTo, hook, point);
    view = applyUpdate(view, result, reducers, written);
    if (jumpTo) return { state: view, written, jumpTo };
  }
  return { state: view, written };
}

/**
 * The round's writes as ONE write per channel, equivalent to applying them one after the other:
 * - a channel without a reducer: its last value;
 * - `messages`: the concatenation, each id kept once at its first position with its last
 *   version (what messagesStateReducer does with the list in one pass). Only a message removed
 *   and then added again under the same id would land elsewhere in one pass: then the round's
 *   final list is written as an Overwrite;
 * - another reducer channel written more than once: its final value as an Overwrite (one write of
 *   two writes' worth would not always be their composition, e.g. viewed_images' `{}` clear).
 */
export function roundWrites(written: Array<[string, unknown]>, reducers: ReadonlyMap<string, Reducer>, view: Record<string, unknown>): Array<[string, unknown]> {
  const byKey = new Map<string, unknown[]>();
  for (const [k, v] of written) {
    const list = byKey.get(k);
    if (list) list.push(v);
    else byKey.set(k, [v]);
  }
  const out: Array<[string, unknown]> = [];
  for (const [key, values] of byKey) {
    if (!reducers.has(key)) out.push([key, values.at(-1)]);
    else if (values.length === 1) out.push([key, values[0]]);
    else if (key === "messages") out.push(["messages", collapseMessages(values.flat() as BaseMessage[]) ?? new Overwrite(view.messages)]);
    else out.push([key, new Overwrite(view[key])]);
  }
  return out;
}

/** One-pass equivalent of a list of message writes, or undefined when only an Overwrite is exact. */
function collapseMessages(messages: BaseMessage[]): BaseMessage[] | undefined {
  const out: BaseMessage[] = [];
  const at = new Map<string, number>();
  const removed = new Set<string>();
  for (const m of messages) {
    const id = m.id!;
    if (RemoveMessage.isInstance(m)) {
      removed.add(id);
      out.push(m);
      continue;
    }
    if (removed.has(id)) return undefined;
    const i = at.get(id);
    if (i === undefined) {
      at.set(id, out.length);
      out.push(m);
    } else out[i] = m;
  }
  return out;
}
