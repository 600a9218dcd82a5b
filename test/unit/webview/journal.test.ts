// The reducer over a real journal: the events `npm run demo` produced (scripted model; the
// thread_data host paths stripped), replayed whole, in halves, and twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { initialState, reduce, runPhase } from "../../../webview/store.js";
import type { PanelState } from "../../../webview/store.js";
import type { JournalEvent } from "../../../extension/protocol/rpc.js";
import { parseHostMessage } from "../../../webview/model/guard.js";

const journal = readFileSync(new URL("./demo-journal.jsonl", import.meta.url), "utf8")
  .trim().split("\n").map((l) => JSON.parse(l) as JournalEvent);
const threadId = journal[0]!.thread_id;
const state = { type: "state", state: { thread_id: threadId, title: null, messages: [], artifacts: [], todos: null, viewed_images: [], uploaded_files: [], last_seq: 0 } };

function feed(s: PanelState, raw: unknown): PanelState {
  const m = parseHostMessage(raw, () => assert.fail("the real journal must validate"));
  return m ? reduce(s, m) : s;
}

function summary(s: PanelState) {
  return s.thread!.messages.map((m) => ({
    role: m.role,
    text: m.text,
    calls: m.toolCalls.map((c) => `${c.name}→${c.result?.status ?? "pending"}`),
  }));
}

const expected = [
  { role: "human", text: "Read this project and write a short summary to /mnt/user-data/outputs/summary.md, then present it.", calls: [] },
  { role: "ai", text: "Let me look at the project first.", calls: ["ls→success"] },
  { role: "ai", text: "", calls: ["read_file→success"] },
  { role: "ai", text: "", calls: ["write_file→success"] },
  { role: "ai", text: "", calls: ["present_files→success"] },
  { role: "ai", text: "I wrote a summary of the project to summary.md and presented it.", calls: [] },
];

test("the demo run's journal renders as six messages with paired tool calls, the artifact and the title", () => {
  const s = feed(feed(initialState, state), { type: "events", threadId, events: journal });
  assert.deepEqual(summary(s), expected);
  assert.deepEqual(s.thread!.artifacts, [{ path: "/mnt/user-data/outputs/summary.md", exists: true }]);
  assert.match(s.thread!.title ?? "", /^Read this project/);
  assert.equal(runPhase(s), "success");
  assert.equal(s.thread!.lastSeq, journal.at(-1)!.seq);
  assert.ok(s.thread!.messages.every((m) => !m.streaming));
});

test("the same journal in small batches, then replayed again from the start, gives the same view", () => {
  let s = feed(initialState, state);
  for (let i = 0; i < journal.length; i += 7) s = feed(s, { type: "events", threadId, events: journal.slice(i, i + 7) });
  const once = s;
  s = feed(s, { type: "events", threadId, events: journal });
  assert.equal(s, once);
  assert.deepEqual(summary(s), expected);
});

test("mid-stream: after the first chunks only, the AI message is streaming with the text so far", () => {
  const cut = journal.findIndex((e) => e.event === "messages" && (e.data[0]?.content ?? "") === "look ");
  const s = feed(feed(initialState, state), { type: "events", threadId, events: journal.slice(0, cut + 1) });
  const last = s.thread!.messages.at(-1)!;
  assert.equal(last.streaming, true);
  assert.equal(last.text, "Let me look ");
  assert.equal(runPhase(s), "running");
});
