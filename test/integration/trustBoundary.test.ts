// The trust boundary through the real CLI, real files and real symlinks: a scripted model (the only
// fake) tries to make code run on the host through the file tools, and the tree is shaped the way a
// hostile sandbox would shape it (a thread folder replaced by a link, link loops, deep and huge
// trees). Each attack: no marker appears outside the roots or in a protected file, nothing runs
// (git is run afterwards to prove it), and the run ends with a readable error or goes on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { runCli, sandboxDirs, spawnCli, tempDir, useModelServer, type Dirs } from "./helpers/cli.js";

const server = useModelServer();
const W = "/mnt/user-data/workspace";
const base = (d: Dirs) => ["--workspace", d.workspace, "--data-dir", d.dataDir];
const runArgs = (d: Dirs, thread: string, extra: string[] = []) =>
  ["run", ...base(d), "--base-url", server.url, "--model", "scripted", "--prompt", "go", "--thread", thread, ...extra];

async function run(d: Dirs, thread: string, script: ScriptedReply[], extra: string[] = []) {
  server.setScript(script);
  const first = server.requests.length;
  const r = await runCli(runArgs(d, thread, extra));
  return { ...r, requests: server.requests.slice(first), end: r.lines.at(-1) };
}

function toolResults(req: RecordedRequest | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of req?.body?.messages ?? []) if (m.role === "tool") out.set(String(m.tool_call_id), textOf(m));
  return out;
}

/** Every file below `root` (links not followed) whose bytes contain `marker`. */
function filesContaining(root: string, marker: string): string[] {
  const hits: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      const info = lstatSync(p);
      if (info.isDirectory()) visit(p);
      else if (info.isFile() && readFileSync(p).includes(marker)) hits.push(p);
    }
  };
  visit(root);
  return hits;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

