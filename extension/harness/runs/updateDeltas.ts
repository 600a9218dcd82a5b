/**
 * Updates carry deltas. langchain's middleware nodes return `{...state, ...result}` (nodes/
 * middleware.js in langchain 1.5), so every before_agent/after_model hook that changes anything
 * re-emits the thread's whole message list in its `updates` chunk: the journal stored the history
 * again on every turn and a panel following the run received it again (issue 12).
 *
 * A message a node passed through unchanged is the very object the state already held: LangGraph
 * hands nodes the channel's values by reference, and a `values` chunk (emitted after every step,
 * before the next step's updates) holds the same objects. So: remember every message object seen
 * in `values`, and drop those from a node's update. A message a node created or edited (a new
 * object, even under the same id: the reducer replaces by id) stays. Identity, not content: no
 * serialisation on the hot path, and no false "unchanged". A node left with nothing is dropped.
 */
export class UpdateDeltas {
  readonly #known = new WeakSet<object>();

  /** After each step: the state's messages are known from now on. */
  observeValues(messages: readonly unknown[] | undefined): void {
    for (const m of messages ?? []) if (m !== null && typeof m === "object") this.#known.add(m);
  }

  /** The update with each node's `messages` cut to what the node changed (key dropped when none). */
  delta(update: unknown): Record<string, unknown> {
    if (update === null || typeof update !== "object") return {};
    const out: Record<string, unknown> = {};
    for (const [node, value] of Object.entries(update as Record<string, unknown>)) {
      const messages = (value as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(messages)) {
        out[node] = value;
        continue;
      }
      const { messages: _all, ...rest } = value as { messages: unknown[] } & Record<string, unknown>;
      const changed = (messages as unknown[]).filter((m) => m === null || typeof m !== "object" || !this.#known.has(m));
      out[node] = changed.length > 0 ? { ...rest, messages: changed } : rest;
    }
    // Nodes whose update is now empty (no channel, or only `jumpTo: undefined`) changed nothing.
    for (const [node, value] of Object.entries(out)) {
      if (value === null || value === undefined) delete out[node];
      else if (typeof value === "object" && Object.values(value as Record<string, unknown>).every((v) => v === undefined)) delete out[node];
    }
    return out;
  }
}
