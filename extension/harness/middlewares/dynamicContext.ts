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
 * - Memory injection is not ported (no memory subsystem yet).
 * The date is the harness process's local date, as DeerFlow's `datetime.now()`.
 */
import { createMiddleware } from "langchain";
import { HumanMessage } from "@langchain/core/messages";
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

export function dynamicContextMiddleware(clock: () => Date = () => new Date()) {
  return createMiddleware({
    name: "DynamicContextMiddleware",
    wrapModelCall: (request, handler) => {
      const reminder = new HumanMessage({ content: dateReminder(clock()), name: "dynamic_context", additional_kwargs: { hide_from_ui: true, dynamic_context_reminder: true } });
      const messages = [...request.messages];
      const first = messages.findIndex(isGenuineUserMessage);
      messages.splice(first < 0 ? messages.length : first, 0, reminder);
      return handler({ ...request, messages });
    },
  });
}
