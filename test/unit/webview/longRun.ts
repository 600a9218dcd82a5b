// A long tool-calling run as the harness journals it (issue 20's 300-turn case), for the model's
// unit tests and test/bench/webviewModel.bench.ts: per turn the call streams in (name, then its
// arguments in two fragments), the complete AI message, `values`, the result streamed and then
// complete, `values` again. Tools rotate as a real agent's would; every call gets its result.
import type { JournalEvent } from "../../../extension/protocol/rpc.js";
import { T } from "./fixtures.js";

export const LONG_RUN = "run-long";
const TOOLS = ["read_file", "ls", "grep", "glob"] as const;

/** The events of turn `i` (0-based), seqs from `seq0` + 1; the run's metadata and prompt come first (turn -1). */
export function turnEvents(i: number, seq0: number): JournalEvent[] {
  let seq = seq0;
  const ev = (event: string, data: unknown): JournalEvent => ({ run_id: LONG_RUN, thread_id: T, seq: ++seq, event, data } as JournalEvent);
  if (i < 0) {
    return [
      ev("metadata", { run_id: LONG_RUN, thread_id: T, model: "m", sandbox: "local" }),
      ev("updates", { before_agent: { messages: [{ type: "human", id: "prompt", content: "Go through every file." }] } }),
    ];
  }
  const tool = TOOLS[i % TOOLS.length]!;
  const args = { description: `step ${i}`, path: `/mnt/user-data/workspace/src/file-${i}.ts` };
  const text = JSON.stringify(args);
  const id = `call_${i}`;
  const result = `contents of file-${i}.ts\n`.repeat(3);
  const chunk = (extra: object) => ev("messages", [{ type: "ai", id: `ai-${i}`, content: "", node: "model_request", ...extra }]);
  return [
    chunk({ tool_call_chunks: [{ index: 0, id, name: tool }] }),
    chunk({ tool_call_chunks: [{ index: 0, args: text.slice(0, 24) }] }),
    chunk({ tool_call_chunks: [{ index: 0, args: text.slice(24) }] }),
    ev("updates", { model_request: { messages: [{ type: "ai", id: `ai-${i}`, content: "", tool_calls: [{ id, name: tool, args }] }] } }),
    ev("values", { message_count: 2 * i + 2, artifacts: [], viewed_images: {} }),
    ev("messages", [{ type: "tool", id: `tool-${i}`, tool_call_id: id, name: tool, content: result }]),
    ev("updates", { tools: { messages: [{ type: "tool", id: `tool-${i}`, tool_call_id: id, name: tool, content: result }] } }),
    ev("values", { message_count: 2 * i + 3, artifacts: [], viewed_images: {} }),
  ];
}

/** Turns [-1, turns): the whole run's journal, turn by turn. */
export function longRun(turns: number): JournalEvent[][] {
  const out: JournalEvent[][] = [];
  let seq = 0;
  for (let i = -1; i < turns; i++) {
    const evs = turnEvents(i, seq);
    seq += evs.length;
    out.push(evs);
  }
  return out;
}
