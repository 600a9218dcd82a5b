// Bundles the extension-host test suite (test/vscode/suite) to out/vscode-tests/ as CommonJS:
// the extension host `require`s index.js and calls run(). `vscode` is the host's; mocha is loaded
// from the repo's node_modules at run time. out/vscode-tests/package.json marks the folder
// CommonJS because the repo's package.json says "type": "module".
import * as esbuild from "esbuild";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";

const dir = "test/vscode/suite";
const outdir = "out/vscode-tests";
const entries = (await readdir(dir)).filter((f) => f === "index.ts" || f.endsWith(".test.ts")).map((f) => `${dir}/${f}`);

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
await writeFile(`${outdir}/package.json`, JSON.stringify({ type: "commonjs" }) + "\n");
await esbuild.build({
  entryPoints: entries,
  outdir,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  sourcemap: "inline",
  external: ["vscode", "mocha"],
  logLevel: "warning",
});
