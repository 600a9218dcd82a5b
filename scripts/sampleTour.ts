/**
 * The scripted model's tour of samples/hello-workspace, shared by `npm start` (VS Code for the
 * Web) and `npm run demo` (the CLI) when no real endpoint is configured: look at the project, read
 * the README, write a summary to outputs, present it.
 */
import type { ScriptFn, ScriptedReply } from "../test/fixtures/modelServer.js";

const TOUR: readonly ScriptedReply[] = [
  { content: "Let me look at the project first.", toolCalls: [{ name: "ls", args: { description: "See the project layout", path: "/mnt/user-data/workspace" } }] },
  { toolCalls: [{ name: "read_file", args: { description: "Read the README", path: "/mnt/user-data/workspace/README.md" } }] },
  {
    toolCalls: [{
      name: "write_file",
      args: { description: "Write the summary", path: "/mnt/user-data/outputs/summary.md", content: "# Summary\n\nhello-workspace is a tiny TypeScript project whose `greet(name)` says hello.\n" },
    }],
  },
  { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/summary.md"] } }] },
  { content: "I wrote a summary of the project to **summary.md** and presented it: click it in the artifacts to open it. (This is a scripted model: *DeerFlow: Add Model…* connects a real one.)" },
];

/** The tour, restarted for every prompt: the step is the number of assistant messages since the last user message. */
export const tour: ScriptFn = (request) => {
  const messages = request.body?.messages ?? [];
  const last = messages.at(-1);
  if (last?.role === "user" && typeof last.content === "string" && last.content.startsWith("Generate a concise title")) return { content: "Project tour" };
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const step = messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
  return TOUR[step] ?? { content: "Done." };
};
