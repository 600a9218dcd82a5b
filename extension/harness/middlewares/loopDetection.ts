/**
 * LoopDetectionMiddleware (DeerFlow `loop_detection_middleware.py`): a model that keeps issuing the
 * same tool calls is first warned, then stopped, before the recursion limit kills the run.
 *
 * - `afterModel` hashes the set of tool calls of the new AIMessage (order-independent; salient
 *   arguments only, `read_file` ranges bucketed by 200 lines, `write_file`/`str_replace` by full
 *   arguments) into a per-thread sliding window.
 * - The `warnThreshold`-th identical set queues `[LOOP DETECTED] ...`. It is delivered by
 *   `wrapModelCall` on the NEXT request, as `HumanMessage(name="loop_warning")` appended after the
 *   tool results (request-only). Adding it in afterModel would put a message between the calls and
 *   their results, which OpenAI-compatible providers reject.
 * - The `hardLimit`-th identical set replaces the AIMessage (same id): no tool calls, raw
 *   `tool_calls`/`function_call` removed, finish_reason "stop", content + the `[FORCED STOP]` text.
 *   With no tool calls left the agent loop ends with that answer.
 * - Per-tool frequency (window 50): warn at 30 calls of one tool, stop at 50; overrides per tool.
 *
 * Counts are per thread, as DeerFlow's: a model that repeats the same calls across the user's
 * "continue" messages is still looping. DeerFlow keeps the windows in a shared instance (an LRU of
 * 100 threads); we build the agent per run, so they live in a private state channel,
 * `_loop_detection`, replaced whole on each change and checkpointed with the thread: they survive
 * runs, harness restarts and other processes, and a thread's windows go with the thread (no LRU,
 * so `maxTrackedThreads` is unused). Queued warnings stay per run (in the instance): DeerFlow drops
 * another run's pending warnings in `before_agent`. A forced stop stamps `stop_reason:
 * "loop_capped"` on the answer, which the run's `end` carries.
 */
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { createHash } from "node:crypto";
import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";

export interface LoopDetectionOptions {
  warnThreshold: number;
  hardLimit: number;
  windowSize: number;
  maxTrackedThreads: number;
  toolFreqWarn: number;
  toolFreqHardLimit: number;
  toolFreqOverrides: Readonly<Record<string, readonly [warn: number, hard: number]>>;
}

export const DEFAULT_LOOP_DETECTION: LoopDetectionOptions = {
  warnThreshold: 3,
  hardLimit: 5,
  windowSize: 20,
  maxTrackedThreads: 100,
  toolFreqWarn: 30,
  toolFreqHardLimit: 50,
  toolFreqOverrides: {},
};

export const LOOP_CAPPED = "loop_capped";
export const LOOP_WARNING =
  "[LOOP DETECTED] You are repeating the same tool calls. Stop calling tools and produce your final answer now. If you cannot complete the task, summarize what you accomplished so far.";
export const HARD_STOP =
  "[FORCED STOP] Repeated tool calls exceeded the safety limit. Producing final answer with results collected so far.";
const freqWarning = (tool: string, n: number) =>
  `[LOOP DETECTED] You have called ${tool} ${n} times without producing a final answer. Stop calling tools and produce your final answer now. If you cannot complete the task, summarize what you accomplished so far.`;
const freqHardStop = (tool: string, n: number) =>
  `[FORCED STOP] Tool ${tool} called ${n} times — exceeded the per-tool safety limit. Producing final answer with results collected so far.`;

const MAX_PENDING_WARNINGS = 4;
const SALIENT_FIELDS = ["path", "url", "query", "command", "pattern", "glob", "cmd"] as const;

/** Python's json.dumps(sort_keys=True) equivalent for hashing: keys sorted at every level. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(", ")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}: ${stableJson((v as Record<string, unknown>)[k])}`)
      .join(", ")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

function normalizeArgs(raw: unknown): [Record<string, unknown>, string | undefined] {
  if (raw && typeof raw === "object" && !Array.isArray(raw)) return [raw as Record<string, unknown>, undefined];
  if (typeof raw === "string") {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return [parsed as Record<string, unknown>, undefined];
      return [{}, stableJson(parsed)];
    } catch {
      return [{}, raw];
    }
  }
  return raw == null ? [{}, undefined] : [{}, stableJson(raw)];
}

function stableToolKey(name: string, args: Record<string, unknown>, fallback: string | undefined): string {
  if (name === "read_file" && fallback === undefined) {
    const toInt = (v: unknown, d: number) => {
      const n = typeof v === "number" ? v : typeof v === "string" ? parseInt(v, 10) : NaN;
      return Number.isFinite(n) ? Math.trunc(n) : d;
    };
    const start0 = toInt(args.start_line, 1);
    const end0 = toInt(args.end_line, start0);
    const [lo, hi] = [Math.min(start0, end0), Math.max(start0, end0)];
    const bucket = (n: number) => Math.floor((Math.max(n, 1) - 1) / 200);
    return `${typeof args.path === "string" ? args.path : ""}:${bucket(lo)}-${bucket(hi)}`;
  }
  if (name === "write_file" || name === "str_replace") return fallback ?? stableJson(args);
  const salient: Record<string, unknown> = {};
  for (const f of SALIENT_FIELDS) if (args[f] !== undefined && args[f] !== null) salient[f] = args[f];
  if (Object.keys(salient).length > 0) return stableJson(salient);
  return fallback ?? stableJson(args);
}

/** Order-independent hash of a tool-call set: the same multiset of calls, the same hash. */
export function hashToolCalls(calls: ReadonlyArray<{ name?: string; args?: unknown }>): string {
  const normalized = calls
    .map((c) => {
      const name = c.name ?? "";
      const [args, fallback] = normalizeArgs(c.args ?? {});
      return `${name}:${stableToolKey(name, args, fallback)}`;
    })
    .sort();
  return createHash("md5").update(stableJson(normalized)).digest("hex").slice(0, 12);
}

