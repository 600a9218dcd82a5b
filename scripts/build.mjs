// One build script for every bundle. The CLI/harness is one ESM bundle for Node 20; native modules stay external.
// Later bundles (the extension host, the webview) are added to `targets` below.
import * as esbuild from "esbuild";
import { chmod, mkdir } from "node:fs/promises";

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  external: ["better-sqlite3"],
  logLevel: "warning",
  // Some CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};

const targets = [
  { ...common, entryPoints: ["extension/harness/cli.ts"], outfile: "dist/cli.js" },
  // The harness process the extension starts (JSON-RPC over stdio): same runtime as the CLI.
  { ...common, entryPoints: ["extension/harness/server.ts"], outfile: "dist/server.js" },
];

await mkdir("dist", { recursive: true });
await Promise.all(targets.map((t) => esbuild.build(t)));
await chmod("dist/cli.js", 0o755);
