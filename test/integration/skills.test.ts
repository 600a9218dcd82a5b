// Agent Skills (issue 24) through the real CLI (dist/cli.js) and the scripted model server: skills
// copied unchanged from anthropics/skills into a workspace's .agents/skills and .claude/skills are
// listed, offered in DeerFlow's <skill_system>, readable at /mnt/skills (and not writable), a
// `/name` prompt injects the activation with the file's sha256, allowed-tools restricts, a
// disabled skill is listed in <disabled_skills> and refused, a broken SKILL.md is reported.
// One workspace for the file (its skills never change after `before`); each run is its own thread.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { RecordedRequest } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { runCli, sandboxDirs, scriptedRun, tempDir, useModelServer, type Dirs } from "./helpers/cli.js";
import { settings, startHarness } from "./helpers/server.js";

const server = useModelServer();
const FIXTURES = resolve("test/fixtures/skills/anthropics");
let dirs: Dirs;
/** The user's home for every CLI call: empty, so the machine's own ~/.claude/skills never leak in. */
let env: NodeJS.ProcessEnv;
/** Outside every skill root: what a hostile link in a skill folder points at. */
let secretFile: string;

const RESTRICTED_MD = "---\nname: restricted\ndescription: Reads only. Use when asked for a read-only review.\nallowed-tools: read_file\n---\n# Restricted\nOnly read.\n";
const DISABLED_MD = "---\nname: secret-plans\ndescription: Internal plans.\n---\nDo not read me.\n";
// An unquoted flow sequence that never closes: not YAML.
const BROKEN_MD = "---\nname: broken\ndescription: [never closed\n---\nbody\n";

before(async () => {
  dirs = sandboxDirs();
  env = { HOME: tempDir("home") };
  const agents = join(dirs.workspace, ".agents", "skills");
  const claude = join(dirs.workspace, ".claude", "skills");
  mkdirSync(agents, { recursive: true });
  mkdirSync(claude, { recursive: true });
  cpSync(join(FIXTURES, "brand-guidelines"), join(agents, "brand-guidelines"), { recursive: true });
  cpSync(join(FIXTURES, "internal-comms"), join(claude, "internal-comms"), { recursive: true });
  for (const [name, md] of [["restricted", RESTRICTED_MD], ["secret-plans", DISABLED_MD], ["broken", BROKEN_MD]] as const) {
    mkdirSync(join(agents, name));
    writeFileSync(join(agents, name, "SKILL.md"), md);
  }
  secretFile = join(tempDir("outside"), "secret.txt");
  writeFileSync(secretFile, "TOP-SECRET-HOST-FILE\n");
  symlinkSync(secretFile, join(agents, "restricted", "leak.txt"));
  // A whole skill folder linked out of the workspace: a project root may not pull host files in.
  const outsideSkill = join(dirname(secretFile), "evil");
  mkdirSync(outsideSkill);
  writeFileSync(join(outsideSkill, "SKILL.md"), "---\nname: evil\ndescription: Reads the host.\n---\n");
  symlinkSync(outsideSkill, join(agents, "evil"));
  // Disabled as a user does it: DeerFlow's skills.<name>.enabled in <data-dir>/extensions_config.json.
  const disabled = await runCli(["skills", "disable", "secret-plans", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir], env);
  assert.equal(disabled.code, 0, disabled.stderr);
});

after(() => {
  for (const d of [dirs.workspace, dirs.dataDir, env.HOME!]) rmSync(d, { recursive: true, force: true });
});

const run = (script: Parameters<typeof scriptedRun>[2], prompt: string, extra: string[] = []) => scriptedRun(server, dirs, script, prompt, extra, env);
const systemText = (req: RecordedRequest | undefined): string => textOf(req?.body?.messages?.find((m) => m.role === "system"));
const toolResults = (req: RecordedRequest | undefined): Map<string, string> =>
  new Map((req?.body?.messages ?? []).filter((m) => m.role === "tool").map((m) => [m.tool_call_id ?? "", textOf(m)]));
const toolNames = (req: RecordedRequest | undefined): string[] => (req?.body?.tools ?? []).map((t) => t.function.name).sort();
const read = (id: string, path: string) => ({ id, name: "read_file", args: { description: "read", path } });

