// One build script for every bundle. The CLI/harness is one ESM bundle for Node 20; native modules stay external.
// Later bundles (the extension host, the webview) are added to `targets` below.
import * as esbuild from "esbuild";
import { chmod, copyFile, mkdir } from "node:fs/promises";

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  // pg-native: pg's optional libpq binding, which we do not use (store/postgres/).
  external: ["better-sqlite3", "pg-native"],
  logLevel: "warning",
  // Some CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};

const targets = [
  { ...common, entryPoints: ["extension/harness/cli.ts"], outfile: "dist/cli.js" },
  // The harness process the extension starts (JSON-RPC over stdio): same runtime as the CLI.
  { ...common, entryPoints: ["extension/harness/server.ts"], outfile: "dist/server.js" },
  // The Postgres driver's worker thread (store/postgres/syncPg.ts loads it beside the bundle),
  // with pg inside.
  { ...common, entryPoints: ["extension/harness/store/postgres/worker.mjs"], outfile: "dist/pgWorker.js" },
  // The extension host bundle: CommonJS (VS Code 1.100 loads `main` with require), `.cjs` because
  // package.json says "type": "module". vscode is provided by the host; it never loads SQLite.
  {
    bundle: true, platform: "node", format: "cjs", target: "node20", sourcemap: "linked", logLevel: "warning",
    entryPoints: ["extension/host/extension.ts"], outfile: "dist/extension.cjs", external: ["vscode"],
  },
  // The panel (webview/): a browser IIFE loaded by the host's page under a nonce CSP, and its stylesheet.
  {
    bundle: true, platform: "browser", format: "iife", target: "es2022", sourcemap: "linked", logLevel: "warning",
    entryPoints: ["webview/main.ts"], outfile: "dist/webview.js", minify: true,
  },
  { bundle: true, logLevel: "warning", entryPoints: ["webview/styles.css"], outfile: "dist/webview.css" },
];

await mkdir("dist", { recursive: true });
await Promise.all(targets.map((t) => esbuild.build(t)));
await chmod("dist/cli.js", 0o755);
// Codicons for the webview (font + css side by side: the css loads the font relatively).
await mkdir("dist/codicons", { recursive: true });
for (const f of ["codicon.css", "codicon.ttf"]) await copyFile(`node_modules/@vscode/codicons/dist/${f}`, `dist/codicons/${f}`);