test("writes that would run code on the host are refused by rule, through links and in any case; nothing runs; the run goes on", async () => {
  const d = sandboxDirs();
  const ws = d.workspace;
  const outside = tempDir("outside");
  const marker = `DEERFLOW-MARKER-${process.pid}-${Date.now()}`;
  const ran = join(outside, "ran");
  git(ws, "init", "-q");
  const gitConfig = readFileSync(join(ws, ".git", "config"), "utf8");
  mkdirSync(join(ws, ".vscode"));
  writeFileSync(join(ws, ".vscode", "settings.json"), "{}\n");
  // What a sandbox could have planted: a folder link into .git, a dangling file link into its hooks.
  symlinkSync(".git", join(ws, "docs"));
  symlinkSync(join(ws, ".git", "hooks", "post-checkout"), join(ws, "notes.md"));
  mkdirSync(join(ws, ".deerflow", "threads", "other", "outputs"), { recursive: true });

  const hook = `#!/bin/sh\necho ${marker} > ${ran}\n`;
  // What npm would load into every script it runs, were the model's .npmrc written.
  const evil = join(tempDir("npm-option"), "evil.cjs");
  writeFileSync(evil, `require("node:fs").writeFileSync(${JSON.stringify(ran)}, ${JSON.stringify(marker)});\n`);
  writeFileSync(join(ws, "package.json"), JSON.stringify({ name: "ws", private: true, scripts: { check: "node -e 0" } }));
  const devcontainer = JSON.stringify({ image: "debian", initializeCommand: `echo ${marker} > ${ran}` });
  const writes: Array<[string, string, string]> = [
    [`${W}/.devcontainer/devcontainer.json`, devcontainer, ".devcontainer/**, .devcontainer.json"],
    [`${W}/.devcontainer.json`, devcontainer, ".devcontainer/**, .devcontainer.json"],
    [`${W}/.DeVcOnTaInEr.json`, devcontainer, ".devcontainer/**, .devcontainer.json"],
    [`${W}/.DEVCONTAINER/devcontainer.json`, devcontainer, ".devcontainer/**, .devcontainer.json"],
    [`${W}/.git/hooks/pre-commit`, hook, ".git/**"],
    [`${W}/.git/config`, `[core]\n\tfsmonitor = echo ${marker} > ${ran}\n`, ".git/**"],
    [`${W}/.Git/hooks/pre-commit`, hook, ".git/**"],
    [`${W}/docs/hooks/pre-push`, hook, ".git/**"],
    [`${W}/notes.md`, hook, ".git/**"],
    [`${W}/.vscode/tasks.json`, JSON.stringify({ version: "2.0.0", tasks: [{ label: marker, type: "shell", command: `echo ${marker}`, runOptions: { runOn: "folderOpen" } }] }), ".vscode/**"],
    [`${W}/.vscode/settings.json`, JSON.stringify({ "deerflow.allowHostCommands": true, "deerflow.sandboxProvider": "local", marker }), ".vscode/**"],
    [`${W}/.husky/pre-commit`, hook, ".husky/**"],
    // What runs code in the same class as .husky (issue 21): hook managers, editors, direnv, submodules.
    [`${W}/.pre-commit-config.yaml`, `repos:\n- repo: local\n  hooks:\n  - {id: m, name: m, entry: sh -c 'echo ${marker} > ${ran}', language: system}\n`, ".pre-commit-config.yaml"],
    [`${W}/lefthook.yml`, `pre-commit:\n  commands:\n    m:\n      run: echo ${marker} > ${ran}\n`, "lefthook.yml"],
    [`${W}/.lefthook.yml`, `pre-commit:\n  commands:\n    m:\n      run: echo ${marker} > ${ran}\n`, "lefthook.yml"],
    [`${W}/lefthook-local.yaml`, `pre-commit:\n  commands:\n    m:\n      run: echo ${marker} > ${ran}\n`, "lefthook.yml"],
    [`${W}/project.code-workspace`, JSON.stringify({ folders: [{ path: "." }], tasks: { version: "2.0.0", tasks: [{ label: marker, command: `echo ${marker}`, runOptions: { runOn: "folderOpen" } }] } }), "*.code-workspace"],
    [`${W}/.gitmodules`, `[submodule "m"]\n\tpath = m\n\turl = ${outside}\n`, ".gitmodules"],
    [`${W}/.idea/workspace.xml`, `<project><component name="${marker}"/></project>`, ".idea/**"],
    [`${W}/.envrc`, `echo ${marker} > ${ran}\n`, ".envrc"],
    [`${W}/sub/.envrc`, `echo ${marker} > ${ran}\n`, ".envrc"],
    [`${W}/.deerflow/threads/other/outputs/x.txt`, marker, ".deerflow/**"],
    [`${W}/.deerflow/.gitignore`, marker, ".deerflow/**"],
    // Package managers' configuration (issue 31 item 3): npm, yarn, pnpm, bun, pip run code from it.
    [`${W}/.npmrc`, `node-options=--require=${evil}\n`, ".npmrc, .yarnrc"],
    [`${W}/packages/app/.yarnrc.yml`, `yarnPath: ${evil}\n`, ".yarnrc.yml"],
    [`${W}/.pnpmfile.cjs`, `require(${JSON.stringify(evil)})\n`, ".pnpmfile.cjs"],
    [`${W}/bunfig.toml`, `preload = [${JSON.stringify(evil)}]\n`, "bunfig.toml"],
    [`${W}/.venv/pip.conf`, `[global]\nindex-url = http://127.0.0.1:9/${marker}\n`, "pip.conf"],
    [`${W}/node_modules/.bin/mcp-server-filesystem`, hook, "node_modules/.bin/**"],
  ];
  const edits: Array<[string, string, string, string]> = [
    [`${W}/.git/config`, "[core]", `[core]\n\tfsmonitor = echo ${marker} > ${ran}`, ".git/**"],
    [`${W}/docs/config`, "[core]", `[core]\n\thooksPath = ${outside}`, ".git/**"],
    [`${W}/.vscode/settings.json`, "{}", JSON.stringify({ "deerflow.allowHostCommands": true, marker }), ".vscode/**"],
  ];
  const calls = [
    ...writes.map(([path, content], i) => ({ id: `w${i}`, name: "write_file", args: { description: "attack", path, content } })),
    ...edits.map(([path, old_str, new_str], i) => ({ id: `e${i}`, name: "str_replace", args: { description: "attack", path, old_str, new_str } })),
    { id: "ok", name: "write_file", args: { description: "a normal file", path: `${W}/src/fine.txt`, content: "fine\n" } },
  ];
  // The default policy asks before any protected write: the turn pauses with every one of them
  // listed by its rule, and nothing of the turn runs — not even the ordinary write beside them.
  const r = await run(d, "protected", [{ toolCalls: calls }]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end!.data.stop_reason, "approval");
  const pending = new Map((r.end!.data.pending_approvals as Array<{ tool_call_id: string; class: string; reason: string }>).map((p) => [p.tool_call_id, p]));
  assert.equal(pending.has("ok"), false, "an ordinary write does not ask");
  // What would be refused even once approved is refused before anyone is asked (approvals/preflight.ts):
  // overwriting or editing an existing file the thread never read, a path into another thread's data.
  const refusedFirst = new Map([
    ["w5", /write_file blocked — \S+\/\.git\/config already exists and you have not read/],
    ["w10", /write_file blocked — \S+\/\.vscode\/settings\.json already exists and you have not read/],
    ["w21", /^Error: Permission denied writing to file: /],
    ["w22", /^Error: Permission denied writing to file: /],
    ["e0", /str_replace blocked — \S+\/\.git\/config already exists and you have not read/],
    ["e1", /str_replace blocked — \S+\/docs\/config already exists and you have not read/],
    ["e2", /str_replace blocked — \S+\/\.vscode\/settings\.json already exists and you have not read/],
  ]);
  for (const id of refusedFirst.keys()) assert.equal(pending.has(id), false, `${id} is not offered for approval`);
  for (const [i, [path, , rule]] of writes.entries()) {
    if (refusedFirst.has(`w${i}`)) continue;
    const p = pending.get(`w${i}`);
    assert.equal(p?.class, "protected", `${path}: ${JSON.stringify(p)}`);
    assert.ok(p.reason.includes(rule), `${path} names its rule ${rule}: ${p.reason}`);
    assert.ok(!p.reason.includes(ws) && !p.reason.includes(outside), `no host path: ${p.reason}`);
  }
  assert.equal(existsSync(join(ws, "src", "fine.txt")), false, "nothing of the paused turn ran");

  // The user rejects them all: the model is told, the ordinary write runs, the run goes on.
  server.setScript([{ content: "Those paths are protected; please make the change yourself." }]);
  const first = server.requests.length;
  const decided = await runCli(["approve", "--workspace", ws, "--data-dir", d.dataDir, "--thread", "protected", "--all", "reject", "--reason", "not these files"]);
  assert.equal(decided.code, 0, decided.stderr);
  assert.equal(decided.lines.at(-1)!.data.status, "success", "the run goes on after the refusals");
  const results = toolResults(server.requests[first]);
  for (const id of [...writes.keys()].map((i) => `w${i}`).concat([...edits.keys()].map((i) => `e${i}`))) {
    const refused = refusedFirst.get(id);
    if (refused) assert.match(results.get(id) ?? "", refused, id);
    else assert.equal(results.get(id), "Rejected by the user: not these files", id);
  }
  assert.equal(results.get("ok"), "OK");
  assert.equal(readFileSync(join(ws, "src", "fine.txt"), "utf8"), "fine\n");

  // Nothing landed: no marker in the workspace or outside it, protected files byte-for-byte as before.
  assert.deepEqual([...filesContaining(ws, marker), ...filesContaining(outside, marker)], []);
  assert.equal(readFileSync(join(ws, ".git", "config"), "utf8"), gitConfig);
  assert.equal(readFileSync(join(ws, ".vscode", "settings.json"), "utf8"), "{}\n");
  assert.equal(readFileSync(join(ws, ".deerflow", ".gitignore"), "utf8"), "*\n");
  for (const rel of [".devcontainer", ".devcontainer.json", ".DeVcOnTaInEr.json", ".DEVCONTAINER", ".Git", ".husky", ".vscode/tasks.json", ".git/hooks/pre-commit", ".git/hooks/post-checkout", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yaml", "project.code-workspace", ".gitmodules", ".idea", ".envrc", "sub", ".npmrc", "packages", ".pnpmfile.cjs", "bunfig.toml", ".venv", "node_modules"]) {
    assert.equal(existsSync(join(ws, rel)), false, rel);
  }
  assert.deepEqual(readdirSync(join(ws, ".deerflow", "threads", "other", "outputs")), []);

  // Nothing runs: git reads its config and runs its hooks, and runs nothing of the model's.
  git(ws, "status");
  git(ws, "add", "src/fine.txt");
  git(ws, "commit", "-q", "-m", "after the run");
  // npm reads the folder's .npmrc for every script it runs: it runs nothing of the model's either.
  execFileSync("npm", ["run", "--silent", "check"], { cwd: ws, env: { PATH: process.env.PATH, HOME: outside }, stdio: "ignore" });
  assert.equal(existsSync(ran), false, "no hook, fsmonitor, task or npm option of the model's ran");
  // The same config written by hand does run (the route is real; only the boundary stopped it).
  const control = tempDir("control");
  git(control, "init", "-q");
  git(control, "config", "core.fsmonitor", `echo ${marker} > ${join(control, "ran")}`);
  git(control, "status");
  assert.equal(existsSync(join(control, "ran")), true);
  writeFileSync(join(control, "package.json"), JSON.stringify({ name: "control", private: true, scripts: { check: "node -e 0" } }));
  writeFileSync(join(control, ".npmrc"), `node-options=--require=${evil}\n`);
  execFileSync("npm", ["run", "--silent", "check"], { cwd: control, env: { PATH: process.env.PATH, HOME: outside }, stdio: "ignore" });
  assert.equal(readFileSync(ran, "utf8"), marker, "npm loads what a folder's .npmrc names");
});

test("write=auto does not cover package-manager configuration: write_file to .npmrc or a node_modules/.bin shadow asks (class protected); an ordinary write runs", async () => {
  const d = sandboxDirs();
  const auto = ["--approval", "write=auto"];
  const npmrc = { id: "npmrc", name: "write_file", args: { description: "x", path: `${W}/.npmrc`, content: "node-options=--require=./evil.cjs\n" } };
  const shadow = { id: "shadow", name: "write_file", args: { description: "x", path: `${W}/node_modules/.bin/mcp-server-filesystem`, content: "#!/bin/sh\necho planted\n" } };
  const r = await run(d, "npm-auto", [{ toolCalls: [npmrc, shadow] }], auto);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end!.data.stop_reason, "approval");
  const pending = r.end!.data.pending_approvals as Array<{ tool_call_id: string; class: string; reason: string }>;
  assert.deepEqual(
    pending.map((p) => [p.tool_call_id, p.class]),
    [
      ["npmrc", "protected"],
      ["shadow", "protected"],
    ],
  );
  assert.match(pending[0]!.reason, /writes \/mnt\/user-data\/workspace\/\.npmrc, a protected path \(\.npmrc, .*\): a package manager run in the folder reads it/);
  assert.match(pending[1]!.reason, /a protected path \(node_modules\/\.bin\/\*\*\): npx and npm scripts run the programs there/);
  assert.equal(existsSync(join(d.workspace, ".npmrc")) || existsSync(join(d.workspace, "node_modules")), false, "nothing written before the decision");
  server.setScript([{ content: "Not written." }]);
  const decided = await runCli(["approve", ...base(d), "--thread", "npm-auto", "--all", "reject"]);
  assert.equal(decided.code, 0, decided.stderr);
  assert.equal(existsSync(join(d.workspace, ".npmrc")) || existsSync(join(d.workspace, "node_modules")), false);
  const ordinary = await run(d, "npm-auto", [{ toolCalls: [{ id: "ok", name: "write_file", args: { description: "x", path: `${W}/notes/npmrc.md`, content: "fine\n" } }] }, { content: "done" }], auto);
  assert.equal(ordinary.end!.data.stop_reason, undefined, "an ordinary write does not ask under write=auto");
  assert.equal(readFileSync(join(d.workspace, "notes", "npmrc.md"), "utf8"), "fine\n");
});

