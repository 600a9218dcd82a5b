/**
 * MCP for one run (issue 23): the worker asks the folder's registry for the thread's tools and
 * journals every server's state as a `custom` `mcp_status` event (starting, ready with its tool
 * count, error with the reason, stopped), DeerFlow-style `runtime` custom events. What the
 * registry reports before the run's `metadata` is held and written right after it, so a run's
 * journal still starts with its metadata; a server that crashes mid-run is journaled when it does.
 */
import type { RunEvent } from "../../protocol/events.js";
import type { McpServerView, McpStatusEventData } from "../../protocol/mcp.js";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BlobStore } from "../store/blobs.js";
import type { ToolSearchSettings } from "./deferred.js";
import type { McpRegistry } from "./registry.js";

export interface McpRunSource {
  readonly registry: McpRegistry;
  readonly toolSearch: ToolSearchSettings;
}

export interface McpRunHandle {
  readonly tools: StructuredToolInterface[];
  /** The run's metadata is journaled: held statuses follow it. */
  started(): void;
  /** The run ended: no more statuses for it. */
  done(): void;
}

export function statusEvent(v: McpServerView): McpStatusEventData {
  return {
    type: "mcp_status",
    server: v.name,
    state: v.state,
    ...(v.state === "ready" ? { tools: v.tools.length } : {}),
    ...(v.reason && v.state !== "ready" ? { error: v.reason } : {}),
  };
}

export async function mcpRunTools(
  source: McpRunSource,
  o: { threadId: string; runId: string; signal: AbortSignal; blobs: BlobStore; supportsVision: boolean; append: (e: RunEvent) => void },
): Promise<McpRunHandle> {
  const held: McpStatusEventData[] = [];
  let live = false;
  let over = false;
  const write = (data: McpStatusEventData) => {
    if (over) return;
    if (!live) held.push(data);
    else o.append({ run_id: o.runId, thread_id: o.threadId, event: "custom", data: { ...data } });
  };
  const told = new Set<string>();
  const unsubscribe = source.registry.onStatus((v) => {
    told.add(v.name);
    write(statusEvent(v));
  });
  const found = await source.registry.toolsFor(o.threadId, { signal: o.signal, blobs: o.blobs, supportsVision: o.supportsVision });
  // Servers whose state did not change here (ready from an earlier run, waiting for approval): said once too.
  for (const v of found.servers) if (!told.has(v.name)) write(statusEvent(v));
  return {
    tools: found.tools,
    started: () => {
      if (live) return;
      live = true;
      for (const data of held.splice(0)) write(data);
    },
    done: () => {
      over = true;
      unsubscribe();
    },
  };
}