/** The thread's detection windows, as checkpointed (sets as sorted arrays). */
const loopTrack = z.object({
  hashes: z.array(z.string()),
  warned: z.array(z.string()),
  names: z.array(z.string()),
  freq_warned: z.array(z.string()),
});
type LoopTrack = z.infer<typeof loopTrack>;
const loopState = new StateSchema({ _loop_detection: loopTrack.nullable().optional() });

interface ThreadTrack {
  hashes: string[];
  warned: Set<string>;
  names: string[];
  freqWarned: Set<string>;
}

const fromState = (t: LoopTrack | null | undefined): ThreadTrack => ({
  hashes: [...(t?.hashes ?? [])],
  warned: new Set(t?.warned ?? []),
  names: [...(t?.names ?? [])],
  freqWarned: new Set(t?.freq_warned ?? []),
});
const toState = (t: ThreadTrack): LoopTrack => ({ hashes: t.hashes, warned: [...t.warned].sort(), names: t.names, freq_warned: [...t.freqWarned].sort() });

function appendText(content: AIMessage["content"], text: string): AIMessage["content"] {
  if (typeof content === "string") return `${content}\n\n${text}`;
  return [...content, { type: "text", text: `\n\n${text}` }] as AIMessage["content"];
}

/** The forced-stop answer: same id (the messages reducer replaces it), no tool intent left. */
function hardStopMessage(last: AIMessage, text: string): AIMessage {
  const kwargs: Record<string, unknown> = { ...last.additional_kwargs };
  delete kwargs.tool_calls;
  delete kwargs.function_call;
  kwargs.stop_reason = LOOP_CAPPED;
  const meta: Record<string, unknown> = { ...last.response_metadata };
  // Set even when the provider sent none (a streamed message often has none): it is a final answer now.
  meta.finish_reason = "stop";
  return new AIMessage({
    content: appendText(last.content ?? "", text),
    ...(last.id ? { id: last.id } : {}),
    ...(last.name ? { name: last.name } : {}),
    additional_kwargs: kwargs,
    response_metadata: meta,
    ...(last.usage_metadata ? { usage_metadata: last.usage_metadata } : {}),
    tool_calls: [],
    invalid_tool_calls: [],
  });
}

export function loopDetectionMiddleware(options: Partial<LoopDetectionOptions> = {}) {
  const o: LoopDetectionOptions = { ...DEFAULT_LOOP_DETECTION, ...options };
  const freqWindow = Math.max(o.toolFreqHardLimit, ...Object.values(o.toolFreqOverrides).map(([, hard]) => hard));
  // This run's queued warnings (the agent, and so this instance, is built per run).
  const pending: string[] = [];

  /** [message, hardStop] for the newest AIMessage's tool calls, or undefined. */
  const check = (t: ThreadTrack, calls: NonNullable<AIMessage["tool_calls"]>): [string, boolean] | undefined => {
    const hash = hashToolCalls(calls);
    t.hashes.push(hash);
    if (t.hashes.length > o.windowSize) t.hashes.splice(0, t.hashes.length - o.windowSize);
    for (const h of [...t.warned]) if (!t.hashes.includes(h)) t.warned.delete(h);
    const count = t.hashes.filter((h) => h === hash).length;
    if (count >= o.hardLimit) return [HARD_STOP, true];
    if (count >= o.warnThreshold && !t.warned.has(hash)) {
      t.warned.add(hash);
      return [LOOP_WARNING, false];
    }
    for (const c of calls) {
      if (!c.name) continue;
      t.names.push(c.name);
      if (t.names.length > freqWindow) t.names.splice(0, t.names.length - freqWindow);
      const n = t.names.filter((x) => x === c.name).length;
      const [warn, hard] = o.toolFreqOverrides[c.name] ?? [o.toolFreqWarn, o.toolFreqHardLimit];
      if (n >= hard) return [freqHardStop(c.name, n), true];
      if (n >= warn) {
        if (!t.freqWarned.has(c.name)) {
          t.freqWarned.add(c.name);
          return [freqWarning(c.name, n), false];
        }
      } else {
        t.freqWarned.delete(c.name);
      }
    }
    return undefined;
  };

  return createMiddleware({
    name: "LoopDetectionMiddleware",
    stateSchema: loopState,
    // A warning queued by a run that ended before its next model call must not leak into this one.
    beforeAgent: () => {
      pending.splice(0);
      return undefined;
    },
    afterModel: (state) => {
      const last = state.messages.at(-1);
      if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return undefined;
      const t = fromState((state as { _loop_detection?: LoopTrack | null })._loop_detection);
      const found = check(t, last.tool_calls);
      const _loop_detection = toState(t);
      if (!found) return { _loop_detection };
      const [text, hardStop] = found;
      if (hardStop) return { _loop_detection, messages: [hardStopMessage(last, text)] };
      if (pending.length < MAX_PENDING_WARNINGS) pending.push(text);
      return { _loop_detection };
    },
    wrapModelCall: (request, handler) => {
      const queued = pending.splice(0);
      if (queued.length === 0) return handler(request);
      const warning: BaseMessage = new HumanMessage({ content: queued.join("\n\n"), name: "loop_warning" });
      return handler({ ...request, messages: [...request.messages, warning] });
    },
    afterAgent: () => {
      pending.splice(0);
      return undefined;
    },
  });
}
