// Protected paths: which writes would make code run on the host, classified on the path as written
// and on where its symlinks lead, case-folded; refused through the one write resolver with an error
// that names the rule and no host path. Real folders and real symlinks.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HarnessError } from "../../../extension/harness/errors.js";
import {
  ProtectedPathError,
  classifyWrite,
  foldSegment,
  type ProtectedRuleId,
} from "../../../extension/harness/trust/protectedPaths.js";
import { resolveReadPath, resolveWritePath } from "../../../extension/harness/trust/toolPaths.js";
import { makeFixture } from "../sandbox/helpers.js";

const fx = makeFixture("t1");
after(() => fx.cleanup());
const { dirs, ws } = fx;
const W = "/mnt/user-data/workspace";

function ruleOf(hostPath: string): ProtectedRuleId | undefined {
  const verdict = classifyWrite(hostPath, dirs);
  return verdict.protected ? verdict.rule.id : undefined;
}

test("each protected place is classified with its rule, at any depth", () => {
  const cases: Array<[string, ProtectedRuleId | undefined]> = [
    [".devcontainer/devcontainer.json", "devcontainer"],
    [".devcontainer/Dockerfile", "devcontainer"],
    [".devcontainer", "devcontainer"],
    [".devcontainer.json", "devcontainer"],
    [".git/config", "git"],
    [".git/hooks/pre-commit", "git"],
    [".git", "git"],
    ["vendor/lib/.git/hooks/post-checkout", "git"],
    [".husky/pre-commit", "husky"],
    [".vscode/tasks.json", "vscode"],
    [".vscode/settings.json", "vscode"],
    [".idea/workspace.xml", "idea"],
    [".idea", "idea"],
    [".pre-commit-config.yaml", "pre_commit"],
    ["lefthook.yml", "lefthook"],
    [".lefthook.yml", "lefthook"],
    ["lefthook.yaml", "lefthook"],
    ["lefthook-local.yml", "lefthook"],
    [".lefthook-local.toml", "lefthook"],
    [".config/lefthook.yml", "lefthook"],
    ["team.code-workspace", "code_workspace"],
    ["tools/all.code-workspace", "code_workspace"],
    [".gitmodules", "gitmodules"],
    [".envrc", "envrc"],
    ["services/api/.envrc", "envrc"],
    ["packages/app/.pre-commit-config.yaml", "pre_commit"],
    // Package managers' configuration (issue 31 item 3): what makes npm, yarn, pnpm, bun, pip, uv,
    // poetry run code or install from elsewhere, wherever one may run.
    [".npmrc", "package_manager"],
    ["packages/app/.npmrc", "package_manager"],
    [".yarnrc", "package_manager"],
    [".yarnrc.yml", "package_manager"],
    [".pnpmfile.cjs", "package_manager"],
    ["bunfig.toml", "package_manager"],
    [".bunfig.toml", "package_manager"],
    [".venv/pip.conf", "package_manager"],
    ["pip.ini", "package_manager"],
    ["uv.toml", "package_manager"],
    ["services/api/poetry.toml", "package_manager"],
    [".pypirc", "package_manager"],
    ["node_modules/.bin/mcp-server-filesystem", "node_bin"],
    ["node_modules/.bin", "node_bin"],
    ["packages/app/node_modules/.bin/tsc", "node_bin"],
    ["node_modules/typescript/bin/tsc", undefined],
    ["node_modules/.binx/x", undefined],
    [".bin/x", undefined],
    [".npmrc.example", undefined],
    ["pyproject.toml", undefined],
    ["package.json", undefined],
    [".python-version", undefined],
    [".deerflow/.gitignore", "thread_data"],
    [".deerflow/threads/other/outputs/x.txt", "thread_data"],
    [".deerflow/threads/t1/notes.txt", "thread_data"],
    ["src/app.ts", undefined],
    [".gitignore", undefined],
    [".github/workflows/ci.yml", undefined],
    [".vscode-test/run.js", undefined],
    ["docs/.deerflow/x", undefined],
    [".code-workspace", undefined],
    ["lefthook.md", undefined],
    ["pre-commit-config.yaml", undefined],
    [".envrc.example", undefined],
    [".ideas/x", undefined],
  ];
  for (const [rel, expected] of cases) assert.equal(ruleOf(join(ws, rel)), expected, rel);
});

