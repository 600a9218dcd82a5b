// What the dev container's protection costs on a workspace of real size: planning the read-only
// mounts at bring-up (one walk that stops at protected folders) and the watch around every
// command (two listings per command: the first one reads every folder, the next ones lstat every
// folder and read again only those that changed). A synthetic tree of node_modules-like folders;
// the sizes are the knobs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { planProtection } from "../../extension/harness/sandbox/devcontainer/protectedMounts.js";
import { ProtectedWatch } from "../../extension/harness/sandbox/devcontainer/protectedWatch.js";
import type { Bench, Row } from "./run.js";

const SIZES = (process.env.BENCH_PROTECTED_DIRS ?? "1000,5000").split(",").map(Number);
const FILES_PER_DIR = Number(process.env.BENCH_PROTECTED_FILES ?? 10);
const WARM_RUNS = 20;

function buildTree(dirs: number): string {
  const root = mkdtempSync(join(tmpdir(), "deerflow-bench-protected-"));
  mkdirSync(join(root, ".git", "hooks"), { recursive: true });
  writeFileSync(join(root, ".git", "config"), "[core]\n");
  for (let i = 0; i < dirs; i++) {
    // 10 packages per scope, 10 scopes per group: a few levels, like node_modules.
    const dir = join(root, "node_modules", `g${Math.floor(i / 100)}`, `s${Math.floor(i / 10) % 10}`, `p${i}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < FILES_PER_DIR; f++) writeFileSync(join(dir, `f${f}.js`), "x");
  }
  return root;
}

async function ms(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const bench: Bench = {
  name: "protectedWatch",
  description: "dev container protection: the mount plan at bring-up, the watch per command (cold, then warm median/p90)",
  async run(): Promise<Row[]> {
    const rows: Row[] = [];
    for (const dirs of SIZES) {
      const root = buildTree(dirs);
      // A workspace's folders are not all seconds old: the watch trusts its cache only for folders
      // whose ctime is older than its racy window (2 s), so let the fresh tree age past it.
      await delay(2_100);
      try {
        const planMs = await ms(() => planProtection(root, { image: "x" }));
        const watch = await ProtectedWatch.create(root, [{ rel: ".git" }]);
        const coldMs = await ms(() => watch.snapshot());
        const warm: number[] = [];
        for (let i = 0; i < WARM_RUNS; i++) warm.push(await ms(() => watch.snapshot()));
        warm.sort((a, b) => a - b);
        rows.push({
          folders: dirs,
          files: dirs * FILES_PER_DIR,
          "plan ms": planMs,
          "watch cold ms": coldMs,
          "watch warm median ms": warm[Math.floor(warm.length / 2)]!,
          "watch warm p90 ms": warm[Math.floor(warm.length * 0.9)]!,
        });
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    }
    return rows;
  },
};

export default bench;
