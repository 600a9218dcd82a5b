// Every reducer rule DeerFlow pins in test_thread_state_reducers.py (reference §12.2 A1), plus the
// parallel-merge behaviour through a real LangGraph superstep.
import { test } from "node:test";
import assert from "node:assert/strict";
import { StateGraph, START, END, Send } from "@langchain/langgraph";
import { ConflictingSandboxError, mergeArtifacts, mergeSandbox, mergeTodos, mergeViewedImages } from "../../../extension/harness/state/reducers.js";
import type { Todo, ViewedImage } from "../../../extension/harness/state/reducers.js";
import { ThreadStateSchema } from "../../../extension/harness/state/threadState.js";

const img = (sha256: string): ViewedImage => ({ mime_type: "image/png", size: 3, sha256 });

test("mergeSandbox: None keeps, unset adopts, same id keeps, different ids raise", () => {
  const existing = { sandbox_id: "a" };
  assert.equal(mergeSandbox(existing, null), existing);
  assert.equal(mergeSandbox(existing, undefined), existing);
  assert.deepEqual(mergeSandbox(null, { sandbox_id: "b" }), { sandbox_id: "b" });
  assert.equal(mergeSandbox(existing, { sandbox_id: "a" }), existing);
  const empty = {};
  assert.equal(mergeSandbox(empty, { sandbox_id: null }), empty, "both ids absent is the same id");
  assert.deepEqual(mergeSandbox({ sandbox_id: null }, { sandbox_id: "c" }), { sandbox_id: "c" });
  assert.throws(() => mergeSandbox(existing, { sandbox_id: "b" }), (e: unknown) => {
    assert.ok(e instanceof ConflictingSandboxError);
    assert.match(e.message, /Conflicting sandbox state updates/);
    return true;
  });
});

test("mergeArtifacts: ordered de-duplicating union; None keeps", () => {
  assert.deepEqual(mergeArtifacts(["a", "b"], ["b", "c"]), ["a", "b", "c"]);
  assert.deepEqual(mergeArtifacts(["a"], null), ["a"]);
  assert.deepEqual(mergeArtifacts(["a"], undefined), ["a"]);
  assert.deepEqual(mergeArtifacts(null, ["a"]), ["a"]);
  assert.deepEqual(mergeArtifacts(null, null), []);
  assert.deepEqual(mergeArtifacts([], ["x", "x", "y"]), ["x", "y"]);
  assert.deepEqual(mergeArtifacts(["c", "a"], ["a", "b", "c"]), ["c", "a", "b"], "first occurrence keeps its place");
  const a = ["a", "b"];
  assert.deepEqual(mergeArtifacts(mergeArtifacts(a, ["b"]), ["b"]), ["a", "b"], "idempotent");
});

test("mergeViewedImages: merge by path, newer wins, {} clears, None keeps", () => {
  const k1 = { "/mnt/user-data/uploads/k1.png": img("1") };
  const k2 = { "/mnt/user-data/uploads/k2.png": img("2") };
  assert.deepEqual(Object.keys(mergeViewedImages(k1, k2)).sort(), ["/mnt/user-data/uploads/k1.png", "/mnt/user-data/uploads/k2.png"]);
  assert.deepEqual(mergeViewedImages(k1, {}), {});
  assert.deepEqual(mergeViewedImages(k1, null), k1);
  assert.deepEqual(mergeViewedImages(null, k2), k2);
  assert.deepEqual(mergeViewedImages(k1, { "/mnt/user-data/uploads/k1.png": img("new") }), { "/mnt/user-data/uploads/k1.png": img("new") });
});

test("mergeTodos: None keeps, [] clears, a list replaces", () => {
  const existing: Todo[] = [{ content: "a", status: "pending" }];
  assert.equal(mergeTodos(existing, null), existing);
  assert.equal(mergeTodos(existing, undefined), existing);
  assert.equal(mergeTodos(null, null), null);
  assert.deepEqual(mergeTodos(existing, []), []);
  const next: Todo[] = [{ content: "b", status: "completed" }];
  assert.equal(mergeTodos(existing, next), next);
});

// A graph whose fan-out sends two parallel tasks that write the same channels in one superstep:
// what two parallel tool calls do inside createAgent.
function parallelGraph(writes: Array<Record<string, unknown>>) {
  return new StateGraph(ThreadStateSchema)
    .addNode("fanout", () => ({}))
    .addNode("writer", (s: { idx?: number }) => writes[(s as { idx: number }).idx] ?? {})
    .addEdge(START, "fanout")
    .addConditionalEdges("fanout", () => writes.map((_, idx) => new Send("writer", { idx })), ["writer"])
    .addEdge("writer", END)
    .compile();
}

test("parallel updates in one superstep: artifacts and viewed_images lose nothing, in task order", async () => {
  const graph = parallelGraph([
    { artifacts: ["/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/shared.png"], viewed_images: { "/mnt/user-data/uploads/1.png": img("1") } },
    { artifacts: ["/mnt/user-data/outputs/shared.png", "/mnt/user-data/outputs/b.md"], viewed_images: { "/mnt/user-data/uploads/2.png": img("2") } },
  ]);
  const out = await graph.invoke({ artifacts: ["/mnt/user-data/outputs/old.md"] });
  assert.deepEqual(out.artifacts, [
    "/mnt/user-data/outputs/old.md",
    "/mnt/user-data/outputs/a.md",
    "/mnt/user-data/outputs/shared.png",
    "/mnt/user-data/outputs/b.md",
  ]);
  assert.deepEqual(Object.keys(out.viewed_images).sort(), ["/mnt/user-data/uploads/1.png", "/mnt/user-data/uploads/2.png"]);
});

test("parallel updates: the same sandbox id twice is fine, two different ids are an error", async () => {
  const same = await parallelGraph([{ sandbox: { sandbox_id: "local:default:t" } }, { sandbox: { sandbox_id: "local:default:t" } }]).invoke({});
  assert.deepEqual(same.sandbox, { sandbox_id: "local:default:t" });
  await assert.rejects(
    parallelGraph([{ sandbox: { sandbox_id: "one" } }, { sandbox: { sandbox_id: "two" } }]).invoke({}),
    /Conflicting sandbox state updates/,
  );
});

test("parallel updates: todos absent in one task keep the other's list; title is single-writer", async () => {
  const todos: Todo[] = [{ content: "x", status: "in_progress" }];
  const out = await parallelGraph([{ todos }, {}]).invoke({});
  assert.deepEqual(out.todos, todos);
  await assert.rejects(parallelGraph([{ title: "a" }, { title: "b" }]).invoke({}), /one value per step|INVALID_CONCURRENT_GRAPH_UPDATE/i);
});
