// The skills view's trust boundary (issue 31 item 4), below the CLI tests
// (test/integration/skillsBoundary.test.ts), with real folders, links and hard links:
// - SKILL.md front matter is bounded (bytes, keys) and its duplicate-key check is linear: a 60,000-key
//   file is reported broken while the other skills load (the test's timeout is the guard; the old
//   check took about a minute);
// - no root, namespace or skill folder may be the workspace, hold `.deerflow`, or lie in a protected
//   path; `.deerflow` is never copied, at any depth; a file with a second hard link is left out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_FRONT_MATTER_BYTES, MAX_FRONT_MATTER_KEYS, parseSkillMd, splitSkillMarkdown } from "../../../extension/harness/skills/parse.js";
import { buildCatalog } from "../../../extension/harness/skills/catalog.js";
import { discoverSkills, skillRoots } from "../../../extension/harness/skills/discover.js";
import { syncSkillsView } from "../../../extension/harness/skills/view.js";

const GUARD = { timeout: 10_000 };
const codes = (d: ReadonlyArray<{ code: string }>) => d.map((x) => x.code);
const noState = { disabled: new Set<string>(), diagnostics: [] };
const keys = (n: number, indent = "") => Array.from({ length: n }, (_, i) => `${indent}k${i}: ${i}`).join("\n");
const skillMd = (name: string, extra = "") => `---\nname: ${name}\ndescription: The ${name} skill.\n${extra}---\nBody of ${name}.\n`;

function tree(): { base: string; ws: string; home: string; data: string; outside: string; done: () => void } {
  const base = mkdtempSync(join(tmpdir(), "deerflow-skills-boundary-"));
  const dirs = { ws: join(base, "ws"), home: join(base, "home"), data: join(base, "data"), outside: join(base, "outside") };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  return { base, ...dirs, done: () => rmSync(base, { recursive: true, force: true }) };
}

function put(dir: string, text: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), text);
}

/** Every file below `root`, relative, links not followed. */
function filesBelow(root: string, rel = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...filesBelow(root, child));
    else out.push(child);
  }
  return out.sort();
}

test("a 60,000-key SKILL.md (about 600 KB) is reported broken by its size; the other skills in the root still load", GUARD, async () => {
  const t = tree();
  try {
    const root = join(t.ws, ".agents", "skills");
    put(join(root, "hostile"), `---\nname: hostile\ndescription: d\n${keys(60_000)}\n---\n`);
    put(join(root, "good"), skillMd("good"));
    const catalog = buildCatalog(await discoverSkills(skillRoots({ workspaceFolder: t.ws, workspaceTrusted: true, dataDir: t.data, home: t.home, env: {} })), noState);
    assert.deepEqual(catalog.skills.map((s) => s.meta.name), ["good"]);
    assert.equal(catalog.broken.length, 1);
    assert.equal(catalog.broken[0]!.hostDir, join(root, "hostile"));
    assert.deepEqual(codes(catalog.broken[0]!.diagnostics), ["frontmatter_too_large"]);
    assert.match(catalog.broken[0]!.diagnostics[0]!.message, new RegExp(`^The front matter is \\d+ bytes; at most ${MAX_FRONT_MATTER_BYTES} are read`));
  } finally {
    t.done();
  }
});

