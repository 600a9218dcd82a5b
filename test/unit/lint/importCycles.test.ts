// `npm run lint` fails on an import cycle (issue 20 item 5): the lint script runs dependency-cruiser
// with the repo's .dependency-cruiser.mjs, and that config, run on small fixture trees written the
// way this repo writes imports (NodeNext: `.ts` files imported as `./x.js`), refuses every kind of
// cycle this repo has had (value, type-only on one side, through a re-export) and accepts a tree
// without one. The repo's own tree passing is `npm run lint` itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../../..");
const CONFIG = join(ROOT, ".dependency-cruiser.mjs");
const DEPCRUISE = join(ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");

/** Runs the check as the lint script does, on a fresh tree of `files` (path → source). */
function check(files: Record<string, string>, extraArgs: string[] = []): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-cycles-"));
  try {
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), source);
    }
    const r = spawnSync(process.execPath, [DEPCRUISE, "--config", CONFIG, ...extraArgs, "src"], { cwd: dir, encoding: "utf8" });
    assert.equal(r.error, undefined);
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function assertCycle(files: Record<string, string>): void {
  const { status, out } = check(files);
  assert.notEqual(status, 0, out);
  assert.match(out, /error no-circular/, out);
  for (const path of Object.keys(files)) assert.ok(out.includes(path), `${path} is named in:\n${out}`);
}

test("npm run lint runs the cycle check with the repo's config on extension/ and webview/", () => {
  const lint = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.lint!;
  const run = lint.split("&&").map((s) => s.trim().split(/\s+/)).find((argv) => argv[0] === "depcruise");
  assert.ok(run, `no depcruise step in "${lint}"`);
  assert.deepEqual(run.slice(1, 3), ["--config", ".dependency-cruiser.mjs"]);
  for (const dir of ["extension", "webview"]) assert.ok(run.includes(dir), `depcruise checks ${dir}/: "${lint}"`);
});

test("two modules importing each other's values fail the check, naming both", () => {
  assertCycle({
    "src/a.ts": 'import { b } from "./b.js";\nexport const a = (): number => b + 1;\n',
    "src/b.ts": 'import { a } from "./a.js";\nexport const b = 1;\nexport const c = (): number => a();\n',
  });
});

test("a cycle closed by a type-only import fails too (store/db.ts and its stores' Db type)", () => {
  assertCycle({
    "src/db.ts": 'import { createStore } from "./store.js";\nexport interface Db { exec(sql: string): void }\nexport const open = (db: Db) => createStore(db);\n',
    "src/store.ts": 'import type { Db } from "./db.js";\nexport const createStore = (db: Db) => ({ db });\n',
  });
});

test("a cycle of three through a re-export fails", () => {
  assertCycle({
    "src/a.ts": 'import { b } from "./b.js";\nexport const a = 1;\nexport const useB = () => b;\n',
    "src/b.ts": 'export { c as b } from "./c.js";\n',
    "src/c.ts": 'import { a } from "./a.js";\nexport const c = () => a;\n',
  });
});

test("a tree without a cycle passes, its imports resolved (.js specifiers to .ts files)", () => {
  const files = {
    "src/db.ts": 'import { createStore } from "./store.js";\nimport type { Db } from "./types.js";\nexport const open = (db: Db) => createStore(db);\n',
    "src/store.ts": 'import type { Db } from "./types.js";\nexport const createStore = (db: Db) => ({ db });\n',
    "src/types.ts": "export interface Db { exec(sql: string): void }\n",
  };
  const { status, out } = check(files, ["--output-type", "json"]);
  assert.equal(status, 0, out);
  const result = JSON.parse(out) as { summary: { error: number }; modules: { source: string; dependencies: { resolved: string; couldNotResolve: boolean }[] }[] };
  assert.equal(result.summary.error, 0);
  const edges = result.modules.flatMap((m) => m.dependencies.map((d) => `${m.source} -> ${d.couldNotResolve ? "?" : d.resolved}`)).sort();
  assert.deepEqual(edges, ["src/db.ts -> src/store.ts", "src/db.ts -> src/types.ts", "src/store.ts -> src/types.ts"]);
});