test("skills list: project skills from .agents/skills and .claude/skills, a disabled one, an unknown name refused, a broken SKILL.md reported beside the rest", async () => {
  const unknown = await runCli(["skills", "disable", "no-such-skill", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir], env);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no skill named "no-such-skill"/);

  const r = await runCli(["skills", "list", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir], env);
  assert.equal(r.code, 0, r.stderr);
  const byName = new Map(r.lines.filter((l) => l.status === "loaded").map((l) => [l.name as string, l]));
  assert.deepEqual([...byName.keys()], ["brand-guidelines", "internal-comms", "restricted", "secret-plans"]);
  assert.equal(byName.get("brand-guidelines")!.path, join(dirs.workspace, ".agents", "skills", "brand-guidelines", "SKILL.md"));
  assert.equal(byName.get("internal-comms")!.path, join(dirs.workspace, ".claude", "skills", "internal-comms", "SKILL.md"));
  assert.equal(byName.get("internal-comms")!.location, "/mnt/skills/project/internal-comms/SKILL.md");
  assert.equal(byName.get("internal-comms")!.scope, "project");
  assert.deepEqual(byName.get("restricted")!.allowed_tools, ["read_file"]);
  assert.equal(byName.get("secret-plans")!.enabled, false);
  assert.equal(byName.get("brand-guidelines")!.enabled, true);
  const broken = r.lines.filter((l) => l.status === "broken");
  assert.equal(broken.length, 1);
  assert.equal(broken[0]!.path, join(dirs.workspace, ".agents", "skills", "broken", "SKILL.md"));
  assert.equal(broken[0]!.diagnostics[0].code, "yaml_invalid");
  assert.match(broken[0]!.diagnostics[0].message, /^Invalid YAML front-matter: /);
  assert.match(r.stderr, /evil is a link out of the workspace; it is not followed/);
  assert.ok(!r.stdout.includes("evil"), "the linked-out folder is not a skill");
  assert.deepEqual(JSON.parse(readFileSync(join(dirs.dataDir, "extensions_config.json"), "utf8")), { skills: { "secret-plans": { enabled: false } } });
});

