import { test } from "node:test";
import assert from "node:assert/strict";
import { parseHostMessage } from "../../../webview/model/guard.js";
import { initialState, reduce } from "../../../webview/store.js";

test("malformed host messages are dropped with a warning, never thrown", () => {
  const warnings: string[] = [];
  const warn = (m: string): void => void warnings.push(m);
  for (const raw of [null, 42, "x", {}, { type: 7 }, { type: "nope" }, { type: "init", threads: "x" }, { type: "state", state: { thread_id: 1 } },
    { type: "events" }, { type: "image", sha256: "a" }, { type: "threads", threads: [{ thread_id: "t" }], threadId: null }]) {
    assert.equal(parseHostMessage(raw, warn), null);
  }
  assert.equal(warnings.length, 11);
});

test("a batch keeps its good events and drops the bad ones", () => {
  const warnings: unknown[] = [];
  const m = parseHostMessage({
    type: "events",
    threadId: "t",
    events: [
      { seq: 1, event: "messages", run_id: "r", thread_id: "t", data: [{ type: "ai", id: "a", content: "x" }] },
      { seq: "2", event: "messages", data: [] },
      { seq: 3, event: "bogus", data: {} },
      { seq: 4, event: "end", data: {} },
      { seq: 5, event: "values", run_id: "r", thread_id: "t", data: { message_count: 1, title: "ok" } },
    ],
  }, (w) => void warnings.push(w));
  assert.ok(m && m.type === "events");
  assert.deepEqual(m.events.map((e) => e.seq), [1, 5]);
  assert.equal(warnings.length, 3);
});

test("odd payloads inside well-formed events do not crash the reducer", () => {
  const s = reduce(
    reduce(initialState, { type: "state", state: { thread_id: "t", title: null, messages: [], artifacts: [], todos: null, viewed_images: [], uploaded_files: [], last_seq: 0 } }),
    parseHostMessage({
      type: "events",
      threadId: "t",
      events: [
        { seq: 1, event: "messages", run_id: "r", thread_id: "t", data: [null, 5, { type: "ai" }, { type: "ai", id: "a", content: 3 }] },
        { seq: 2, event: "updates", run_id: "r", thread_id: "t", data: { n: null, m: { messages: [null, { type: "ai" }, { type: "tool", content: "x" }] } } },
        { seq: 3, event: "values", run_id: "r", thread_id: "t", data: { artifacts: [1, "/a"], viewed_images: { "/p": null }, todos: "x", uploaded_files: [null] } },
        { seq: 4, event: "custom", run_id: "r", thread_id: "t", data: { type: "llm_retry" } },
      ],
    }, () => {})!,
  );
  assert.equal(s.thread?.lastSeq, 4);
  assert.deepEqual(s.thread?.artifacts.map((a) => a.path), ["/a"]);
  assert.equal(s.thread?.todos, null);
});

test("skills: a well-formed list reaches the store; one with a missing field is dropped", () => {
  const skill = { name: "brand-guidelines", scope: "project", description: "d", enabled: true, user_invocable: true, problems: 0 };
  const m = parseHostMessage({ type: "skills", skills: [skill] }, () => undefined);
  assert.ok(m);
  assert.deepEqual(reduce(initialState, m).skills, [skill]);
  const { enabled: _dropped, ...partial } = skill;
  assert.equal(parseHostMessage({ type: "skills", skills: [partial] }, () => undefined), null);
});

test("mcpServers: a well-formed list reaches the store; a server without its tools is dropped", () => {
  const server = { name: "everything", source: "the data directory's extensions_config.json", scope: "user", state: "ready", tools: [{ name: "everything_echo", tool: "echo", description: "Echoes" }] };
  const m = parseHostMessage({ type: "mcpServers", servers: [server, { ...server, name: "ws", scope: "workspace", state: "error", reason: "spawn npx ENOENT", tools: [] }] }, () => undefined);
  assert.ok(m);
  assert.deepEqual(reduce(initialState, m).mcpServers.map((s) => [s.name, s.state, s.tools.length]), [["everything", "ready", 1], ["ws", "error", 0]]);
  const { tools: _dropped, ...partial } = server;
  assert.equal(parseHostMessage({ type: "mcpServers", servers: [partial] }, () => undefined), null);
  assert.equal(parseHostMessage({ type: "mcpServers", servers: [{ ...server, reason: 42 }] }, () => undefined), null);
});
