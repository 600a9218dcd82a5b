/**
 * TodoMiddleware, plan mode only (DeerFlow `todo_middleware.py`, a subclass of LangChain's
 * TodoListMiddleware): the `write_todos` tool and its system-prompt section; a `todo_reminder`
 * when the list exists but every `write_todos` call has scrolled out of the context; and the
 * completion nudge: a final answer while todos are still open sends the model back, at most twice
 * per run, with a transient `todo_completion_reminder` listing only the open items.
 *
 * Where we differ, and why:
 * - The nudge jumps from `afterAgent`, not `afterModel`. It was written for langchain 1.5.14's
 *   createAgent, whose router after the first-listed `afterModel` node exited on a tool-call-free
 *   AI message BEFORE it read `jumpTo`; our graph (agent/graph/build.ts) honours an afterModel jump
 *   first, but the afterAgent point is still the right one: a final answer always reaches it, and
 *   the hooks listed after Todo have seen the answer. Consequence: middlewares listed after Todo
 *   run their `afterAgent` once per nudge too. A nudge is a model turn: it counts in the run's
 *   turn budget, and a run at its budget ends instead.
 * - DeerFlow keeps its counters and queued reminders in the middleware instance, keyed by
 *   (thread, run). Here they are private state channels (`_todo_*`, not part of the input/output
 *   schema): the count is reset in `beforeAgent`, and the reminder is added by `wrapModelCall`
 *   when the request's last message is the AI answer that was nudged. Nothing is persisted to
 *   `messages`, as in DeerFlow.
 */
import { createMiddleware, TODO_LIST_MIDDLEWARE_SYSTEM_PROMPT } from "langchain";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { threadStateFields } from "../state/threadState.js";
import type { Todo } from "../state/reducers.js";
import { WRITE_TODOS_TOOL_NAME, writeTodosTool } from "../tools/writeTodos.js";

/** DeerFlow `_MAX_COMPLETION_REMINDERS`. */
export const MAX_COMPLETION_REMINDERS = 2;

const todoState = new StateSchema({
  todos: threadStateFields.todos,
  /** Completion reminders issued in this run. */
  _todo_reminders: z.number().optional(),
  /** Id of the final AI answer the last reminder answers to. */
  _todo_nudged_ai_id: z.string().nullable().optional(),
});

interface TodoState {
  messages: BaseMessage[];
  todos?: Todo[] | null;
  _todo_reminders?: number;
  _todo_nudged_ai_id?: string | null;
}

/** DeerFlow `_format_todos`: `- [status] content`, missing status → pending. */
export function formatTodos(todos: ReadonlyArray<Partial<Todo>>): string {
  return todos.map((t) => `- [${t.status ?? "pending"}] ${t.content ?? ""}`).join("\n");
}

export function todoReminderMessage(todos: readonly Todo[]): HumanMessage {
  return new HumanMessage({
    name: "todo_reminder",
    additional_kwargs: { hide_from_ui: true },
    content:
      "<system_reminder>\n" +
      "Your todo list from earlier is no longer visible in the current context window, " +
      "but it is still active. Here is the current state:\n\n" +
      `${formatTodos(todos)}\n\n` +
      "Continue tracking and updating this todo list as you work. " +
      "Call `write_todos` whenever the status of any item changes.\n" +
      "</system_reminder>",
  });
}

/** DeerFlow `_format_completion_reminder`: only the items that are not completed. */
export function completionReminderText(todos: readonly Todo[]): string {
  const open = todos.filter((t) => t.status !== "completed");
  return (
    "<system_reminder>\n" +
    "You have incomplete todo items that must be finished before giving your final response:\n\n" +
    `${formatTodos(open)}\n\n` +
    "Please continue working on these tasks. Call `write_todos` to mark items as completed " +
    "as you finish them, and only respond when all items are done.\n" +
    "</system_reminder>"
  );
}

