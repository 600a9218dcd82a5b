// Shadow checkpoints (issue 35): what one checkpoint of a 10k-file workspace costs, the first one
// (every file hashed) and an incremental one after one file changed (the issue's ≤ 100 ms target),
// with the real git binary. Median of BENCH_SHADOW_ROUNDS incremental checkpoints.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ShadowRepo } from "../../extension/harness/changes/shadow.js";
import type { Bench, Row } from "./run.js";

const FILES = Number(process.env.BENCH_SHADOW_FILES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_SHADOW_ROUNDS ?? 7);

const bench: Bench = {
  name: "shadow checkpoint",
  description: `${FILES}-file workspace, git ${"shadow repository"}; incremental = one file changed, median of ${ROUNDS}`,
  async run(): Promise<Row[]> {
    const ws = mkdtempSync(join(tmpdir(), "bench-shadow-ws-"));
    const data = mkdtempSync(join(tmpdir(), "bench-shadow-data-"));
    try {
      for (let i = 0; i < FILES; i++) {
        const dir = join(ws, `pkg${i % 50}`, `mod${i % 7}`);
        if (i < 350) mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, `file${i}.ts`), `export const v${i} = ${i};\n`);
      }
      const repo = await ShadowRepo.open(data, ws);
      let t0 = performance.now();
      await repo.checkpoint("first");
      const firstMs = performance.now() - t0;
      const runs: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        writeFileSync(join(ws, "pkg0", "mod0", "file0.ts"), `export const v0 = ${r + 1};\n`);
        t0 = performance.now();
        const c = await repo.checkpoint(`round ${r}`);
        runs.push(performance.now() - t0);
        if (!c.changed) throw new Error("the changed file was not recorded");
      }
      t0 = performance.now();
      await repo.checkpoint("unchanged");
      const unchangedMs = performance.now() - t0;
      runs.sort((a, b) => a - b);
      return [
        { checkpoint: "first (every file)", files: FILES, ms: firstMs },
        { checkpoint: "incremental (1 file changed)", files: FILES, ms: runs[Math.floor(runs.length / 2)]! },
        { checkpoint: "nothing changed", files: FILES, ms: unchangedMs },
      ];
    } finally {
      rmSync(ws, { recursive: true, force: true });
      rmSync(data, { recursive: true, force: true });
    }
  },
};
export default bench;
