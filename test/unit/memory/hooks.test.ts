// What a run gets from memory (memory/hooks.ts): the `<memory>` reminder is rendered with the
// chars/4 estimate first; the run model's tokenizer (o200k: ~1.5 s and ~70 MB to load) is loaded
// only when the estimate comes near `max_injection_tokens` — never for an empty memory. Whether a
// tokenizer was loaded is seen in the diagnostics line tokenCount.ts logs once per model.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryService } from "../../../extension/harness/memory/service.js";
import { memoryRunHooks } from "../../../extension/harness/memory/hooks.js";
import { writeMemory } from "../../../extension/harness/memory/store.js";
import { emptyMemory } from "../../../extension/harness/memory/schema.js";
import { parseHarnessConfig } from "../../../extension/harness/config/harnessConfig.js";
import { setDiagnostics } from "../../../extension/harness/diagnostics.js";

const infos: string[] = [];
setDiagnostics({ info: (m) => infos.push(m), warn: () => undefined });
const log = { info: () => undefined, warn: () => undefined };
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function service(maxTokens: number): MemoryService {
  const dataDir = mkdtempSync(join(tmpdir(), "deerflow-memory-hooks-"));
  dirs.push(dataDir);
  const config = parseHarnessConfig({ memory: { max_injection_tokens: maxTokens } }, "test");
  return new MemoryService({ dataDir, config: () => config, log });
}

const loaded = (model: string) => infos.some((l) => l.includes(`"${model}" use its tokenizer`));

test("an empty memory injects nothing and never loads the run model's tokenizer", async () => {
  const s = service(2000);
  const hooks = memoryRunHooks(s.forWorkspace("/ws"), "t1", { name: "m", modelId: "gpt-4o-memory-empty" });
  assert.equal(await hooks.injection(), "");
  assert.ok(!loaded("gpt-4o-memory-empty"), infos.join("\n"));
  await s.close();
});

test("a memory far below the budget is rendered with the estimate; near the budget the tokenizer counts", async () => {
  const fact = (content: string) => ({ id: `f-${content.length}`, content, category: "context" as const, confidence: 0.9, createdAt: "2026-01-01T00:00:00.000Z", source: "user", scope: "global" as const });
  const far = service(2000);
  writeMemory(far.dataDir, { ...emptyMemory(), facts: [fact("Uses Rust.")] });
  const farText = await memoryRunHooks(far.forWorkspace("/ws"), "t2", { name: "m", modelId: "gpt-4o-memory-far" }).injection();
  assert.match(farText, /Uses Rust\./);
  assert.ok(!loaded("gpt-4o-memory-far"), "far below the budget: no tokenizer");
  await far.close();

  const near = service(40);
  writeMemory(near.dataDir, { ...emptyMemory(), facts: [fact("Maintains the Zephyr-42 compiler, written in Rust.")] });
  const nearText = await memoryRunHooks(near.forWorkspace("/ws"), "t3", { name: "m", modelId: "gpt-4o-memory-near" }).injection();
  assert.match(nearText, /Zephyr-42/);
  assert.ok(loaded("gpt-4o-memory-near"), "near the budget: the model's tokenizer decides");
  await near.close();
});
