// The circuit breaker's states (DeerFlow `_check_circuit` / `_record_failure` / `_record_success`)
// on a clock the test controls, its state file shared across "processes", and the concurrency cap.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import {
  circuitIsOpen,
  configureLlmCircuit,
  recordFailure,
  recordSuccess,
  releaseProbe,
  withConcurrencyCap,
} from "../../../extension/harness/middlewares/llmCircuitBreaker.js";

let clock = 1_000;
after(() => configureLlmCircuit({}));

test("threshold failures open it; during the cool-down calls fail fast; then one probe; a failed probe re-opens, a good one closes", () => {
  configureLlmCircuit({ failureThreshold: 2, recoveryTimeoutMs: 60_000, now: () => clock });
  const ep = "http://a/v1#m1";
  assert.equal(circuitIsOpen(ep), false);
  recordFailure(ep);
  assert.equal(circuitIsOpen(ep), false, "below the threshold");
  recordFailure(ep);
  assert.equal(circuitIsOpen(ep), true, "open");
  clock += 59_999;
  assert.equal(circuitIsOpen(ep), true, "still cooling down");
  clock += 1;
  assert.equal(circuitIsOpen(ep), false, "half-open: the probe goes");
  assert.equal(circuitIsOpen(ep), true, "one probe at a time");
  recordFailure(ep);
  assert.equal(circuitIsOpen(ep), true, "a failed probe re-opens it");
  clock += 60_000;
  assert.equal(circuitIsOpen(ep), false);
  releaseProbe(ep); // e.g. a quota error: neither success nor failure
  assert.equal(circuitIsOpen(ep), false, "a released probe lets the next call probe");
  recordSuccess(ep);
  assert.equal(circuitIsOpen(ep), false);
  recordFailure(ep);
  assert.equal(circuitIsOpen(ep), false, "success reset the count");
  assert.equal(circuitIsOpen("http://b/v1#m1"), false, "per endpoint");
});

test("the state file carries the breaker to another process's check", () => {
  const stateFile = join(mkdtempSync(join(tmpdir(), "deerflow-circuit-")), "llm-circuit.json");
  configureLlmCircuit({ failureThreshold: 1, recoveryTimeoutMs: 60_000, stateFile, now: () => clock });
  const ep = "http://c/v1#m";
  recordFailure(ep);
  const saved = JSON.parse(readFileSync(stateFile, "utf8")) as { endpoints: Record<string, { state: string; opened_at: number }> };
  assert.deepEqual(saved.endpoints[ep], { state: "open", failures: 1, opened_at: clock });
  // Re-configuring is what a new process does; it reads the file.
  configureLlmCircuit({ failureThreshold: 1, recoveryTimeoutMs: 60_000, stateFile, now: () => clock });
  assert.equal(circuitIsOpen(ep), true);
  configureLlmCircuit({ failureThreshold: 1, recoveryTimeoutMs: 0, stateFile, now: () => clock });
  assert.equal(circuitIsOpen(ep), false, "the cool-down is the configured one, read at each check");
  recordSuccess(ep);
  assert.equal((JSON.parse(readFileSync(stateFile, "utf8")) as { endpoints: Record<string, { state: string }> }).endpoints[ep]!.state, "closed");
});

test("max_concurrent_calls: the second call to an endpoint starts only when the first ends; 0 means no cap", async () => {
  configureLlmCircuit({ maxConcurrentCalls: 1 });
  const log: string[] = [];
  let endFirst!: () => void;
  const first = withConcurrencyCap("http://d#m", undefined, async () => {
    log.push("first start");
    await new Promise<void>((r) => (endFirst = r));
    log.push("first end");
  });
  const second = withConcurrencyCap("http://d#m", undefined, () => Promise.resolve(void log.push("second start")));
  const other = withConcurrencyCap("http://e#m", undefined, () => Promise.resolve(void log.push("other endpoint")));
  await other;
  assert.deepEqual(log, ["first start", "other endpoint"]);
  endFirst();
  await Promise.all([first, second]);
  assert.deepEqual(log, ["first start", "other endpoint", "first end", "second start"]);

  configureLlmCircuit({ maxConcurrentCalls: 0 });
  let release!: () => void;
  const held = withConcurrencyCap("http://d#m", undefined, () => new Promise<void>((r) => (release = r)));
  await withConcurrencyCap("http://d#m", undefined, () => Promise.resolve(log.push("uncapped")));
  release();
  await held;
  assert.equal(log.at(-1), "uncapped");
});
