// What makes LinearSqliteSaver linear, pinned down: old messages are never re-serialized, storage
// holds each message once, and its in-memory cache can never write a wrong reference.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, BaseMessage, HumanMessage } from "@langchain/core/messages";
import { JsonPlusSerializer, TASKS, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { unpackCheckpointRow, type PackedRow } from "../../../extension/harness/store/skeletonCodec.js";
import { dictionaryIn } from "./agentFixture.js";
import { openDatabase } from "../../../extension/harness/store/db.js";
import type { Db } from "../../../extension/harness/store/sqlite/types.js";
import { LinearSqliteSaver } from "../../../extension/harness/store/checkpointer.js";

/** counts how many messages pass through the serializer */
class CountingSerde extends JsonPlusSerializer {
  messages = 0;
  revived = 0;
  override async dumpsTyped(obj: unknown): Promise<[string, Uint8Array]> {
    if (BaseMessage.isInstance(obj)) this.messages++;
    return super.dumpsTyped(obj);
  }
  override async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    const value: unknown = await super.loadsTyped(type, data);
    if (BaseMessage.isInstance(value)) this.revived++;
    return value;
  }
}

let n = 0;
const checkpoint = (messages: BaseMessage[], extra: Record<string, unknown> = {}): Checkpoint => ({
  v: 4,
  id: `1f0c0000-0000-6000-8000-${String(++n).padStart(12, "0")}`,
  ts: new Date().toISOString(),
  channel_values: { messages, ...extra },
  channel_versions: { messages: n },
  versions_seen: {},
});
const meta = { source: "loop" as const, step: 0, parents: {} };

