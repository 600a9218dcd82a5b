// Shared fixtures for the sandbox unit tests: a real temp workspace with real thread dirs, and a
// way to invoke a tool the way createAgent's ToolNode does (a ToolCall plus a config with state).
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { ToolMessage } from "@langchain/core/messages";
import type { Command } from "@langchain/langgraph";
import type { ThreadDirs } from "../../../extension/harness/threads/threadDirs.js";
import { ensureThreadDirs } from "../../../extension/harness/trust/threadFolders.js";
import { LocalSandboxProvider } from "../../../extension/harness/sandbox/local.js";
import { createSandboxTools } from "../../../extension/harness/tools/sandbox/index.js";

export interface Fixture {
  readonly root: string;
  readonly ws: string;
  readonly dirs: ThreadDirs;
  readonly provider: LocalSandboxProvider;
  readonly sandboxId: string;
  cleanup(): void;
}

export function makeFixture(threadId = "t1"): Fixture {
  const root = mkdtempSync(join(tmpdir(), "deerflow-sandbox-"));
  const workspaceFolder = join(root, "workspace");
  mkdirSync(workspaceFolder);
  const dirs = ensureThreadDirs(workspaceFolder, threadId);
  const provider = new LocalSandboxProvider({ workspaceFolder });
  return {
    root: realpathSync(root),
    ws: dirs.workspace,
    dirs,
    provider,
    sandboxId: `local:default:${threadId}`,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export function toolsFor(fx: Fixture, allowHostCommands = true, bashTimeoutMs?: number): Record<string, StructuredToolInterface> {
  const tools = createSandboxTools({
    dirs: fx.dirs,
    provider: fx.provider,
    allowHostCommands,
    ...(bashTimeoutMs !== undefined ? { bashTimeoutMs } : {}),
  });
  return Object.fromEntries(tools.map((t) => [t.name, t]));
}

let callCounter = 0;

/** Invoke like ToolNode: a ToolCall and a config carrying the graph state. */
export async function invokeTool(
  tool: StructuredToolInterface | undefined,
  args: Record<string, unknown>,
  state: Record<string, unknown> | undefined,
): Promise<ToolMessage | Command> {
  if (!tool) throw new Error("no such tool");
  callCounter += 1;
  const id = `call-${callCounter}`;
  const config = state === undefined ? undefined : { state, toolCallId: id };
  return (await tool.invoke({ id, name: tool.name, args, type: "tool_call" }, config as never)) as ToolMessage | Command;
}

/** Invoke with the sandbox already acquired and return the text the model would see. */
export async function run(fx: Fixture, tool: StructuredToolInterface | undefined, args: Record<string, unknown>): Promise<string> {
  await fx.provider.acquire(fx.dirs.threadId);
  const out = await invokeTool(tool, args, { sandbox: { sandbox_id: fx.sandboxId } });
  if (!(out instanceof ToolMessage)) throw new Error("expected a ToolMessage once the sandbox is acquired");
  return contentText(out.content);
}

export function commandText(out: ToolMessage | Command): string {
  if (out instanceof ToolMessage) return contentText(out.content);
  const update = out.update as { messages?: ToolMessage[] };
  return contentText(update.messages?.[0]?.content);
}

function contentText(content: unknown): string {
  if (typeof content !== "string") throw new Error(`expected string content, got ${JSON.stringify(content)}`);
  return content;
}
