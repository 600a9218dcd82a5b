// The import-cycle check of `npm run lint` (dependency-cruiser; eslint covers everything else).
//
// Why not eslint-plugin-import-x's no-cycle: it always skips type-only imports, and several of
// the cycles this repo had were type-only on one side (store/db.ts assembling the stores that
// took its `Db` type, config ↔ models ↔ subagents through `ResolvedModel`). A type cycle is still
// a layering cycle: neither module can be understood or moved without the other, and turning the
// `import type` into a value import (one word) makes it a runtime cycle, where ES modules see a
// binding before it is initialised. So type-only imports count here (tsPreCompilationDeps).
// test/unit/lint/importCycles.test.ts runs this config on a fixture cycle and expects a failure.
import { join } from "node:path";

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "Import cycle. Move the shared piece down to the module that owns it (a type to where it is defined, " +
        "a helper to the module whose rule it is) instead of importing back up; no re-export shims.",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports are dependencies too (see above).
    tsPreCompilationDeps: true,
    // Absolute, so the check runs the same from any working directory (the unit test runs it on a temp dir).
    tsConfig: { fileName: join(import.meta.dirname, "tsconfig.json") },
    // Only the rule above is checked: skip computing what no rule asks for (orphans, reachability, metrics).
    skipAnalysisNotInRules: true,
  },
};
