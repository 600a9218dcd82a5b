// Issue 33 item 1 (4, 5, 6), through the CLI with real files and processes:
// - a nested DeerFlow skill (`custom/team/helper/SKILL.md` under skills.path) is at DeerFlow's
//   `/mnt/skills/custom/team/helper/SKILL.md` and its script runs there (host bash);
// - `deerflow skills enable` writes the file DEER_FLOW_EXTENSIONS_CONFIG_PATH names (DeerFlow's
//   resolve_config_path), so a skill that file disabled is enabled afterwards;
// - a custom subagent named like a built-in (`general-purpose`) is accepted (exit 0) and said once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, sandboxDirs, scriptedRun, tempDir, useModelServer } from "./helpers/cli.js";

const model = useModelServer();

type Req = { body?: { messages?: Array<Record<string, any>> } | null } | undefined;
const toolResult = (r: Req, id: string) => String(r?.body?.messages?.find((m) => m.role === "tool" && m.tool_call_id === id)?.content ?? "");

test("a nested skill keeps its path in /mnt/skills and its script runs there", async () => {
  const d = sandboxDirs();
  const root = tempDir("deerflow-skills-nested");
  const helper = join(root, "custom", "team", "helper");
  mkdirSync(join(helper, "scripts"), { recursive: true });
  writeFileSync(join(helper, "SKILL.md"), "---\nname: team-helper\ndescription: Helps the team. Use when asked for team help.\n---\nRun scripts/hi.sh.\n");
  writeFileSync(join(helper, "scripts", "hi.sh"), "echo hello from the nested skill\n");
  chmodSync(join(helper, "scripts", "hi.sh"), 0o755);
  writeFileSync(join(d.dataDir, "config.yaml"), `skills:\n  path: ${root}\n`);

  const listed = await runCli(["skills", "list", "--workspace", d.workspace, "--data-dir", d.dataDir]);
  assert.equal(listed.code, 0, listed.stderr);
  const view = listed.lines.find((l) => l.name === "team-helper");
  assert.equal(view?.location, "/mnt/skills/custom/team/helper/SKILL.md", JSON.stringify(view));

  const r = await scriptedRun(
    model,
    d,
    [
      {
        toolCalls: [
          { id: "read", name: "read_file", args: { description: "read", path: "/mnt/skills/custom/team/helper/SKILL.md" } },
          { id: "sh", name: "bash", args: { description: "run", command: "sh /mnt/skills/custom/team/helper/scripts/hi.sh" } },
        ],
      },
      { content: "Done." },
    ],
    "help the team",
    ["--approval", "read=auto,shell=auto", "--allow-host-commands"],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(toolResult(r.requests[1], "read"), /Run scripts\/hi\.sh\./);
  assert.match(toolResult(r.requests[1], "sh"), /hello from the nested skill/);
});

test("skills enable writes the file DEER_FLOW_EXTENSIONS_CONFIG_PATH names: the skill it disabled is enabled", async () => {
  const d = sandboxDirs();
  const skill = join(d.dataDir, "skills", "webapp-testing");
  mkdirSync(skill, { recursive: true });
  writeFileSync(join(skill, "SKILL.md"), "---\nname: webapp-testing\ndescription: Tests web apps. Use when asked to test a web app.\n---\n");
  const named = join(tempDir("deerflow-extensions-named"), "extensions_config.json");
  writeFileSync(named, JSON.stringify({ mcpServers: {}, skills: { "webapp-testing": { enabled: false } } }));
  const env = { DEER_FLOW_EXTENSIONS_CONFIG_PATH: named };
  const state = async () => {
    const r = await runCli(["skills", "list", "--workspace", d.workspace, "--data-dir", d.dataDir], env);
    assert.equal(r.code, 0, r.stderr);
    return r.lines.find((l) => l.name === "webapp-testing")?.enabled;
  };
  assert.equal(await state(), false);
  const enabled = await runCli(["skills", "enable", "webapp-testing", "--workspace", d.workspace, "--data-dir", d.dataDir], env);
  assert.equal(enabled.code, 0, enabled.stderr);
  assert.equal(await state(), true);
  const file = JSON.parse(readFileSync(named, "utf8")) as Record<string, any>;
  assert.deepEqual(file, { mcpServers: {}, skills: { "webapp-testing": { enabled: true } } }, "the named file, its other keys kept");
  const disabled = await runCli(["skills", "disable", "webapp-testing", "--workspace", d.workspace, "--data-dir", d.dataDir], env);
  assert.equal(disabled.code, 0, disabled.stderr);
  assert.equal(await state(), false);
});

test("a custom subagent named general-purpose is accepted; the built-in wins and the file is told so", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.dataDir, "config.yaml"), "subagents:\n  custom_agents:\n    general-purpose:\n      description: mine\n      system_prompt: hi\n    reviewer:\n      description: Reviews\n      system_prompt: Review it.\n");
  const r = await runCli(["skills", "list", "--workspace", d.workspace, "--data-dir", d.dataDir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /not supported here: subagents\.custom_agents\.general-purpose: the built-in subagent type of that name is used/);
  const run = await scriptedRun(model, d, [{ content: "Hi." }], "Hello.", ["--subagents"]);
  assert.equal(run.code, 0, run.stderr);
  const task = (run.requests[0]?.body?.tools as Array<{ function: { name: string; description: string } }> | undefined)?.find((t) => t.function.name === "task");
  assert.ok(task, "the task tool is offered");
  assert.match(task.function.description, /\n- reviewer: Reviews/);
  assert.ok(!task.function.description.includes("- general-purpose: mine"), "the built-in is the one listed, once");
  assert.equal(task.function.description.match(/\n- general-purpose:/g)?.length, 1);
});
