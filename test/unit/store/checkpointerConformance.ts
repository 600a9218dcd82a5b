/**
 * A conformance suite for LangGraph checkpointers, in the spirit of
 * @langchain/langgraph-checkpoint-validation, on node:test. Every backend we ship runs it, and so
 * does the stock SqliteSaver, which proves the suite asserts LangGraph's contract and not our
 * implementation's quirks. A backend that legitimately differs declares it in `capabilities`;
 * each such difference still runs a (weaker) assertion, nothing is skipped.
 */
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  ERROR,
  INTERRUPT,
  JsonPlusSerializer,
  TASKS,
  emptyCheckpoint,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Send } from "@langchain/langgraph";

export interface SaverHandle {
  saver: BaseCheckpointSaver;
  /** a new saver instance on the same storage (a process restart) */
  reopen(): BaseCheckpointSaver;
  close(): void | Promise<void>;
}

export interface ConformanceCapabilities {
  /** pendingWrites come back in writesSortKey order (task_path, task_id, idx). The stock SqliteSaver ignores task paths. */
  orderedPendingWrites: boolean;
}

let seq = 0;
/** Increasing, unique checkpoint ids (LangGraph uses time-ordered uuid6; ordering is all savers rely on). */
const nextId = () => `1f0c0000-0000-6000-8000-${String(++seq).padStart(12, "0")}`;
let threadSeq = 0;
const nextThread = () => `thread-${process.pid}-${++threadSeq}`;

const serde = new JsonPlusSerializer();
/** Compares values the way a saver must preserve them: identical serialized form. */
async function canonical(value: unknown): Promise<unknown> {
  const [, bytes] = await serde.dumpsTyped(value);
  return JSON.parse(new TextDecoder().decode(bytes));
}
async function assertSameValue(actual: unknown, expected: unknown, message?: string) {
  assert.deepEqual(await canonical(actual), await canonical(expected), message);
}

function makeCheckpoint(values: Record<string, unknown> = {}, versions?: Record<string, number>, v = 4): Checkpoint {
  return {
    v,
    id: nextId(),
    ts: new Date().toISOString(),
    channel_values: values,
    channel_versions: versions ?? Object.fromEntries(Object.keys(values).map((k) => [k, 1])),
    versions_seen: { "": { someChannel: 1 }, agent: { messages: 2 } },
  };
}
const meta = (source: CheckpointMetadata["source"], step: number, extra: Record<string, unknown> = {}): CheckpointMetadata =>
  ({ source, step, parents: {}, ...extra });
const cfg = (thread_id: string, checkpoint_ns = "", checkpoint_id?: string): RunnableConfig => ({
  configurable: { thread_id, checkpoint_ns, ...(checkpoint_id ? { checkpoint_id } : {}) },
});

