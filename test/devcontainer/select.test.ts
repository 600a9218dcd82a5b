// Provider choice: auto | local | devcontainer, including "already inside a container".
import { strict as assert } from "node:assert";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { HarnessError } from "../../extension/harness/errors.js";
import { DevContainerSandboxProvider } from "../../extension/harness/sandbox/devcontainer/provider.js";
import { LocalSandboxProvider } from "../../extension/harness/sandbox/local.js";
import { createSandboxProvider, parseSandboxChoice } from "../../extension/harness/sandbox/select.js";

const outside = { env: {}, dockerEnvFile: "/nonexistent/.dockerenv", dataDir: mkdtempSync(join(tmpdir(), "deerflow-select-data-")) };

function folder(kind: "none" | "dir" | "root"): string {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-select-"));
  if (kind === "dir") {
    mkdirSync(join(dir, ".devcontainer"));
    writeFileSync(join(dir, ".devcontainer", "devcontainer.json"), "{}");
  }
  if (kind === "root") writeFileSync(join(dir, ".devcontainer.json"), "{}");
  return dir;
}

test("auto: the dev container when the folder has one (either location), local otherwise", () => {
  for (const kind of ["dir", "root"] as const) {
    const chosen = createSandboxProvider("auto", { workspaceFolder: folder(kind), ...outside });
    assert.equal(chosen.kind, "devcontainer");
    assert.ok(chosen.provider instanceof DevContainerSandboxProvider);
  }
  const plain = createSandboxProvider("auto", { workspaceFolder: folder("none"), ...outside });
  assert.equal(plain.kind, "local");
  assert.ok(plain.provider instanceof LocalSandboxProvider);
});

test("auto inside a container (REMOTE_CONTAINERS or /.dockerenv) picks local", () => {
  const ws = folder("dir");
  assert.equal(createSandboxProvider("auto", { ...outside, workspaceFolder: ws, env: { REMOTE_CONTAINERS: "true" }, dockerEnvFile: "/nonexistent" }).kind, "local");
  const marker = join(folder("none"), ".dockerenv");
  writeFileSync(marker, "");
  assert.equal(createSandboxProvider("auto", { ...outside, workspaceFolder: ws, env: {}, dockerEnvFile: marker }).kind, "local");
});

test("explicit choices: local always; devcontainer needs a configuration", () => {
  assert.equal(createSandboxProvider("local", { workspaceFolder: folder("dir"), ...outside }).kind, "local");
  assert.equal(createSandboxProvider("devcontainer", { workspaceFolder: folder("root"), ...outside }).kind, "devcontainer");
  assert.throws(
    () => createSandboxProvider("devcontainer", { workspaceFolder: folder("none"), ...outside }),
    (err: unknown) => err instanceof HarnessError && err.code === "usage" && /has no \.devcontainer\/devcontainer\.json/.test(err.message),
  );
});

test("parseSandboxChoice accepts the three names only", () => {
  assert.equal(parseSandboxChoice("devcontainer"), "devcontainer");
  assert.throws(() => parseSandboxChoice("docker"), (err: unknown) => err instanceof HarnessError && err.code === "usage");
});