test("front matter bounds: more than 1,000 keys at any depth is refused by count; a duplicate key is found linearly, with the yaml package's error and line", GUARD, () => {
  // Under the byte cap, over the key cap: at the top level, and inside metadata.
  const flat = parseSkillMd(`---\nname: a\ndescription: d\n${keys(5000)}\n---\n`, "a");
  assert.ok(Buffer.byteLength(keys(5000)) < MAX_FRONT_MATTER_BYTES);
  assert.equal(flat.meta, undefined);
  assert.deepEqual(codes(flat.diagnostics), ["frontmatter_too_many_keys"]);
  assert.equal(flat.diagnostics[0]!.message, `The front matter has more than ${MAX_FRONT_MATTER_KEYS} keys; at most ${MAX_FRONT_MATTER_KEYS} are read (the skill is not loaded)`);
  const nested = parseSkillMd(`---\nname: a\ndescription: d\nmetadata:\n${keys(MAX_FRONT_MATTER_KEYS, "  ")}\n---\n`, "a");
  assert.deepEqual(codes(nested.diagnostics), ["frontmatter_too_many_keys"], "the keys of every mapping count");
  const atCap = parseSkillMd(`---\nname: a\ndescription: d\nmetadata:\n${keys(MAX_FRONT_MATTER_KEYS - 3, "  ")}\n---\n`, "a");
  assert.equal(atCap.meta?.name, "a", "exactly the cap loads");

  // A duplicate after 990 keys: the linear check reports the first duplicate's line (file line: the fence is line 1).
  const dup = parseSkillMd(`---\nname: a\ndescription: d\nmetadata:\n${keys(990, "  ")}\n  k5: again\nname: b\n---\n`, "a");
  assert.equal(dup.meta, undefined);
  assert.deepEqual(codes(dup.diagnostics), ["yaml_invalid"]);
  assert.equal(dup.diagnostics[0]!.message, "Invalid YAML front-matter: Map keys must be unique\n  line 995:   k5: again");
  const flow = parseSkillMd(`---\nname: a\ndescription: d\nx: {a: 1, "a": 2}\n---\n`, "a");
  assert.equal(flow.diagnostics[0]!.message, 'Invalid YAML front-matter: Map keys must be unique\n  line 4: x: {a: 1, "a": 2}');
  // The package's rule: 1 and "1" are two keys; the same key in two mappings is no duplicate.
  const distinct = parseSkillMd(`---\nname: a\ndescription: d\nmetadata: {1: p, "1": q}\nhooks:\n  name: n\n---\n`, "a");
  assert.equal(distinct.meta?.name, "a");
  assert.deepEqual(distinct.meta?.metadata, { 1: "q" }, "toJS merges them as JavaScript does; both were accepted");
});

test("the fence is found in linear time: `---` then a megabyte of blanks is no front matter; the regex's matches are kept", GUARD, () => {
  assert.equal(splitSkillMarkdown(`---${" \n".repeat(500_000)}`), undefined);
  assert.equal(splitSkillMarkdown(`---\n${"\n--- x".repeat(100_000)}`), undefined);
  assert.deepEqual(codes(parseSkillMd(`---${" \n".repeat(500_000)}`, "a").diagnostics), ["frontmatter_missing"]);
  const cases: Array<[string, { frontMatter: string; body: string } | undefined]> = [
    ["---\nname: a\n---\nbody\n", { frontMatter: "name: a", body: "body\n" }],
    ["\uFEFF---  \nname: a\n---\n\n\nbody", { frontMatter: "name: a", body: "body" }],
    ["---\r\nname: a\r\n---\r\nbody", { frontMatter: "name: a\r", body: "body" }],
    ["---\nname: a\n---", { frontMatter: "name: a", body: "" }],
    ["---\nname: a\n--- x\n---\nb", { frontMatter: "name: a\n--- x", body: "b" }],
    ["---\nname: a\n---x\n", undefined],
    ["---\n---\n", undefined],
    ["name: a\n---\n", undefined],
  ];
  for (const [text, expected] of cases) assert.deepEqual(splitSkillMarkdown(text), expected, JSON.stringify(text));
});

