// MemoryService's timer (memory/service.ts): after a processing round the server re-arms it for
// the next due entry. A queue database that cannot be read at that moment must not leave the timer
// unarmed (extraction would stall until the next run): the error is logged and reading is tried
// again after a back-off. Timers are node:test's mock timers; the round's end is awaited on its log.
import { test, mock, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryService, SCHEDULE_RETRY_MS } from "../../../extension/harness/memory/service.js";
import type { MemoryQueue } from "../../../extension/harness/memory/queue.js";
import { parseHarnessConfig } from "../../../extension/harness/config/harnessConfig.js";

const dataDir = mkdtempSync(join(tmpdir(), "deerflow-memory-service-"));
after(() => rmSync(dataDir, { recursive: true, force: true }));

test("a queue error while re-arming is logged and retried after a back-off; the timer is armed again", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const warnings: string[] = [];
    let onWarn: ((m: string) => void) | undefined;
    const log = { info: () => undefined, warn: (m: string) => (warnings.push(m), onWarn?.(m)) };
    const warned = (pattern: RegExp) =>
      new Promise<string>((resolve) => {
        const hit = warnings.find((w) => pattern.test(w));
        if (hit) return resolve(hit);
        onWarn = (m) => {
          if (pattern.test(m)) resolve(m);
        };
      });
    // No model configured: the extraction fails fast (no network), the entry stays queued.
    const config = parseHarnessConfig({ memory: { debounce_seconds: 0 } }, "test");
    const s = new MemoryService({ dataDir, config: () => config, log });
    s.enqueue("t1", "/ws", "conversation", [{ role: "user", content: "I use Rust." }], { name: "missing" });
    const queue = (s as unknown as { queue: MemoryQueue }).queue;
    const nextDue = queue.nextDue.bind(queue);
    let reads = 0;
    let broken = false;
    queue.nextDue = (max: number) => {
      reads++;
      if (broken) throw new Error("database is locked");
      return nextDue(max);
    };
    s.schedule();
    assert.equal(reads, 1);
    broken = true;
    const failedRead = warned(/cannot read the update queue/);
    mock.timers.tick(0); // the due entry's timer: a round runs (its extraction fails), then re-arms
    const line = await failedRead;
    assert.match(line, new RegExp(`trying again in ${SCHEDULE_RETRY_MS / 1000} s: database is locked`));
    assert.ok(warnings.some((w) => /extraction for thread t1 failed/.test(w)), warnings.join("\n"));
    const readsAfterFailure = reads;
    broken = false;
    mock.timers.tick(SCHEDULE_RETRY_MS);
    assert.equal(reads, readsAfterFailure + 1, "the queue is read again after the back-off");
    assert.ok((s as unknown as { timer?: unknown }).timer, "and the timer is armed for the queued entry");
    await s.close();
  } finally {
    mock.timers.reset();
  }
});