test("a write through a file with more than one hard link is refused: a git hook's second name in the workspace is never written", async () => {
  const d = sandboxDirs();
  const ws = d.workspace;
  const outside = tempDir("outside");
  const marker = `DEERFLOW-MARKER-${process.pid}-${Date.now()}`;
  const ran = join(outside, "ran");
  git(ws, "init", "-q");
  const hookPath = join(ws, ".git", "hooks", "pre-commit");
  const hook = "#!/bin/sh\nexit 0\n";
  writeFileSync(hookPath, hook, { mode: 0o755 });
  // What a shell on the workspace's file system could plant: the hook under an innocent name.
  linkSync(hookPath, join(ws, "notes.sh"));
  const planted = `#!/bin/sh\necho ${marker} > ${ran}\n`;
  const r = await run(d, "hardlink", [
    { toolCalls: [{ id: "read", name: "read_file", args: { description: "x", path: `${W}/notes.sh` } }] },
    {
      toolCalls: [
        { id: "write", name: "write_file", args: { description: "x", path: `${W}/notes.sh`, content: planted } },
        { id: "append", name: "write_file", args: { description: "x", path: `${W}/notes.sh`, content: planted, append: true } },
        { id: "edit", name: "str_replace", args: { description: "x", path: `${W}/notes.sh`, old_str: "exit 0", new_str: `echo ${marker} > ${ran}` } },
        { id: "ok", name: "write_file", args: { description: "x", path: `${W}/fine.txt`, content: "fine\n" } },
      ],
    },
    { content: "done" },
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end!.data.status, "success", "the run goes on");
  const results = toolResults(r.requests[2]);
  for (const id of ["write", "append", "edit"]) {
    assert.match(results.get(id)!, /^Error: .*more than one hard link.*DeerFlow does not write through it/, `${id}: ${results.get(id)}`);
    assert.ok(!results.get(id)!.includes(ws), "no host path");
  }
  assert.equal(results.get("ok"), "OK");
  assert.equal(readFileSync(hookPath, "utf8"), hook, "the hook is byte-for-byte as before");
  git(ws, "add", "fine.txt");
  git(ws, "commit", "-q", "-m", "after the run");
  assert.equal(existsSync(ran), false, "the hook ran, and ran nothing of the model's");
});

test("a thread's outputs or uploads replaced by a link (to /, to the data dir) refuses the next run with a clear error; nothing is written there", async () => {
  const d = sandboxDirs();
  const thread = "redirected";
  const outputs = join(d.workspace, ".deerflow", "threads", thread, "outputs");
  const uploads = join(d.workspace, ".deerflow", "threads", thread, "uploads");
  const first = await run(d, thread, [{ content: "first" }]);
  assert.equal(first.code, 0, first.stderr);
  const pwned = `deerflow-pwned-${process.pid}-${Date.now()}.txt`;
  const attack: ScriptedReply[] = [
    { toolCalls: [{ name: "write_file", args: { description: "x", path: `/mnt/user-data/outputs/${pwned}`, content: "pwned" } }] },
    { content: "done" },
  ];
  const dataBefore = readdirSync(d.dataDir).sort();
  const upload = join(tempDir("upload"), "report.txt");
  writeFileSync(upload, "user data\n");
  const targets: Array<[string, string, string, string[]]> = [
    [outputs, "/", "outputs", []],
    [outputs, d.dataDir, "outputs", []],
    [uploads, d.dataDir, "uploads", ["--upload", upload]],
  ];
  for (const [folder, target, name, extra] of targets) {
    renameSync(folder, `${folder}.real`);
    symlinkSync(target, folder);
    const r = await run(d, thread, attack, extra);
    assert.equal(r.code, 1, `${name} → ${target}: ${r.stderr}`);
    assert.equal(r.stdout, "", "no run was started");
    assert.match(r.stderr, new RegExp(`The thread folder \\.deerflow/threads/${thread}/${name} is a symbolic link, not a real folder\\. DeerFlow never follows it`));
    assert.equal(r.requests.length, 0, "the model was never asked");
    rmSync(folder);
    renameSync(`${folder}.real`, folder);
  }
  assert.equal(existsSync(join("/", pwned)), false);
  assert.deepEqual(readdirSync(d.dataDir).sort(), dataBefore, "nothing new in the data dir (no spill, no upload, no file)");
  assert.equal(existsSync(join(d.dataDir, "report.txt")), false);
  // With the folders real again, the thread carries on.
  const again = await run(d, thread, [{ content: "back" }]);
  assert.equal(again.code, 0, `${again.stderr}${JSON.stringify(again.end)}`);
});

test("outputs swapped for a link while the run is going: the next write is refused, the run ends with a readable error, nothing lands outside", async () => {
  const d = sandboxDirs();
  const outside = tempDir("outside");
  const thread = "swapped";
  const outputs = join(d.workspace, ".deerflow", "threads", thread, "outputs");
  writeFileSync(join(d.workspace, "many.txt"), Array.from({ length: 300 }, (_, i) => `match number ${i} `.padEnd(60, "x")).join("\n"));
  server.setScript([
    // The sandbox is acquired (thread folders checked) before the swap...
    { toolCalls: [{ name: "ls", args: { description: "x", path: "/mnt/user-data/outputs" } }] },
    {
      gate: { until: "swap-outputs", afterChunks: 1 },
      toolCalls: [
        { id: "w", name: "write_file", args: { description: "x", path: "/mnt/user-data/outputs/report.md", content: "report" } },
        { id: "via-ws", name: "write_file", args: { description: "x", path: `${W}/.deerflow/threads/${thread}/outputs/x.md`, content: "x" } },
        { id: "big", name: "write_file", args: { description: "x", path: `${W}/big.txt`, content: "y".repeat(1000) } },
        // A result over the budget: its spill into outputs/.tool-results is refused too.
        { id: "spill", name: "grep", args: { description: "x", pattern: "match", path: `${W}/many.txt`, max_results: 500 } },
      ],
    },
    { content: "could not write" },
  ]);
  const first = server.requests.length;
  const p = spawnCli(runArgs(d, thread));
  await server.gate("swap-outputs").reached;
  // ...then bash in a dev container replaces the bind-mounted folder, mid-run.
  rmSync(outputs, { recursive: true });
  symlinkSync(outside, outputs);
  server.gate("swap-outputs").open();
  const r = await p.done;
  const results = toolResults(server.requests[first + 2]);
  // The file tools check the folders at this use, not at the start of the run.
  assert.match(results.get("w")!, /^Error: Permission denied writing to file: \/mnt\/user-data\/outputs\/report\.md \(The thread folder \.deerflow\/threads\/swapped\/outputs is a symbolic link, not a real folder/);
  assert.match(results.get("via-ws")!, /^Error: Permission denied writing to file: .*\((The thread folder|Protected path)/);
  assert.equal(results.get("big"), "OK", "writes elsewhere go on");
  assert.match(results.get("spill")!, /^Found 300 matches/, "the oversized result stays in context instead");
  assert.equal(r.code, 1);
  assert.equal(r.lines.at(-1)!.data.status, "error");
  // The delivery scan refuses the linked folder: the run ends saying why.
  assert.match(r.lines.at(-1)!.data.error, /The thread folder \.deerflow\/threads\/swapped\/outputs is a symbolic link/);
  assert.deepEqual(readdirSync(outside), [], "no write and no spill through the link");
});

test("link loops, links out of the roots and a deep tree: ls, glob, grep and the delivery scan finish, enter no link, and find each file once", async () => {
  const d = sandboxDirs();
  const ws = d.workspace;
  const outside = tempDir("outside");
  writeFileSync(join(outside, "secret.txt"), "needle from outside\n");
  symlinkSync(".", join(ws, "loop"));
  mkdirSync(join(ws, "a"));
  symlinkSync("..", join(ws, "a", "up"));
  symlinkSync(outside, join(ws, "out"));
  let deep = join(ws, "deep");
  for (let i = 0; i < 120; i += 1) deep = join(deep, "d");
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, "leaf.txt"), "needle at the bottom\n");
  const outputs = join(ws, ".deerflow", "threads", "loops", "outputs");
  mkdirSync(outputs, { recursive: true });
  symlinkSync(".", join(outputs, "cycle"));
  symlinkSync(ws, join(outputs, "workspace-link"));
  const r = await run(d, "loops", [
    {
      toolCalls: [
        { id: "glob", name: "glob", args: { description: "x", pattern: "**/leaf.txt", path: W } },
        { id: "grep", name: "grep", args: { description: "x", pattern: "needle", path: W } },
        { id: "ls", name: "ls", args: { description: "x", path: W } },
        { id: "globOut", name: "glob", args: { description: "x", pattern: "**", path: "/mnt/user-data/outputs", include_dirs: true } },
      ],
    },
    // Its own turn: in the batch above, the parallel glob of outputs could race the write.
    { toolCalls: [{ id: "write", name: "write_file", args: { description: "x", path: "/mnt/user-data/outputs/result.md", content: "# Result\n" } }] },
    { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/result.md"] } }] },
    { content: "done" },
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.end!.data.status, "success", "the delivery scan finished over the looped outputs");
  const results = toolResults(r.requests[1]);
  const leaf = `${W}/deep/${"d/".repeat(120)}leaf.txt`;
  assert.equal(results.get("glob"), `Found 1 paths under ${W}\n1. ${leaf}`);
  assert.equal(results.get("grep"), `Found 1 matches under ${W}\n${leaf}:1: needle at the bottom`);
  assert.ok(!results.get("ls")!.includes("secret") && !results.get("ls")!.includes(outside));
  assert.equal(results.get("globOut"), "Found 2 paths under /mnt/user-data/outputs\n1. /mnt/user-data/outputs/cycle\n2. /mnt/user-data/outputs/workspace-link");
  const receipt = r.lines.find((l) => l.event === "custom" && l.data?.type === "run.delivery")!;
  assert.deepEqual(receipt.data.produced_paths, ["/mnt/user-data/outputs/result.md"]);
});

test("Cancel during a grep over a huge tree ends the run interrupted: the lease heartbeat ran during the walk and the grep stopped", async () => {
  const d = sandboxDirs();
  // Thousands of names for one big text file (hard links cost no space): a grep that would take far
  // longer than a cancel, made without writing gigabytes.
  const big = join(d.workspace, "big");
  mkdirSync(big);
  const line = `${"lorem ipsum dolor sit amet ".repeat(3)}\n`;
  writeFileSync(join(big, "source.txt"), line.repeat(Math.floor(900_000 / line.length)));
  for (let i = 0; i < 2000; i += 1) linkSync(join(big, "source.txt"), join(big, `copy-${i}.txt`));
  server.setScript([
    { toolCalls: [{ name: "grep", args: { description: "search everything", pattern: "never-present-zz", path: W } }] },
    { content: "should not be reached" },
  ]);
  const first = server.requests.length;
  const p = spawnCli(runArgs(d, "cancel-grep"));
  const runId = (await p.waitFor((l) => l.event === "metadata")).run_id as string;
  await p.waitFor((l) => l.event === "updates" && JSON.stringify(l.data).includes("never-present-zz"));
  // Another process cancels: the running one learns it only from its lease heartbeat.
  const c = await runCli(["cancel", ...base(d), "--run", runId]);
  assert.equal(c.lines[0]!.outcome, "cancelled", c.stderr);
  const r = await p.done;
  assert.equal(r.lines.at(-1)!.data.status, "interrupted");
  assert.equal(server.requests.length - first, 1, "the grep's result never reached the model");
});