test("refused folders: the workspace itself, a folder holding .deerflow, thread data and protected paths, as a skill, a namespace or a root; .deerflow/skills still loads", async () => {
  const t = tree();
  try {
    const ws = t.ws;
    const claude = join(ws, ".claude", "skills");
    const agents = join(ws, ".agents", "skills");
    mkdirSync(claude, { recursive: true });
    mkdirSync(agents, { recursive: true });
    writeFileSync(join(ws, "SKILL.md"), skillMd("root"));
    symlinkSync("../..", join(claude, "root"));
    const uploads = join(ws, ".deerflow", "threads", "t1", "uploads");
    put(uploads, skillMd("uploaded"));
    symlinkSync("../../.deerflow/threads/t1/uploads", join(claude, "uploaded"));
    put(join(ws, ".vscode"), skillMd("vscode"));
    symlinkSync("../../.vscode", join(claude, "vscode"));
    put(join(ws, "pkg", ".git"), skillMd("git"));
    symlinkSync("../../pkg/.git", join(claude, "git"));
    put(join(ws, "other"), skillMd("other"));
    mkdirSync(join(ws, "other", ".deerflow"));
    symlinkSync("../../other", join(claude, "other"));
    // A namespace that leads into the thread data: not entered, said once.
    symlinkSync("../../.deerflow/threads", join(agents, "threads"));
    put(join(ws, ".deerflow", "skills", "own"), skillMd("own"));
    put(join(agents, "fine"), skillMd("fine"));
    // A user root (outside the workspace) whose skill folder is a link to the workspace: refused too.
    const userRoot = join(t.home, ".claude", "skills");
    mkdirSync(userRoot, { recursive: true });
    symlinkSync(ws, join(userRoot, "ws-link"));

    const catalog = buildCatalog(await discoverSkills(skillRoots({ workspaceFolder: ws, workspaceTrusted: true, dataDir: t.data, home: t.home, env: {} })), noState);
    assert.deepEqual(catalog.skills.map((s) => s.meta.name), ["fine", "own"]);
    const refused = new Map(catalog.broken.map((b) => [b.diagnostics[0]!.message.split(" ")[0]!, b]));
    for (const b of catalog.broken) assert.deepEqual(codes(b.diagnostics), ["skill_folder_refused"]);
    const reason = (link: string) => refused.get(link)?.diagnostics[0]!.message ?? `(${link} not refused)`;
    assert.match(reason(join(claude, "root")), /is not read as a skill: it is the workspace folder itself \(its files would be in \/mnt\/skills, which every thread reads\)$/);
    assert.match(reason(join(userRoot, "ws-link")), /it is the workspace folder itself/);
    assert.match(reason(join(claude, "uploaded")), /it lies in a protected path of the workspace \(\.deerflow\/\*\* outside this thread's uploads and outputs: the harness's own data and other threads' files;/);
    assert.match(reason(join(claude, "vscode")), /protected path of the workspace \(\.vscode\/\*\*: /);
    assert.match(reason(join(claude, "git")), /protected path of the workspace \(\.git\/\*\*: /);
    assert.match(reason(join(claude, "other")), /it holds \.deerflow, DeerFlow's thread data with every thread's uploads and outputs/);
    assert.equal(catalog.broken.length, 6);
    assert.deepEqual(
      catalog.diagnostics.map((d) => [d.code, d.message.split(":")[0]]),
      [["folder_refused", `${join(agents, "threads")} is not searched for skills`]],
    );

    // A project root that is the workspace (or the thread data) is refused whole.
    rmSync(claude, { recursive: true });
    symlinkSync("..", claude);
    rmSync(agents, { recursive: true });
    symlinkSync("../.deerflow/threads", agents);
    const roots = buildCatalog(await discoverSkills(skillRoots({ workspaceFolder: ws, workspaceTrusted: true, dataDir: t.data, home: t.home, env: {} })), noState);
    assert.deepEqual(roots.skills.map((s) => s.meta.name), ["own"]);
    assert.deepEqual(roots.diagnostics.map((d) => d.code), ["root_refused", "root_refused"]);
    assert.match(roots.diagnostics[0]!.message, /\.agents\/skills is not searched for skills: it lies in a protected path of the workspace \(\.deerflow\/\*\*/);
    assert.match(roots.diagnostics[1]!.message, /\.claude\/skills is not searched for skills: it is the workspace folder itself/);
  } finally {
    t.done();
  }
});

test("a user root is the user's choice: opened as the workspace (a skill author's), its skills load; a skill folder above the workspace is refused", async () => {
  const t = tree();
  try {
    // The workspace IS ~/.claude/skills, with thread data in it.
    const userRoot = join(t.home, ".claude", "skills");
    put(join(userRoot, "mine"), skillMd("mine"));
    mkdirSync(join(userRoot, ".deerflow", "threads", "t1", "uploads"), { recursive: true });
    const agentsRoot = join(t.home, ".agents", "skills");
    mkdirSync(agentsRoot, { recursive: true });
    writeFileSync(join(t.base, "SKILL.md"), skillMd("above"));
    symlinkSync(t.base, join(agentsRoot, "above"));
    const catalog = buildCatalog(await discoverSkills(skillRoots({ workspaceFolder: userRoot, workspaceTrusted: true, dataDir: t.data, home: t.home, env: {} })), noState);
    assert.deepEqual(catalog.skills.map((s) => s.meta.name), ["mine"]);
    assert.deepEqual(catalog.diagnostics, []);
    assert.deepEqual(catalog.broken.map((b) => b.diagnostics[0]!.message), [`${join(agentsRoot, "above")} is not read as a skill: it holds the workspace folder (its files would be in /mnt/skills, which every thread reads)`]);
  } finally {
    t.done();
  }
});

test("the view: .deerflow at any depth is not copied, a file with a second hard link is left out and said, a hard-linked SKILL.md is refused", async () => {
  const t = tree();
  try {
    const root = join(t.ws, ".agents", "skills");
    const good = join(root, "good");
    put(good, skillMd("good"));
    writeFileSync(join(good, "plain.md"), "plain\n");
    for (const name of [".deerflow", ".DeerFlow"]) {
      mkdirSync(join(good, "deep", name, "threads", "t1", "uploads"), { recursive: true });
      writeFileSync(join(good, "deep", name, "threads", "t1", "uploads", "secret.txt"), "UPLOADED-SECRET\n");
    }
    const hostSecret = join(t.outside, "host-secret.txt");
    writeFileSync(hostSecret, "HOST-SECRET\n");
    linkSync(hostSecret, join(good, "notes.md"));
    // A SKILL.md that is a second name of a host file.
    mkdirSync(join(root, "linked"));
    writeFileSync(join(t.outside, "SKILL.md"), skillMd("linked"));
    linkSync(join(t.outside, "SKILL.md"), join(root, "linked", "SKILL.md"));

    const catalog = buildCatalog(await discoverSkills(skillRoots({ workspaceFolder: t.ws, workspaceTrusted: true, dataDir: t.data, home: t.home, env: {} })), noState);
    assert.deepEqual(catalog.skills.map((s) => s.meta.name), ["good"]);
    assert.deepEqual(catalog.broken.map((b) => codes(b.diagnostics)), [["skill_file_hard_linked"]]);
    assert.match(catalog.broken[0]!.diagnostics[0]!.message, /^SKILL\.md has 2 hard links: its other names may be any file on this disk, so it is not read; the skill is not loaded$/);

    const view = join(t.data, "view");
    const notes = await syncSkillsView(view, catalog.skills);
    assert.deepEqual(filesBelow(view), ["project/good/SKILL.md", "project/good/plain.md"]);
    assert.equal(existsSync(join(view, "project", "good", "deep")), true, "the folder above .deerflow is there, empty");
    assert.deepEqual(notes.get("good")?.map((d) => [d.code, d.message]), [["hard_link", "notes.md has 2 hard links (its other names may be any file on this disk); it is not in /mnt/skills"]]);

    // A file copied earlier that gains a second name is taken out at the next sync.
    rmSync(join(good, "notes.md"));
    writeFileSync(join(good, "notes.md"), "own notes\n");
    await syncSkillsView(view, catalog.skills);
    assert.ok(filesBelow(view).includes("project/good/notes.md"));
    linkSync(join(good, "notes.md"), join(t.outside, "second-name.md"));
    await syncSkillsView(view, catalog.skills);
    assert.ok(!filesBelow(view).includes("project/good/notes.md"));
  } finally {
    t.done();
  }
});
