/**
 * `write_todos(todos)` (LangChain's TodoListMiddleware tool, which DeerFlow's TodoMiddleware
 * subclasses): replaces the whole todo list in state. Registered by the Todo middleware, so it
 * exists only in plan mode. The description is a condensed form of LangChain's (the original is
 * ~8 KB of examples); the system-prompt section is LangChain's verbatim (see middlewares/todo.ts).
 */
import { tool } from "langchain";
import type { ToolRuntime } from "langchain";
import { Command } from "@langchain/langgraph";
import { ToolMessage } from "@langchain/core/messages";
import { z } from "zod";

export const WRITE_TODOS_TOOL_NAME = "write_todos";

const TodoItem = z.object({
  content: z.string().describe("Content of the todo item"),
  status: z.enum(["pending", "in_progress", "completed"]).describe("Status of the todo"),
});

const schema = z.object({ todos: z.array(TodoItem).describe("List of todo items to update") });

const DESCRIPTION = `Use this tool to create and manage a structured task list for your current work session. It helps you track progress on complex tasks and shows the user how their request is progressing.

Use it for complex multi-step tasks (3 or more distinct steps), when the user gives you several tasks, or asks for a todo list. Skip it for a single straightforward task, trivial work, or purely conversational requests.

How to use it:
1. Mark a task in_progress BEFORE you begin working on it.
2. Mark it completed IMMEDIATELY after finishing it; add follow-up tasks you discover. Do not batch completions.
3. Remove tasks that are no longer relevant. Don't change previously completed tasks.
4. Unless all tasks are completed, always keep at least one task in_progress.
5. Only mark a task completed when it is FULLY accomplished; if you are blocked, keep it in_progress and add a task describing what must be resolved.

Each call replaces the whole list: always send every item with its current status.`;

export function writeTodosTool() {
  return tool(
    ({ todos }, runtime: ToolRuntime) =>
      new Command({
        update: {
          todos,
          messages: [
            new ToolMessage({
              content: `Updated todo list to ${JSON.stringify(todos)}`,
              tool_call_id: runtime.toolCallId,
              name: WRITE_TODOS_TOOL_NAME,
            }),
          ],
        },
      }),
    { name: WRITE_TODOS_TOOL_NAME, description: DESCRIPTION, schema },
  );
}