describe("LinearSqliteSaver internals", () => {
  let dir: string;
  let file: string;
  const dbs: Db[] = [];
  const open = () => {
    const db = openDatabase(file);
    dbs.push(db);
    return db;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "deerflow-cache-"));
    file = join(dir, "h.db");
  });
  after(() => {
    for (const db of dbs) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serializes each message once while a thread grows, also after a restart, and stores one range per checkpoint", async () => {
    const serde = new CountingSerde();
    const saver = new LinearSqliteSaver(open(), serde);
    const messages: BaseMessage[] = [];
    let config = { configurable: { thread_id: "grow" } } as Record<string, any>;
    for (let i = 0; i < 60; i++) {
      messages.push(i % 2 ? new AIMessage({ id: `m${i}`, content: `answer ${i}` }) : new HumanMessage({ id: `m${i}`, content: `question ${i}` }));
      // each turn: several checkpoints of the same list, like createAgent's hook nodes
      for (let k = 0; k < 3; k++) config = await saver.put(config, checkpoint([...messages], { todos: ["a", "b"] }), meta, {});
    }
    assert.equal(serde.messages, 60);
    const db = dbs[0]!;
    assert.equal((db.prepare("SELECT count(*) n FROM checkpoint_messages").get() as any).n, 60);
    const rows = db.prepare("SELECT type, checkpoint, channel_refs FROM checkpoints WHERE thread_id = 'grow'").all() as PackedRow[];
    for (const r of rows) assert.equal((JSON.parse(unpackCheckpointRow(r, dictionaryIn(db)).refsJson) as { messages: { m: unknown[] } }).messages.m.length, 1);
    assert.equal((db.prepare("SELECT count(*) n FROM checkpoint_values WHERE type <> 'zdict'").get() as any).n, 0, "a small list is inlined");

    // a new process: getTuple registers the revived objects, so the next put serializes only the new message
    const serde2 = new CountingSerde();
    const saver2 = new LinearSqliteSaver(open(), serde2);
    const tuple = await saver2.getTuple({ configurable: { thread_id: "grow" } });
    const restored = tuple!.checkpoint.channel_values.messages as BaseMessage[];
    assert.equal(restored.length, 60);
    await saver2.put(tuple!.config, checkpoint([...restored, new HumanMessage({ id: "new", content: "more" })]), meta, {});
    assert.equal(serde2.messages, 1);
    assert.equal((db.prepare("SELECT count(*) n FROM checkpoint_messages").get() as any).n, 61);

    // reads deserialize each stored message once; a returned object modified by a caller is read again
    assert.equal(serde2.revived, 60);
    const again = (await saver2.getTuple({ configurable: { thread_id: "grow" } }))!.checkpoint.channel_values.messages as BaseMessage[];
    assert.equal(again.length, 61);
    assert.equal(serde2.revived, 61);
    again[0]!.content = "scribbled";
    const third = (await saver2.getTuple({ configurable: { thread_id: "grow" } }))!.checkpoint.channel_values.messages as BaseMessage[];
    assert.equal(third[0]!.text, "question 0");
    assert.equal(serde2.revived, 62);
  });

  it("notices a message field reassigned after it was stored", async () => {
    const saver = new LinearSqliteSaver(open());
    const m = new AIMessage({ id: "x", content: "original" });
    const c1 = await saver.put({ configurable: { thread_id: "mut" } }, checkpoint([m]), meta, {});
    m.content = "changed";
    const c2 = await saver.put(c1, checkpoint([m]), meta, {});
    const read = async (c: typeof c1) => ((await saver.getTuple(c))!.checkpoint.channel_values.messages as BaseMessage[])[0]!.text;
    assert.equal(await read(c1), "original");
    assert.equal(await read(c2), "changed");
  });

  it("never reuses a cached reference after another connection deleted and recreated the thread", async () => {
    const a = new LinearSqliteSaver(open());
    const b = new LinearSqliteSaver(open());
    const m1 = new HumanMessage({ id: "m1", content: "one" });
    const m2 = new AIMessage({ id: "m2", content: "two" });
    const big = { notes: "n".repeat(500) };
    const ca = await a.put({ configurable: { thread_id: "shared" } }, checkpoint([m1, m2], { big }), meta, {});

    await b.deleteThread("shared");
    const other = [1, 2, 3].map((i) => new HumanMessage({ id: `x${i}`, content: `other ${i}` }));
    const cb = await b.put({ configurable: { thread_id: "shared" } }, checkpoint(other), meta, {});

    const m3 = new HumanMessage({ id: "m3", content: "three" });
    const ca2 = await a.put(ca, checkpoint([m1, m2, m3], { big }), meta, {});
    const texts = async (c: typeof ca) => ((await b.getTuple(c))!.checkpoint.channel_values.messages as BaseMessage[]).map((m) => m.text);
    assert.deepEqual(await texts(ca2), ["one", "two", "three"]);
    assert.deepEqual(await texts(cb), ["other 1", "other 2", "other 3"]);
    assert.deepEqual((await b.getTuple(ca2))!.checkpoint.channel_values.big, big);
  });

  it("a pending Send packet that carries the state (the tools node's input) stores its messages by reference, as checkpoint value and as write", async () => {
    const serde = new CountingSerde();
    const saver = new LinearSqliteSaver(open(), serde);
    const messages: BaseMessage[] = [];
    let config = { configurable: { thread_id: "sends" } } as Record<string, any>;
    for (let i = 0; i < 80; i++) {
      messages.push(i % 2 ? new AIMessage({ id: `s${i}`, content: `call ${i}`.repeat(20) }) : new HumanMessage({ id: `s${i}`, content: `result ${i}`.repeat(20) }));
      const packet = { node: "tools", args: { messages: [...messages], lg_tool_call: { id: `c${i}`, name: "ls", args: { path: `/d${i}` } }, todos: ["a"] } };
      config = await saver.put(config, checkpoint([...messages], { [TASKS]: [packet] }), meta, {});
      await saver.putWrites(config, [[TASKS, packet]], `task${i}`);
    }
    assert.equal(serde.messages, 80, "each message serialized once, although 80 packets carried the whole list");
    const db = dbs.at(-1)!;
    const valueBytes = (db.prepare("SELECT COALESCE(SUM(LENGTH(value)), 0) b FROM checkpoint_values WHERE thread_id = 'sends'").get() as any).b as number;
    const writeBytes = (db.prepare("SELECT COALESCE(SUM(LENGTH(value)), 0) b FROM checkpoint_writes WHERE thread_id = 'sends'").get() as any).b as number;
    // Plain JSON of the packets would hold the history once per turn: ~80 × 40 × 200 B ≈ 640 kB.
    assert.ok(valueBytes + writeBytes < 40_000, `stored ${valueBytes} + ${writeBytes} bytes for 80 packets`);

    const saver2 = new LinearSqliteSaver(open());
    const tuple = (await saver2.getTuple({ configurable: { thread_id: "sends" } }))!;
    const [sent] = tuple.checkpoint.channel_values[TASKS] as Array<{ node: string; args: { messages: BaseMessage[]; lg_tool_call: { id: string }; todos: string[] } }>;
    assert.equal(sent!.node, "tools");
    assert.equal(sent!.args.messages.length, 80);
    assert.ok(sent!.args.messages.every((m, i) => BaseMessage.isInstance(m) && m.id === `s${i}`));
    assert.deepEqual(sent!.args.lg_tool_call, { id: "c79", name: "ls", args: { path: "/d79" } });
    assert.deepEqual(sent!.args.todos, ["a"]);
    const [write] = tuple.pendingWrites!;
    assert.equal(write![1], TASKS);
    const w = write![2] as typeof sent;
    assert.equal(w!.node, "tools");
    assert.equal(w!.args.messages.length, 80);
    assert.equal(w!.args.lg_tool_call.id, "c79");
  });

});
