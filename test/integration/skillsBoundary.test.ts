// The skills view's trust boundary (issue 31 item 4) through the real CLI and `deerflow serve`
// (dist/cli.js), real files, links and hard links, and the scripted model server:
// - a 60,000-key SKILL.md (about 600 KB) is listed broken while the other skill of its root loads,
//   and under `deerflow serve` a run on that workspace and a /threads/search sent with it are both
//   answered (the old duplicate-key check held the process for about a minute: the tests' timeouts
//   are the guard, nothing is timed);
// - `.claude/skills/root -> ../..` with a SKILL.md at the workspace root is refused, and another
//   thread's upload is not readable through /mnt/skills by read_file, ls, glob or grep;
// - a host file hard-linked into a skill folder is not readable through /mnt/skills.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { runCli, sandboxDirs, scriptedRun, tempDir, useModelServer, type Dirs } from "./helpers/cli.js";
import { startServe } from "./helpers/serveProcess.js";
import { skillsViewRoot } from "../../extension/harness/skills/viewRoot.js";

const server = useModelServer();
const GUARD = { timeout: 10_000 };
const hostileMd = () => `---\nname: hostile\ndescription: d\n${Array.from({ length: 60_000 }, (_, i) => `k${i}: ${i}`).join("\n")}\n---\n`;
const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill. Use when asked for ${name}.\n---\nBody of ${name}.\n`;

function put(dir: string, text: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), text);
}

/** The workspace with the hostile skill beside a good one in .agents/skills; an empty HOME. */
function hostileWorkspace(): { d: Dirs; env: NodeJS.ProcessEnv } {
  const d = sandboxDirs();
  const root = join(d.workspace, ".agents", "skills");
  put(join(root, "hostile"), hostileMd());
  put(join(root, "good"), skillMd("good"));
  return { d, env: { HOME: tempDir("home") } };
}

const list = (d: Dirs, env: NodeJS.ProcessEnv) => runCli(["skills", "list", "--workspace", d.workspace, "--data-dir", d.dataDir], env);
const systemText = (req: RecordedRequest | undefined): string => textOf(req?.body?.messages?.find((m) => m.role === "system"));
const toolResults = (req: RecordedRequest | undefined): Map<string, string> =>
  new Map((req?.body?.messages ?? []).filter((m) => m.role === "tool").map((m) => [m.tool_call_id ?? "", textOf(m)]));

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
  if (existsSync(root)) visit(root);
  return hits;
}

test("skills list: a 60,000-key SKILL.md is reported broken while the other skill in its root is listed", GUARD, async () => {
  const { d, env } = hostileWorkspace();
  assert.ok(hostileMd().length > 590_000);
  const r = await list(d, env);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.lines.filter((l) => l.status === "loaded").map((l) => l.name), ["good"]);
  const broken = r.lines.filter((l) => l.status === "broken");
  assert.deepEqual(broken.map((l) => [l.path, l.diagnostics.map((x: { code: string }) => x.code)]), [[join(d.workspace, ".agents", "skills", "hostile", "SKILL.md"), ["frontmatter_too_large"]]]);
  assert.match(broken[0]!.diagnostics[0].message, /^The front matter is \d+ bytes; at most 65536 are read \(the skill is not loaded\)$/);
});

test("deerflow serve: a run on a workspace with a 60,000-key skill and a /threads/search sent with it are both answered; the run offers the good skill", GUARD, async () => {
  const { d, env } = hostileWorkspace();
  const serve = await startServe(["--workspace", `main=${d.workspace}`, "--data-dir", d.dataDir, "--model", "scripted", "--base-url", server.url, "--sandbox", "local"], env);
  try {
    const client = serve.client();
    const before = await client.threads.create();
    server.setScript([{ content: "Scanned." }]);
    const first = server.requests.length;
    const thread = await client.threads.create();
    const [values, found] = await Promise.all([
      client.runs.wait(thread.thread_id, "lead_agent", { input: { messages: [{ role: "user", content: "which skills?" }] } }) as Promise<{ messages: Array<{ content: unknown }> }>,
      client.threads.search({ limit: 10 }),
    ]);
    assert.equal(values.messages.at(-1)!.content, "Scanned.");
    assert.ok(found.some((t) => t.thread_id === before.thread_id), "the search is answered with the threads");
    const system = systemText(server.requests[first]);
    assert.ok(system.includes("<name>good</name>"), system.slice(0, 2000));
    assert.ok(!system.includes("hostile"), "the broken skill is not offered");
  } finally {
    await serve.stop();
  }
});

test("`.claude/skills/root -> ../..` with a SKILL.md at the workspace root is refused; another thread's upload is readable through /mnt/skills by no tool", async () => {
  const d = sandboxDirs();
  const env = { HOME: tempDir("home") };
  const marker = `PRIVATE-UPLOAD-${process.pid}-${Date.now()}`;
  // Thread A's private upload, under .deerflow/threads/<A>/uploads.
  const source = join(tempDir("upload"), "private.txt");
  writeFileSync(source, `${marker}\n`);
  const a = await scriptedRun(server, d, [{ content: "Kept." }], "keep this file", ["--upload", source], env);
  assert.equal(a.code, 0, a.stderr);
  const uploaded = join(d.workspace, ".deerflow", "threads", a.threadId, "uploads", "private.txt");
  assert.ok(readFileSync(uploaded, "utf8").includes(marker), "thread A's upload is in its thread folder");

  // What a sandbox can plant in the workspace: a skill folder that is the workspace itself.
  writeFileSync(join(d.workspace, "SKILL.md"), skillMd("root"));
  const claude = join(d.workspace, ".claude", "skills");
  mkdirSync(claude, { recursive: true });
  symlinkSync("../..", join(claude, "root"));
  put(join(d.workspace, ".agents", "skills", "good"), skillMd("good"));

  const listed = await list(d, env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(listed.lines.filter((l) => l.status === "loaded").map((l) => l.name), ["good"]);
  const refused = listed.lines.filter((l) => l.status === "broken");
  assert.equal(refused.length, 1, listed.stdout);
  assert.equal(refused[0]!.diagnostics[0].code, "skill_folder_refused");
  assert.equal(
    refused[0]!.diagnostics[0].message,
    `${join(claude, "root")} is not read as a skill: it is the workspace folder itself (its files would be in /mnt/skills, which every thread reads)`,
  );

  const via = `/mnt/skills/project/root/.deerflow/threads/${a.threadId}/uploads/private.txt`;
  const b = await scriptedRun(
    server,
    d,
    [
      {
        toolCalls: [
          { id: "c_via", name: "read_file", args: { description: "read", path: via } },
          { id: "c_md", name: "read_file", args: { description: "read", path: "/mnt/skills/project/root/SKILL.md" } },
          { id: "c_direct", name: "read_file", args: { description: "read", path: `/mnt/user-data/workspace/.deerflow/threads/${a.threadId}/uploads/private.txt` } },
          { id: "c_ls", name: "ls", args: { description: "ls", path: "/mnt/skills/project" } },
          { id: "c_glob", name: "glob", args: { description: "glob", pattern: "**/*", path: "/mnt/skills" } },
          { id: "c_grep", name: "grep", args: { description: "grep", pattern: marker, path: "/mnt/skills", literal: true } },
        ],
      },
      { content: "Nothing there." },
    ],
    "look for other threads' files",
    [],
    env,
  );
  assert.equal(b.code, 0, b.stderr);
  assert.notEqual(b.threadId, a.threadId);
  const results = toolResults(b.requests[1]);
  assert.equal(results.size, 6, JSON.stringify([...results]));
  for (const [id, text] of results) assert.ok(!text.includes(marker), `${id}: ${text}`);
  assert.equal(results.get("c_via"), `Error: File not found: ${via}`);
  assert.equal(results.get("c_md"), "Error: File not found: /mnt/skills/project/root/SKILL.md");
  assert.match(results.get("c_direct")!, /^Error: /, "the same file by its workspace path is refused, as before");
  assert.ok(results.get("c_ls")!.includes("/mnt/skills/project/good") && !results.get("c_ls")!.includes("root"), results.get("c_ls"));
  assert.ok(!results.get("c_glob")!.includes(".deerflow") && results.get("c_glob")!.includes("/mnt/skills/project/good/SKILL.md"), results.get("c_glob"));
  assert.deepEqual(filesContaining(skillsViewRoot(d.dataDir, d.workspace), marker), [], "no copy of the upload in the view");
});

test("a host file hard-linked into a skill folder is not readable through /mnt/skills; the run says it was left out", async () => {
  const d = sandboxDirs();
  const env = { HOME: tempDir("home") };
  const marker = `HOST-SECRET-${process.pid}-${Date.now()}`;
  // Outside the workspace, on the same file system (both under the temp folder): a hard link is possible.
  const hostFile = join(tempDir("outside"), "host-secret.txt");
  writeFileSync(hostFile, `${marker}\n`);
  const good = join(d.workspace, ".agents", "skills", "good");
  put(good, skillMd("good"));
  linkSync(hostFile, join(good, "notes.md"));

  const r = await scriptedRun(
    server,
    d,
    [
      {
        toolCalls: [
          { id: "c_read", name: "read_file", args: { description: "read", path: "/mnt/skills/project/good/notes.md" } },
          { id: "c_md", name: "read_file", args: { description: "read", path: "/mnt/skills/project/good/SKILL.md" } },
          { id: "c_grep", name: "grep", args: { description: "grep", pattern: marker, path: "/mnt/skills", literal: true } },
        ],
      },
      { content: "Done." },
    ],
    "read the skill's notes",
    [],
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  const results = toolResults(r.requests[1]);
  for (const [id, text] of results) assert.ok(!text.includes(marker), `${id}: ${text}`);
  assert.equal(results.get("c_read"), "Error: File not found: /mnt/skills/project/good/notes.md");
  assert.match(results.get("c_md")!, /Body of good\./, "the rest of the skill is there");
  assert.match(r.stderr, /Skill "good": notes\.md has 2 hard links \(its other names may be any file on this disk\); it is not in \/mnt\/skills/);
  assert.deepEqual(filesContaining(skillsViewRoot(d.dataDir, d.workspace), marker), []);
  assert.equal(readFileSync(hostFile, "utf8"), `${marker}\n`, "the host file is untouched");
});