test("names are compared as a case-insensitive volume sees them", () => {
  const cases: Array<[string, ProtectedRuleId]> = [
    [".DeVcOnTaInEr.json", "devcontainer"],
    [".DEVCONTAINER/devcontainer.json", "devcontainer"],
    [".Git/hooks/pre-commit", "git"],
    [".git./config", "git"], // Windows drops trailing dots and spaces
    [".git /config", "git"],
    [".git::$INDEX_ALLOCATION/config", "git"], // and reads name:stream as name
    [".hu\u017Fky/pre-commit", "husky"], // the long s folds onto s
    [".hus\u212Ay/pre-commit", "husky"], // the Kelvin sign folds onto k
    [".VSCode/tasks.json", "vscode"],
    ["Team.Code-Workspace", "code_workspace"],
    ["LeftHook.YML", "lefthook"],
    [".ENVRC", "envrc"],
    [".DeerFlow/threads/t1/outputs/x", "thread_data"],
    [".NPMRC", "package_manager"],
    ["Pip.Conf", "package_manager"],
    ["uv.toml.", "package_manager"],
    ["Node_Modules/.BIN/x", "node_bin"],
  ];
  for (const [rel, expected] of cases) assert.equal(ruleOf(join(ws, rel)), expected, rel);
  assert.equal(foldSegment(".DeVcOnTaInEr.json"), ".devcontainer.json");
});

test("the thread's own uploads and outputs are writable, but not a protected name inside them", () => {
  assert.equal(ruleOf(join(dirs.outputs, "report.md")), undefined);
  assert.equal(ruleOf(join(dirs.uploads, "data.csv")), undefined);
  assert.equal(ruleOf(join(dirs.outputs, ".tool-results", "bash-1.log")), undefined);
  assert.equal(ruleOf(join(dirs.outputs, "repo", ".git", "config")), "git");
  // Thread ids are case-sensitive: T1 is another thread's data, not this thread's.
  assert.equal(ruleOf(join(ws, ".deerflow", "threads", "T1", "outputs", "x")), "thread_data");
});

test("a path a symlink leads into a protected place is protected: the link, a parent link, a dangling link", () => {
  mkdirSync(join(ws, ".git", "hooks"), { recursive: true });
  mkdirSync(join(ws, ".vscode"));
  symlinkSync(join(ws, ".git"), join(ws, "innocent"));
  symlinkSync(".vscode", join(ws, "editor"));
  symlinkSync(join(ws, ".git", "hooks", "post-checkout"), join(ws, "notes.txt"));
  mkdirSync(join(ws, "nested"));
  symlinkSync("../.git/hooks", join(ws, "nested", "hooks"));
  assert.equal(ruleOf(join(ws, "innocent", "config")), "git");
  assert.equal(ruleOf(join(ws, "innocent")), "git");
  assert.equal(ruleOf(join(ws, "editor", "tasks.json")), "vscode");
  assert.equal(ruleOf(join(ws, "notes.txt")), "git", "a dangling link would create its target");
  assert.equal(ruleOf(join(ws, "nested", "hooks", "pre-push")), "git");
  symlinkSync(dirs.outputs, join(ws, "out"));
  assert.equal(ruleOf(join(ws, "out", "report.md")), undefined, "a link to this thread's outputs is fine");
});

test("the write resolver refuses with path_protected naming the rule, never a host path; reads are not affected", () => {
  writeFileSync(join(ws, ".git", "config"), "[core]\n");
  for (const [path, pattern] of [
    [`${W}/.git/config`, /\.git\/\*\*/],
    [`${W}/.devcontainer/devcontainer.json`, /\.devcontainer\/\*\*, \.devcontainer\.json/],
    [`${W}/innocent/hooks/pre-commit`, /\.git\/\*\*/],
    [`${W}/.deerflow/threads/other/outputs/x.txt`, /\.deerflow\/\*\* outside this thread's uploads and outputs/],
  ] as const) {
    assert.throws(
      () => resolveWritePath(path, dirs),
      (err: unknown) => {
        assert.ok(err instanceof ProtectedPathError && err instanceof HarnessError);
        assert.equal(err.code, "path_protected");
        assert.match(err.message, /^Protected path \(/);
        assert.match(err.message, pattern);
        assert.ok(!err.message.includes(fx.root), err.message);
        return true;
      },
      path,
    );
  }
  assert.equal(resolveReadPath(`${W}/.git/config`, dirs), join(ws, ".git", "config"));
  assert.equal(resolveWritePath(`${W}/src/ok.ts`, dirs), join(ws, "src", "ok.ts"));
  assert.equal(resolveWritePath("/mnt/user-data/outputs/ok.md", dirs), join(dirs.outputs, "ok.md"));
});