async function toArray<T>(gen: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

export function runCheckpointerConformance(name: string, factory: () => SaverHandle | Promise<SaverHandle>, capabilities: ConformanceCapabilities): void {
  describe(`checkpointer conformance: ${name}`, () => {
    let h: SaverHandle;
    before(async () => {
      h = await factory();
    });
    after(async () => {
      await h.close();
    });

    for (const ns of ["", "child"]) {
      describe(`namespace "${ns}"`, () => {
        it("put returns a config with exactly thread_id, checkpoint_ns and checkpoint_id, and getTuple returns the checkpoint unaltered", async () => {
          const thread = nextThread();
          const checkpoint = makeCheckpoint({ animals: ["dog"], counter: 3, nothing: null });
          const metadata = meta("input", -1, { writes: null, nested: { a: [1, "two"] } });
          const returned = await h.saver.put({ configurable: { thread_id: thread, checkpoint_ns: ns, canary: "tweet" } }, checkpoint, metadata, {});
          assert.deepEqual(returned, cfg(thread, ns, checkpoint.id));
          const tuple = await h.saver.getTuple(returned);
          assert.ok(tuple);
          assert.deepEqual(tuple.checkpoint, checkpoint);
          assert.deepEqual(tuple.metadata, metadata);
          assert.deepEqual(tuple.config, cfg(thread, ns, checkpoint.id));
          assert.equal(tuple.parentConfig, undefined);
          assert.deepEqual(tuple.pendingWrites, []);
        });

        it("links a child to its parent, returns the latest without checkpoint_id, and keeps writes per checkpoint", async () => {
          const thread = nextThread();
          const parent = makeCheckpoint({ animals: ["dog"] });
          const parentConfig = await h.saver.put(cfg(thread, ns), parent, meta("input", -1), { animals: 1 });
          await h.saver.putWrites(parentConfig, [[TASKS, ["add_fish"]]], "pending_sends_task");
          const child = makeCheckpoint({ animals: ["dog", "fish"] }, { animals: 2 });
          const childConfig = await h.saver.put(parentConfig, child, meta("loop", 0, { parents: { [ns]: parent.id } }), { animals: 2 });
          await h.saver.putWrites(childConfig, [["animals", ["dog", "fish"]]], "add_fish");

          const p = await h.saver.getTuple(parentConfig);
          assert.deepEqual(p?.pendingWrites, [["pending_sends_task", TASKS, ["add_fish"]]]);
          const c = await h.saver.getTuple(childConfig);
          assert.deepEqual(c?.checkpoint, child);
          assert.deepEqual(c?.parentConfig, cfg(thread, ns, parent.id));
          assert.deepEqual(c?.pendingWrites, [["add_fish", "animals", ["dog", "fish"]]]);
          const latest = await h.saver.getTuple(cfg(thread, ns));
          assert.deepEqual(latest?.config, cfg(thread, ns, child.id));
          assert.deepEqual(latest?.checkpoint, child);
          assert.deepEqual(latest?.parentConfig, cfg(thread, ns, parent.id));
        });

        it("reconstructs channels carried over from an ancestor (absent from newVersions)", async () => {
          const thread = nextThread();
          const parent = makeCheckpoint({ messages: ["hi"], stepCount: 1 });
          const pc = await h.saver.put(cfg(thread, ns), parent, meta("loop", 0), { messages: 1, stepCount: 1 });
          const child = makeCheckpoint({ messages: ["hi"], stepCount: 3 }, { messages: 1, stepCount: 2 });
          const cc = await h.saver.put(pc, child, meta("loop", 1), { stepCount: 2 });
          assert.deepEqual((await h.saver.getTuple(cc))?.checkpoint.channel_values, { messages: ["hi"], stepCount: 3 });
          assert.deepEqual((await h.saver.getTuple(cfg(thread, ns)))?.checkpoint.channel_values, { messages: ["hi"], stepCount: 3 });
        });

        it("returns undefined for an unknown checkpoint or thread, and for a config without thread_id", async () => {
          assert.equal(await h.saver.getTuple(cfg(nextThread(), ns, nextId())), undefined);
          assert.equal(await h.saver.getTuple(cfg(nextThread(), ns)), undefined);
          assert.equal(await h.saver.getTuple({ configurable: { checkpoint_ns: ns } }), undefined);
        });

        it("rejects put without configurable or thread_id, and putWrites without thread_id or checkpoint_id", async () => {
          const thread = nextThread();
          await assert.rejects(h.saver.put({}, makeCheckpoint(), meta("input", -1), {}));
          await assert.rejects(h.saver.put({ configurable: { checkpoint_ns: ns } }, makeCheckpoint(), meta("input", -1), {}));
          await assert.rejects(h.saver.putWrites({ configurable: { checkpoint_ns: ns, checkpoint_id: nextId() } }, [["a", 1]], "t"));
          await assert.rejects(h.saver.putWrites({ configurable: { thread_id: thread, checkpoint_ns: ns } }, [["a", 1]], "t"));
        });
      });
    }

    it("defaults checkpoint_ns to the empty namespace", async () => {
      const thread = nextThread();
      const returned = await h.saver.put({ configurable: { thread_id: thread } }, makeCheckpoint(), meta("input", -1), {});
      assert.equal(returned.configurable?.checkpoint_ns, "");
      assert.ok(await h.saver.getTuple(cfg(thread, "")));
    });

    it("keeps namespaces of one thread apart", async () => {
      const thread = nextThread();
      const root = makeCheckpoint({ who: "root" });
      const sub = makeCheckpoint({ who: "sub" });
      await h.saver.put(cfg(thread, ""), root, meta("loop", 0), {});
      await h.saver.put(cfg(thread, "sub:1"), sub, meta("loop", 0), {});
      assert.equal((await h.saver.getTuple(cfg(thread, "")))?.checkpoint.id, root.id);
      assert.equal((await h.saver.getTuple(cfg(thread, "sub:1")))?.checkpoint.id, sub.id);
    });

    it("putWrites: regular writes are idempotent (first wins), special writes replace", async () => {
      const thread = nextThread();
      const c = await h.saver.put(cfg(thread), makeCheckpoint(), meta("loop", 0), {});
      await h.saver.putWrites(c, [["animals", "dog"]], "task");
      await h.saver.putWrites(c, [["animals", "cat"]], "task");
      await h.saver.putWrites(c, [[ERROR, { message: "first" }]], "task");
      await h.saver.putWrites(c, [[ERROR, { message: "second" }]], "task");
      await h.saver.putWrites(c, [[INTERRUPT, [{ value: "ask", id: "i1" }]]], "task");
      const writes = (await h.saver.getTuple(c))?.pendingWrites ?? [];
      const byChannel = Object.fromEntries(writes.map(([, ch, v]) => [ch, v]));
      assert.equal(writes.length, 3);
      assert.equal(byChannel.animals, "dog");
      assert.deepEqual(byChannel[ERROR], { message: "second" });
      assert.deepEqual(byChannel[INTERRUPT], [{ value: "ask", id: "i1" }]);
    });

    it(`putWrites: pending writes ${capabilities.orderedPendingWrites ? "come back in writesSortKey order" : "all come back"}`, async () => {
      const thread = nextThread();
      const c = await h.saver.put(cfg(thread), makeCheckpoint(), meta("loop", 0), {});
      await h.saver.putWrites(c, Array.from({ length: 11 }, (_, i): PendingWrite => ["ch", `a${i}`]), "ffffffff-ffff-ffff-ffff-ffffffffffff", "~pull, 02");
      await h.saver.putWrites(c, [["ch", "input"]], "88888888-8888-8888-8888-888888888888");
      await h.saver.putWrites(c, [["ch", "b"]], "00000000-0000-0000-0000-000000000000", "~pull, 01");
      await h.saver.putWrites(c, [["ch", "bmp"]], "99999999-9999-9999-9999-999999999999", "~pull, \uE000");
      await h.saver.putWrites(c, [["ch", "astral"]], "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", "~pull, \uD800\uDC00");
      const got = ((await h.saver.getTuple(c))?.pendingWrites ?? []).map((w) => w[2] as string);
      const expected = ["input", "b", ...Array.from({ length: 11 }, (_, i) => `a${i}`), "bmp", "astral"];
      if (capabilities.orderedPendingWrites) assert.deepEqual(got, expected);
      else assert.deepEqual([...got].sort(), [...expected].sort());
    });

    it("round-trips rich values: messages, bytes, Set/Map, Send, nested undefined, large values, message writes", async () => {
      const thread = nextThread();
      const ai = new AIMessage({ id: "ai-1", content: "calling", tool_calls: [{ id: "call-1", name: "lookup", args: { q: "x" }, type: "tool_call" }] });
      const values = {
        messages: [new HumanMessage({ id: "h-1", content: "hello" }), ai, new ToolMessage({ id: "t-1", content: "found", tool_call_id: "call-1" })],
        bytes: new Uint8Array([1, 2, 3]),
        set: new Set(["a", "b"]),
        map: new Map([["k", { deep: [1, 2] }]]),
        big: "x".repeat(300),
        nested: { a: undefined, b: [null, { c: "d" }] },
        [TASKS]: [new Send("worker", { job: 1 })],
      };
      const checkpoint = makeCheckpoint(values);
      const c = await h.saver.put(cfg(thread), checkpoint, meta("loop", 1), {});
      await h.saver.putWrites(c, [["messages", [new AIMessage({ id: "ai-2", content: "done" })]], ["messages", new HumanMessage({ id: "h-2", content: "single" })], [TASKS, new Send("worker", { job: 2 })]], "task-1", "~pull, model");
      for (const saver of [h.saver, h.reopen()]) {
        const tuple = await saver.getTuple(c);
        assert.ok(tuple);
        await assertSameValue(tuple.checkpoint.channel_values, values);
        assert.ok(tuple.checkpoint.channel_values.bytes instanceof Uint8Array);
        assert.ok(tuple.checkpoint.channel_values.set instanceof Set);
        const msgs = tuple.checkpoint.channel_values.messages as AIMessage[];
        assert.ok(AIMessage.isInstance(msgs[1]));
        assert.deepEqual(msgs[1].tool_calls, ai.tool_calls);
        await assertSameValue(tuple.pendingWrites, [
          ["task-1", "messages", [new AIMessage({ id: "ai-2", content: "done" })]],
          ["task-1", "messages", new HumanMessage({ id: "h-2", content: "single" })],
          ["task-1", TASKS, new Send("worker", { job: 2 })],
        ]);
      }
    });

    it("message lists: append, replace by id and removal round-trip exactly, across a reopen", async () => {
      const thread = nextThread();
      const a = new HumanMessage({ id: "a", content: "first" });
      const b = new AIMessage({ id: "b", content: "second" });
      const c = new HumanMessage({ id: "c", content: "third" });
      const b2 = new AIMessage({ id: "b", content: "second, edited" });
      const d = new AIMessage({ id: "d", content: "fourth" });
      const states = [[a], [a, b], [a, b, c], [a, b2, c], [a, c], [a, c, d], [d], [a, b, c, d]];
      let config = cfg(thread);
      const ids: string[] = [];
      for (const [i, messages] of states.entries()) {
        const ck = makeCheckpoint({ messages }, { messages: i + 1 });
        ids.push(ck.id);
        config = await h.saver.put(config, ck, meta("loop", i), { messages: i + 1 });
      }
      for (const saver of [h.saver, h.reopen()]) {
        for (const [i, messages] of states.entries()) {
          const tuple = await saver.getTuple(cfg(thread, "", ids[i]));
          await assertSameValue(tuple?.checkpoint.channel_values.messages, messages, `state ${i}`);
        }
      }
    });

    it("migrates pending sends of format < 4 checkpoints onto the next checkpoint", async () => {
      const thread = nextThread();
      const c0: Checkpoint = { ...emptyCheckpoint(), v: 1, id: nextId() };
      const config0 = await h.saver.put(cfg(thread), c0, meta("loop", 0), {});
      await h.saver.putWrites(config0, [[TASKS, "send-1"], [TASKS, "send-2"]], "task-1");
      await h.saver.putWrites(config0, [[TASKS, "send-3"]], "task-2");
      const t0 = await h.saver.getTuple(config0);
      assert.deepEqual(t0?.checkpoint.channel_values, {});
      const c1: Checkpoint = { ...emptyCheckpoint(), v: 1, id: nextId() };
      const config1 = await h.saver.put(config0, c1, meta("loop", 1), {});
      const t1 = await h.saver.getTuple(config1);
      assert.deepEqual(t1?.checkpoint.channel_values, { [TASKS]: ["send-1", "send-2", "send-3"] });
      assert.notEqual(t1?.checkpoint.channel_versions[TASKS], undefined);
    });

    describe("list", () => {
      const threads = [nextThread(), nextThread()];
      const stored: CheckpointTuple[] = [];
      before(async () => {
        for (const thread of threads) {
          for (const ns of ["", "child"]) {
            const parent = makeCheckpoint({ animals: ["dog"] });
            const pc = await h.saver.put(cfg(thread, ns), parent, meta("input", -1), {});
            await h.saver.putWrites(pc, [[TASKS, ["add_fish"]]], "pending_sends_task");
            const child = makeCheckpoint({ animals: ["dog", "fish"] }, { animals: 2 });
            const cc = await h.saver.put(pc, child, meta("loop", 0, { parents: { [ns]: parent.id } }), {});
            await h.saver.putWrites(cc, [["animals", ["dog", "fish"]]], "add_fish");
            stored.push((await h.saver.getTuple(pc))!, (await h.saver.getTuple(cc))!);
          }
        }
      });

      it("filters by thread_id, checkpoint_ns, before, metadata and limit, newest first", async () => {
        const byId = new Map(stored.map((t) => [t.checkpoint.id, t]));
        const ours = (t: CheckpointTuple) => threads.includes(t.config.configurable?.thread_id as string);
        let cases = 0;
        for (const thread_id of [undefined, threads[0], threads[1], "no-such-thread"]) {
          for (const checkpoint_ns of [undefined, "", "child"]) {
            for (const limit of [undefined, 1, 2]) {
              for (const beforeTuple of [undefined, stored[1], stored[6]]) {
                for (const filter of [undefined, {}, { source: "input" }, { source: "loop" }, { step: 0 }, { parents: {} }]) {
                  const expected = stored
                    .filter(
                      (t) =>
                        (thread_id === undefined || t.config.configurable?.thread_id === thread_id) &&
                        (checkpoint_ns === undefined || t.config.configurable?.checkpoint_ns === checkpoint_ns) &&
                        (beforeTuple === undefined || t.checkpoint.id < beforeTuple.checkpoint.id) &&
                        Object.entries(filter ?? {}).every(([k, v]) => JSON.stringify((t.metadata as Record<string, unknown>)[k]) === JSON.stringify(v)),
                    )
                    .map((t) => t.checkpoint.id)
                    .sort()
                    .reverse();
                  const options = { ...(limit ? { limit } : {}), ...(beforeTuple ? { before: beforeTuple.config } : {}), ...(filter ? { filter } : {}) };
                  // other tests share the database: without a thread_id, look only at our threads
                  let got = await toArray(h.saver.list({ configurable: { thread_id, checkpoint_ns } }, thread_id ? options : { ...options, limit: undefined }));
                  if (!thread_id) got = got.filter(ours).slice(0, limit ?? Infinity);
                  const want = limit ? expected.slice(0, limit) : expected;
                  assert.deepEqual(
                    got.map((t) => t.checkpoint.id),
                    want,
                    JSON.stringify({ thread_id, checkpoint_ns, limit, before: beforeTuple?.checkpoint.id, filter }),
                  );
                  for (const t of got) assert.deepEqual(t, byId.get(t.checkpoint.id));
                  cases++;
                }
              }
            }
          }
        }
        assert.equal(cases, 4 * 3 * 3 * 3 * 6);
      });
    });

    it("deleteThread removes every checkpoint and write of that thread, in all namespaces, and nothing else", async () => {
      const [t1, t2] = [nextThread(), nextThread()];
      for (const t of [t1, t2]) {
        for (const ns of ["", "child"]) {
          const c = await h.saver.put(cfg(t, ns), makeCheckpoint({ messages: [new HumanMessage({ id: `${t}-m`, content: "hi" })] }), meta("update", -1), {});
          await h.saver.putWrites(c, [["x", 1]], "task");
        }
      }
      await h.saver.deleteThread(t1);
      assert.equal(await h.saver.getTuple(cfg(t1, "")), undefined);
      assert.equal(await h.saver.getTuple(cfg(t1, "child")), undefined);
      assert.equal((await toArray(h.saver.list(cfg(t1)))).length, 0);
      const kept = await h.saver.getTuple(cfg(t2, "child"));
      assert.deepEqual(kept?.pendingWrites, [["task", "x", 1]]);
      assert.equal((kept?.checkpoint.channel_values.messages as HumanMessage[])[0]?.content, "hi");
      // a deleted thread id can be reused from scratch
      const fresh = makeCheckpoint({ messages: [new HumanMessage({ id: "new", content: "again" })] });
      await h.saver.put(cfg(t1), fresh, meta("input", -1), {});
      await assertSameValue((await h.saver.getTuple(cfg(t1)))?.checkpoint.channel_values, fresh.channel_values);
    });
  });
}