test("a run: <skill_system> with /mnt/skills locations; SKILL.md and a resource read without approval, host bash reads the same view; writes, a disabled skill and a hostile link refused", async () => {
  const r = await run(
    [
      {
        toolCalls: [
          read("c_md", "/mnt/skills/project/internal-comms/SKILL.md"),
          read("c_res", "/mnt/skills/project/internal-comms/examples/faq-answers.md"),
          { id: "c_write", name: "write_file", args: { description: "w", path: "/mnt/skills/project/internal-comms/SKILL.md", content: "pwned" } },
          read("c_off", "/mnt/skills/project/secret-plans/SKILL.md"),
          read("c_link", "/mnt/skills/project/restricted/leak.txt"),
          { id: "c_ls", name: "ls", args: { description: "ls", path: "/mnt/skills/project" } },
          { id: "c_sh", name: "bash", args: { description: "sh", command: "head -n 1 /mnt/skills/project/internal-comms/examples/faq-answers.md; ls /mnt/skills/project" } },
        ],
      },
      { content: "Done." },
    ],
    "write our FAQ",
    // Reads of a skill's files never ask, even when the user's policy asks for every read.
    ["--approval", "read=ask,shell=auto", "--allow-host-commands"],
  );
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  assert.equal(r.end!.data.status, "success");
  const system = systemText(r.requests[0]);
  const section = system.slice(system.indexOf("<skill_system>"), system.indexOf("</skill_system>") + "</skill_system>".length);
  assert.ok(section.startsWith("<skill_system>\nYou have access to skills that provide optimized workflows"), system.slice(0, 3000));
  assert.match(section, /\*\*Skills are located at:\*\* \/mnt\/skills\n/);
  assert.match(section, /<name>brand-guidelines<\/name>\n\s+<description>Applies Anthropic's official brand colors[^<]*\[project, read-only\]<\/description>\n\s+<location>\/mnt\/skills\/project\/brand-guidelines\/SKILL.md<\/location>/);
  assert.match(section, /<location>\/mnt\/skills\/project\/internal-comms\/SKILL.md<\/location>/);
  assert.match(section, /<disabled_skills>\nThe following skills are INSTALLED but DISABLED\.[\s\S]*\n {4}- secret-plans \(project\)\n<\/disabled_skills>/);
  assert.ok(!section.includes("<name>secret-plans</name>") && !section.includes("broken"), "neither the disabled nor the broken skill is offered");

  const results = toolResults(r.requests[1]);
  const skillMd = readFileSync(join(FIXTURES, "internal-comms", "SKILL.md"), "utf8");
  assert.ok(results.get("c_md")!.includes(skillMd.split("\n").slice(5, 10).join("\n")), results.get("c_md"));
  assert.ok(results.get("c_res")!.includes(readFileSync(join(FIXTURES, "internal-comms", "examples", "faq-answers.md"), "utf8").split("\n")[0]!));
  assert.match(results.get("c_write")!, /Write access to skills path is not allowed: \/mnt\/skills\/project\/internal-comms\/SKILL.md/);
  assert.equal(readFileSync(join(dirs.workspace, ".claude", "skills", "internal-comms", "SKILL.md"), "utf8"), skillMd, "the skill is untouched");
  assert.equal(results.get("c_off"), "Error: Skill 'secret-plans' is disabled. Access to its files is blocked. Enable the skill in settings before using it.");
  assert.ok(!results.get("c_link")!.includes("TOP-SECRET"), results.get("c_link"));
  assert.equal(results.get("c_link"), "Error: File not found: /mnt/skills/project/restricted/leak.txt", "the link is not in /mnt/skills");
  assert.match(r.stderr, /Skill "restricted": leak\.txt is a link that leads out of the skill folder; it is not in \/mnt\/skills/);
  const listing = results.get("c_ls")!;
  assert.ok(listing.includes("/mnt/skills/project/internal-comms") && listing.includes("/mnt/skills/project/brand-guidelines"), listing);
  assert.ok(!listing.includes("secret-plans") && !listing.includes("leak.txt"), listing);
  assert.ok(!listing.includes(dirs.dataDir) && !listing.includes(dirs.workspace), "no host path reaches the model");
  // Host bash (allowed here) reads the same view: the path is mapped, the disabled skill absent.
  const faqFirst = readFileSync(join(FIXTURES, "internal-comms", "examples", "faq-answers.md"), "utf8").split("\n")[0]!;
  assert.deepEqual(results.get("c_sh")!.trim().split("\n"), [faqFirst, "brand-guidelines", "internal-comms", "restricted"], results.get("c_sh"));
  assert.equal(readFileSync(secretFile, "utf8"), "TOP-SECRET-HOST-FILE\n");
  // The read of a SKILL.md loaded it (DeerFlow's skill_context: a reference, never the body); a resource read did not.
  const state = await runCli(["state", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--thread", r.threadId], env);
  const loaded = (JSON.parse(state.stdout) as { skill_context: Array<{ name: string; path: string }> }).skill_context;
  assert.deepEqual(loaded.map((e) => [e.name, e.path]), [["internal-comms", "/mnt/skills/project/internal-comms/SKILL.md"]]);
});

test("/brand-guidelines make a slide: the hidden activation carries the SKILL.md and its sha256, journaled; the run succeeds", async () => {
  const r = await run([{ content: "Here is your slide." }], "/brand-guidelines make a slide");
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  assert.equal(r.end!.data.status, "success");
  const bytes = readFileSync(join(FIXTURES, "brand-guidelines", "SKILL.md"));
  const sha = createHash("sha256").update(bytes).digest("hex");
  const activation = (r.requests[0]!.body!.messages ?? []).map(textOf).find((t) => t.includes("<slash_skill_activation>"));
  assert.ok(activation, JSON.stringify(r.requests[0]!.body!.messages).slice(0, 3000));
  assert.ok(activation.startsWith("<slash_skill_activation>\nThe user explicitly activated the `brand-guidelines` skill for this turn."));
  assert.match(activation, /<user_request>\nmake a slide\n<\/user_request>/);
  assert.ok(activation.includes(`path="/mnt/skills/project/brand-guidelines/SKILL.md" sha256="${sha}" editable="false">`), activation.slice(0, 1500));
  const escaped = bytes.toString("utf8").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  assert.ok(activation.includes(`<skill_content encoding="xml-escaped">\n${escaped}\n</skill_content>`));
  const journaled = r.lines.find((l) => l.event === "custom" && l.data?.type === "skill_activated");
  assert.deepEqual(
    { name: journaled?.data.name, path: journaled?.data.path, sha256: journaled?.data.sha256 },
    { name: "brand-guidelines", path: "/mnt/skills/project/brand-guidelines/SKILL.md", sha256: sha },
  );
  // The thread's next run: the same system prompt bytes (a cacheable prefix), and no second activation.
  const next = await run([{ content: "You are welcome." }], "thanks", ["--thread", r.threadId]);
  assert.equal(next.code, 0, next.stderr);
  assert.equal(systemText(next.requests[0]), systemText(r.requests[0]));
  const activations = (next.requests[0]!.body!.messages ?? []).filter((m) => textOf(m).includes("<slash_skill_activation>"));
  assert.equal(activations.length, 1, "the earlier turn's activation stays in the history, none is added");
  assert.ok(!next.lines.some((l) => l.event === "custom" && l.data?.type === "skill_activated"));
});

test("/restricted: allowed-tools read_file leaves read_file offered and blocks a write_file with DeerFlow's error", async () => {
  const target = "/mnt/user-data/workspace/out.md";
  const r = await run(
    [{ toolCalls: [{ id: "c_w", name: "write_file", args: { description: "w", path: target, content: "x" } }] }, { content: "I may only read." }],
    "/restricted review the code",
  );
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const offered = toolNames(r.requests[0]);
  assert.ok(offered.includes("read_file"), offered.join());
  assert.ok(!offered.includes("write_file") && !offered.includes("bash") && !offered.includes("str_replace"), offered.join());
  assert.equal(toolResults(r.requests[1]).get("c_w"), "Error: Tool 'write_file' is not allowed by the active skill policy.");
  assert.equal(existsSync(join(dirs.workspace, "out.md")), false);
});

test("/secret-plans and /missing: DeerFlow's answers, no model call", async () => {
  const off = await run([], "/secret-plans go");
  assert.equal(off.code, 0, off.stderr + off.stdout.slice(-2000));
  assert.equal(off.requests.length, 0);
  const offAnswer = await runCli(["state", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--thread", off.threadId], env);
  assert.equal((JSON.parse(offAnswer.stdout).messages as Array<{ content: string }>).at(-1)!.content, "Skill `/secret-plans` is installed but disabled. Enable it before using slash activation.");
  const missing = await run([], "/missing do it");
  assert.equal(missing.requests.length, 0);
  const missingAnswer = await runCli(["state", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--thread", missing.threadId], env);
  assert.equal((JSON.parse(missingAnswer.stdout).messages as Array<{ content: string }>).at(-1)!.content, "Skill `/missing` is not installed.");
});

test("config.yaml skills.path (DeerFlow's public/custom root) and deferred_discovery: <skill_index>, then describe_skill gives the location", async () => {
  const dataDir = tempDir("data-deferred");
  const deerflowRoot = tempDir("deerflow-skills");
  try {
    mkdirSync(join(deerflowRoot, "public", "deep-research"), { recursive: true });
    writeFileSync(join(deerflowRoot, "public", "deep-research", "SKILL.md"), "---\nname: deep-research\ndescription: Research a topic in depth.\n---\n");
    writeFileSync(join(dataDir, "config.yaml"), `skills:\n  path: ${deerflowRoot}\n  deferred_discovery: true\n`);
    const r = await scriptedRun(
      server,
      { workspace: dirs.workspace, dataDir },
      [{ toolCalls: [{ id: "c_d", name: "describe_skill", args: { name: "select:deep-research,internal-comms" } }] }, { content: "Found it." }],
      "research something",
      [],
      env,
    );
    assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
    const system = systemText(r.requests[0]);
    assert.match(system, /<skill_index>\nbrand-guidelines, deep-research, internal-comms, restricted, secret-plans\n<\/skill_index>\n\nSkills are located at: \/mnt\/skills\n<\/skill_system>/);
    assert.ok(!system.includes("<available_skills>"));
    assert.ok(toolNames(r.requests[0]).includes("describe_skill"));
    const described = toolResults(r.requests[1]).get("c_d")!;
    assert.match(described, /## Skill: deep-research\n- Description: Research a topic in depth\. \[built-in\]\n- Allowed tools: \(all\)\n- Location: \/mnt\/skills\/public\/deep-research\/SKILL.md/);
    assert.match(described, /## Skill: internal-comms\n/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(deerflowRoot, { recursive: true, force: true });
  }
});

test("harness RPC: skills/list and skills/setEnabled (the panel's), a run sees the change; an untrusted workspace has no project skills", async () => {
  const dataDir = tempDir("data-rpc");
  const h = startHarness(env);
  try {
    await h.request("harness/initialize", { dataDir, settings: settings(server.url) });
    const listed = await h.request("skills/list", { workspaceFolder: dirs.workspace });
    assert.deepEqual(listed.skills.filter((v) => v.status === "loaded").map((v) => [v.name, v.enabled]), [["brand-guidelines", true], ["internal-comms", true], ["restricted", true], ["secret-plans", true]]);
    const off = await h.request("skills/setEnabled", { workspaceFolder: dirs.workspace, name: "brand-guidelines", enabled: false });
    assert.equal(off.skills.find((v) => v.name === "brand-guidelines")!.enabled, false);

    server.setScript([{ content: "ok" }]);
    const first = server.requests.length;
    const threadId = (await h.request("threads/create", { workspaceFolder: dirs.workspace })).thread_id;
    const { subscriptionId } = await h.request("events/subscribe", { workspaceFolder: dirs.workspace, threadId, afterSeq: 0 });
    const started = await h.request("runs/start", { workspaceFolder: dirs.workspace, threadId, prompt: "hello" });
    await h.waitEvent(subscriptionId, (e) => e.event === "end" && e.run_id === started.run_id);
    const system = systemText(server.requests[first]);
    assert.match(system, /\n {4}- brand-guidelines \(project\)\n<\/disabled_skills>/);
    assert.ok(system.includes("<location>/mnt/skills/project/internal-comms/SKILL.md</location>"));

    await h.request("harness/configure", { settings: settings(server.url, { workspace_trusted: false }) });
    const untrusted = await h.request("skills/list", { workspaceFolder: dirs.workspace });
    assert.deepEqual(untrusted.skills.filter((v) => v.scope === "project"), [], "Restricted Mode: no project skill is read");
  } finally {
    await h.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
