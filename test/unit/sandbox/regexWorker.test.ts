// grep's patterns run in a worker thread (sandbox/regexWorker.ts): matches and the limit, a
// deadline that ends a catastrophic pattern with RegexTimeoutError while the event loop keeps
// turning, and an abort that ends it at once; a terminated worker is never reused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setImmediate as nextTurn } from "node:timers/promises";
import { RegexMatcher, RegexTimeoutError } from "../../../extension/harness/sandbox/regexWorker.js";

const CATASTROPHIC = "(a+)+b";
const AS = "a".repeat(40);

test("per text, the indexes of the matching lines, at most `limit` in all", async () => {
  const m = new RegexMatcher("todo", "i");
  try {
    assert.deepEqual(await m.match(["x\nTODO one\ny\ntodo two", "none", "todo"], 10), [[1, 3], [], [0]]);
    assert.deepEqual(await m.match(["todo\ntodo\ntodo", "todo"], 2), [[0, 1], []]);
  } finally {
    m.close();
  }
  const empty = new RegexMatcher("^$", "");
  try {
    assert.deepEqual(await empty.match(["a\n\nb"], 10), [[1]], "an empty line in the middle is a line");
  } finally {
    empty.close();
  }
});

test("a catastrophic pattern ends at its deadline with RegexTimeoutError, and the event loop turns meanwhile", async () => {
  const m = new RegexMatcher(CATASTROPHIC, "", 300);
  try {
    const search = m.match([AS], 10);
    const first = await Promise.race([search.then(() => "search", () => "search"), nextTurn().then(() => "event loop")]);
    assert.equal(first, "event loop", "the harness's event loop is not blocked by the pattern");
    await assert.rejects(search, (err: unknown) => {
      assert.ok(err instanceof RegexTimeoutError);
      assert.match(err.message, /longer than 0.3 seconds/);
      return true;
    });
    // The worker that ran it was terminated; the matcher takes a fresh one.
    const fresh = new RegexMatcher("b", "");
    assert.deepEqual(await fresh.match(["ab"], 1), [[0]]);
    fresh.close();
  } finally {
    m.close();
  }
});

test("an abort ends a running pattern with the signal's reason", async () => {
  const m = new RegexMatcher(CATASTROPHIC, "", 60_000);
  const controller = new AbortController();
  try {
    const search = m.match([AS], 10, controller.signal);
    await nextTurn();
    const reason = new Error("Run timed out after 1 s.");
    controller.abort(reason);
    await assert.rejects(search, (err: unknown) => err === reason);
    await assert.rejects(m.match(["a"], 1, controller.signal), (err: unknown) => err === reason, "an aborted signal starts nothing");
  } finally {
    m.close();
  }
  const after = new RegexMatcher("a", "");
  try {
    assert.deepEqual(await after.match(["a"], 1), [[0]]);
  } finally {
    after.close();
  }
});
