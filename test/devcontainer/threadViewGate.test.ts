// The per-thread view gate alone (no engine): same-thread commands share the view, another
// thread waits for them and is let in after one switch, FIFO by thread, aborts while waiting.
import { strict as assert } from "node:assert";
import { test } from "node:test";
import { ThreadViewGate } from "../../extension/harness/sandbox/devcontainer/threadViewGate.js";

function gate() {
  const installs: string[] = [];
  let generation = 1;
  const g = new ThreadViewGate(
    (threadId) => {
      installs.push(threadId);
      return Promise.resolve();
    },
    () => generation,
  );
  return { g, installs, bump: () => generation++ };
}

test("commands of one thread run together; the view is installed once", async () => {
  const { g, installs } = gate();
  await Promise.all([g.enter("a"), g.enter("a"), g.enter("a")]);
  assert.deepEqual(installs, ["a"]);
  g.leave();
  g.leave();
  g.leave();
  await g.enter("a");
  g.leave();
  assert.deepEqual(installs, ["a"]);
});

test("another thread waits until the first thread's commands have left, then switches once", async () => {
  const { g, installs } = gate();
  await g.enter("a");
  const order: string[] = [];
  const b1 = g.enter("b").then(() => order.push("b1"));
  const b2 = g.enter("b").then(() => order.push("b2"));
  // A later command of "a" queues behind "b": nobody starves.
  const a2 = g.enter("a").then(() => order.push("a2"));
  await Promise.resolve();
  assert.deepEqual(order, []);
  g.leave();
  await Promise.all([b1, b2]);
  assert.deepEqual(order, ["b1", "b2"]);
  g.leave();
  g.leave();
  await a2;
  assert.deepEqual(order, ["b1", "b2", "a2"]);
  assert.deepEqual(installs, ["a", "b", "a"]);
  g.leave();
});

test("a new container generation installs the view again for the same thread", async () => {
  const { g, installs, bump } = gate();
  await g.enter("a");
  g.leave();
  bump();
  await g.enter("a");
  g.leave();
  assert.deepEqual(installs, ["a", "a"]);
});

test("an abort while waiting rejects with the reason and lets the next thread in", async () => {
  const { g } = gate();
  await g.enter("a");
  const controller = new AbortController();
  const b = g.enter("b", controller.signal);
  const c = g.enter("c");
  controller.abort(new Error("cancelled"));
  await assert.rejects(b, /cancelled/);
  g.leave();
  await c;
  g.leave();
});

test("a failed install is not remembered: the next entrant tries again", async () => {
  let fail = true;
  const installs: string[] = [];
  const g = new ThreadViewGate(
    (threadId) => {
      installs.push(threadId);
      return fail ? Promise.reject(new Error("exec failed")) : Promise.resolve();
    },
    () => 1,
  );
  await assert.rejects(g.enter("a"), /exec failed/);
  fail = false;
  await g.enter("a");
  g.leave();
  assert.deepEqual(installs, ["a", "a"]);
});
