/**
 * The other Node runtime of the test matrix, for tests that check the two SQLite drivers work on
 * one database file together: Node 24 (node:sqlite, from scripts/ci/node24-setup.sh, which CI
 * runs and which installs it from the npm registry when missing) when this test runs on Node 20,
 * and the machine's Node 20 (better-sqlite3) when it runs on Node 24.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export interface NodeRuntime {
  node: string;
  version: string;
}

const major = (v: string) => Number(v.replace(/^v/, "").split(".")[0]);

function versionOf(node: string): string | undefined {
  const r = spawnSync(node, ["--version"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim().replace(/^v/, "") : undefined;
}

export function otherRuntime(): NodeRuntime {
  const here = major(process.versions.node);
  const candidates: string[] = [];
  if (here < 22) {
    const r = spawnSync("bash", [resolve("scripts/ci/node24-setup.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
    if (r.status !== 0) throw new Error(`scripts/ci/node24-setup.sh failed (exit ${r.status}): the cross-runtime tests need Node 24`);
    candidates.push(join(r.stdout.trim().split("\n").at(-1) ?? "", "bin", "node"));
  } else {
    candidates.push("/usr/bin/node", "/usr/local/bin/node");
  }
  for (const node of candidates) {
    if (!existsSync(node)) continue;
    const version = versionOf(node);
    if (version && (here < 22 ? major(version) >= 22 : major(version) < 22)) return { node, version };
  }
  throw new Error(`No second Node runtime for the cross-runtime tests (looked at ${candidates.join(", ")}; this is Node ${process.versions.node}).`);
}
