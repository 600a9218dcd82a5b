/**
 * DynamicContextMiddleware (DeerFlow `dynamic_context_middleware.py`): the current date reaches the
 * model as a hidden `<system-reminder><current_date>YYYY-MM-DD, Weekday</current_date></system-reminder>`
 * message, never in the system prompt, so the prompt stays byte-identical across days and the
 * provider's prefix cache keeps hitting.
 *
 * Where we differ, and why:
 * - DeerFlow writes the reminder into state in `before_agent` (an ID swap in front of the first
 *   user message, a second reminder when a conversation crosses midnight). Ours is request-only,
 *   added by `wrapModelCall` to every model request and never stored: the thread's history stays
 *   what the user and the model said, and a date correction needs no persisted bookkeeping.
 * - It is a HumanMessage named `dynamic_context` (hide_from_ui), not a SystemMessage:
 *   SystemMessageCoalescing would merge a SystemMessage into the one system prompt, which is
 *   exactly what must not change daily. It sits right before the first genuine user message, as
 *   DeerFlow's frozen snapshot does, so everything before it stays a stable prefix and, within a
 *   day, the whole history is.
 * - Memory (issue 15): at a thread's FIRST run, `beforeAgent` renders the user's memory once
 *   (memory/render.ts, within `max_injection_tokens`) and snapshots it in the private channel
 *   `_memory_context`; every request of the thread then carries exactly those bytes as a hidden
 *   HumanMessage `<system-reminder><memory>…</memory></system-reminder>` right before the date
 *   reminder, so a memory updated by a later extraction never changes an existing thread's
 *   prefix. A HumanMessage, as DeerFlow keeps memory at role:user: it is user-managed content
 *   and must not gain system authority. A thread that already had a run when memory came on
 *   gets nothing (DeerFlow injects into the first turn only); a run with memory off injects
 *   nothing, whatever the snapshot holds.
 *   The snapshot records the memory's generation (`_memory_generation`, memory/store.ts), which
 *   only an explicit user change moves (`memory clear`, Forget, a document saved in the editor),
 *   never an extraction. When it moved, `beforeAgent` renders the memory again: after a Forget an
 *   older thread sends no forgotten fact (an empty memory → no block), after an edit it sends the
 *   edited memory. So a thread's prefix changes only when the user changed the memory.
 * The date is the harness process's local date, as DeerFlow's `datetime.now()`.
 */
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { isGenuineUserMessage } from "./shared/messages.js";

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;

/** DeerFlow `_format_current_date`: `%Y-%m-%d, %A` in local time. */
export function formatCurrentDate(now: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}, ${WEEKDAYS[now.getDay()]}`;
}

export function dateReminder(now: Date): string {
  return ["<system-reminder>", `<current_date>${formatCurrentDate(now)}</current_date>`, "</system-reminder>"].join("\n");
}

/** `""`: the thread's first run had no memory to give (or memory was off); undefined: not decided yet. */
const memoryState = new StateSchema({ _memory_context: z.string().nullable().optional(), _memory_generation: z.string().nullable().optional() });

export interface DynamicContextOptions {
  clock?: () => Date;
  /** Memory is on for this run: the reminder for a thread's first run (memory/hooks.ts). */
  memory?: { injection(): Promise<string>; generation?(): string };
}

export function dynamicContextMiddleware(options: DynamicContextOptions = {}) {
  const clock = options.clock ?? (() => new Date());
  const memory = options.memory;
  return createMiddleware({
    name: "DynamicContextMiddleware",
    stateSchema: memoryState,
    beforeAgent: async (state) => {
      const s = state as { messages?: BaseMessage[]; _memory_context?: string | null; _memory_generation?: string | null };
      if (!memory) return undefined;
      // A snapshot from before generations were recorded counts as "0" (no explicit change yet).
      const generation = memory.generation?.() ?? "0";
      if (typeof s._memory_context === "string") {
        if ((s._memory_generation ?? "0") === generation) return undefined;
        // The user changed the memory (Forget, an edit): the thread gets what is stored now.
        return { _memory_context: await memory.injection(), _memory_generation: generation };
      }
      // Not the thread's first run: it never had memory, and must not start now (prefix stability).
      const first = !(s.messages ?? []).some((m) => AIMessage.isInstance(m));
      return { _memory_context: first ? await memory.injection() : "", _memory_generation: generation };
    },
    wrapModelCall: (request, handler) => {
      const messages = [...request.messages];
      const first = messages.findIndex(isGenuineUserMessage);
      const reminders: HumanMessage[] = [];
      const snapshot = (request.state as { _memory_context?: string | null })._memory_context;
      if (memory && snapshot) {
        reminders.push(new HumanMessage({ content: snapshot, name: "dynamic_context", additional_kwargs: { hide_from_ui: true, dynamic_context_reminder: true, memory: true } }));
      }
      reminders.push(new HumanMessage({ content: dateReminder(clock()), name: "dynamic_context", additional_kwargs: { hide_from_ui: true, dynamic_context_reminder: true } }));
      messages.splice(first < 0 ? messages.length : first, 0, ...reminders);
      return handler({ ...request, messages });
    },
  });
}