/** DeerFlow `_has_tool_call_intent_or_error`: anything but a clean final answer. */
export function hasToolCallIntentOrError(m: AIMessage): boolean {
  if ((m.tool_calls?.length ?? 0) > 0) return true;
  if ((m.invalid_tool_calls?.length ?? 0) > 0) return true;
  const kw = m.additional_kwargs ?? {};
  if ((Array.isArray(kw.tool_calls) && kw.tool_calls.length > 0) || kw.function_call) return true;
  const finish: unknown = m.response_metadata?.finish_reason;
  return finish === "tool_calls" || finish === "function_call";
}

function writeTodosVisible(messages: readonly BaseMessage[]): boolean {
  return messages.some((m) => AIMessage.isInstance(m) && (m.tool_calls ?? []).some((c) => c.name === WRITE_TODOS_TOOL_NAME));
}

function reminderVisible(messages: readonly BaseMessage[]): boolean {
  return messages.some((m) => HumanMessage.isInstance(m) && m.name === "todo_reminder");
}

export function todoMiddleware() {
  return createMiddleware({
    name: "TodoMiddleware",
    stateSchema: todoState,
    tools: [writeTodosTool()],
    beforeAgent: (state) => ((state as TodoState)._todo_reminders ? { _todo_reminders: 0, _todo_nudged_ai_id: null } : undefined),
    beforeModel: (state) => {
      const s = state as TodoState;
      const todos = s.todos ?? [];
      if (todos.length === 0 || writeTodosVisible(s.messages) || reminderVisible(s.messages)) return undefined;
      return { messages: [todoReminderMessage(todos)] };
    },
    // LangChain's TodoListMiddleware: parallel write_todos calls in one response are all refused.
    // When those were the only calls, jump straight back to the model: the router after the model,
    // seeing no pending call and a ToolMessage last, would otherwise end the run.
    afterModel: {
      canJumpTo: ["model"],
      hook: (state) => {
        const last = [...(state as TodoState).messages].reverse().find((m): m is AIMessage => AIMessage.isInstance(m));
        const calls = (last?.tool_calls ?? []).filter((c) => c.name === WRITE_TODOS_TOOL_NAME);
        if (calls.length <= 1) return undefined;
        const onlyTodos = calls.length === (last?.tool_calls?.length ?? 0);
        return {
          ...(onlyTodos ? { jumpTo: "model" as const } : {}),
          messages: calls.map(
            (c) =>
              new ToolMessage({
                content:
                  "Error: The `write_todos` tool should never be called multiple times in parallel. Please call it only once per model invocation to update the todo list.",
                tool_call_id: c.id ?? "",
                name: WRITE_TODOS_TOOL_NAME,
                status: "error",
              }),
          ),
        };
      },
    },
    wrapModelCall: (request, handler) => {
      // DeerFlow #4714: the todo section stays in the system prompt on every request.
      let req = { ...request, systemMessage: request.systemMessage.concat(`\n\n${TODO_LIST_MIDDLEWARE_SYSTEM_PROMPT}`) };
      const s = request.state as Partial<TodoState>;
      const last = request.messages.at(-1);
      if (s._todo_nudged_ai_id && last && AIMessage.isInstance(last) && last.id === s._todo_nudged_ai_id) {
        const reminder = new HumanMessage({
          name: "todo_completion_reminder",
          additional_kwargs: { hide_from_ui: true },
          content: completionReminderText(s.todos ?? []),
        });
        req = { ...req, messages: [...request.messages, reminder] };
      }
      return handler(req);
    },
    afterAgent: {
      canJumpTo: ["model"],
      hook: (state) => {
        const s = state as TodoState;
        const last = s.messages.at(-1);
        if (!last || !AIMessage.isInstance(last) || hasToolCallIntentOrError(last)) return undefined;
        const todos = s.todos ?? [];
        if (todos.length === 0 || todos.every((t) => t.status === "completed")) return undefined;
        const issued = s._todo_reminders ?? 0;
        if (issued >= MAX_COMPLETION_REMINDERS || !last.id) return undefined;
        return { jumpTo: "model", _todo_reminders: issued + 1, _todo_nudged_ai_id: last.id };
      },
    },
  });
}
