// A subagent's `skills` (issue 24 item 7, DeerFlow's subagents.{custom_agents,agents}.<name>.skills)
// through the real CLI (dist/cli.js): one run whose lead delegates to custom types with
// `skills: [alpha]`, `skills: []`, no `skills`, and a whitelist with a typo; the scripted model
// server records each subagent's request, so its system prompt shows which skills it was told
// about. A `/beta` task given to the alpha-only type is refused by its slash activation without a
// model call. `agents.<name>.skills` overrides a built-in type's. One server, one run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { cliState, runCli, sandboxDirs, tempDir, useModelServer } from "./helpers/cli.js";

const server = useModelServer();

const system = (req: RecordedRequest): string => (req.body?.messages ?? []).filter((m) => m.role === "system").map(textOf).join("\n");
const skillNames = (req: RecordedRequest): string[] => [...system(req).matchAll(/<name>([^<]+)<\/name>/g)].map((m) => m[1]!).sort();

test("a subagent's skills: a whitelist lists only its names, [] none, absent all; agents.<name>.skills overrides; an unknown name is warned; a skill outside it cannot be slash-activated", async () => {
  const d = sandboxDirs();
  for (const name of ["alpha", "beta", "gamma"]) {
    mkdirSync(join(d.workspace, ".agents", "skills", name), { recursive: true });
    writeFileSync(join(d.workspace, ".agents", "skills", name, "SKILL.md"), `---\nname: ${name}\ndescription: The ${name} workflow.\n---\n# ${name}\n`);
  }
  // JSON is YAML: DeerFlow's config.yaml, written without a YAML library.
  const config = join(tempDir("config"), "config.yaml");
  writeFileSync(config, JSON.stringify({
    models: [{ name: "lead", model: "lead-id", base_url: server.url }],
    subagents: {
      max_concurrent: 4,
      max_total_per_run: 10,
      agents: { "general-purpose": { skills: ["gamma"] } },
      custom_agents: {
        picky: { system_prompt: "You are the PICKY subagent.", skills: ["alpha"] },
        bare: { system_prompt: "You are the BARE subagent.", skills: [] },
        open: { system_prompt: "You are the OPEN subagent." },
        typo: { system_prompt: "You are the TYPO subagent.", skills: ["beta", "no-such-skill"] },
      },
    },
  }));
  const call = (id: string, type: string, prompt = `Work as ${type}.`) => ({ name: "task", id, args: { description: `try ${type}`, prompt, subagent_type: type } });
  server.setScript((req): ScriptedReply => {
    const sys = system(req);
    const sub = /You are (?:the|a) (PICKY|BARE|OPEN|TYPO|general-purpose) subagent/.exec(sys)?.[1];
    if (sub) return { content: `${sub} done.` };
    const results = (req.body?.messages ?? []).filter((m) => m.role === "tool").length;
    if (results === 0) return { toolCalls: [call("c_picky", "picky"), call("c_bare", "bare"), call("c_open", "open"), call("c_typo", "typo")] };
    if (results === 4) return { toolCalls: [call("c_gp", "general-purpose"), call("c_slash", "picky", "/beta review this")] };
    return { content: "All done." };
  });
  const first = server.requests.length;
  const r = await runCli(["run", "--workspace", d.workspace, "--data-dir", d.dataDir, "--model", "lead", "--prompt", "delegate", "--thread", "sub-skills", "--subagents"], { DEERFLOW_CONFIG: config, HOME: tempDir("home") });
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(-2000));
  const sent = server.requests.slice(first);
  const of = (marker: string): RecordedRequest[] => sent.filter((q) => system(q).includes(marker));

  const lead = sent.find((q) => system(q).includes("<subagent_system>"))!;
  assert.deepEqual(skillNames(lead), ["alpha", "beta", "gamma"], "the lead has every skill");
  assert.equal(of("PICKY subagent").length, 1, "the /beta task never reached the model");
  assert.deepEqual(skillNames(of("PICKY subagent")[0]!), ["alpha"]);
  assert.match(system(of("PICKY subagent")[0]!), /<location>\/mnt\/skills\/[a-z]+\/alpha\/SKILL\.md<\/location>/);
  assert.ok(!system(of("BARE subagent")[0]!).includes("<skill_system>"), "skills: [] gives no skill section");
  assert.deepEqual(skillNames(of("OPEN subagent")[0]!), ["alpha", "beta", "gamma"], "no skills key: every enabled skill");
  assert.deepEqual(skillNames(of("TYPO subagent")[0]!), ["beta"], "the names that resolve are kept");
  assert.deepEqual(skillNames(of("You are a general-purpose subagent")[0]!), ["gamma"], "agents.<name>.skills");
  assert.match(r.stderr, /Subagent type 'typo' names skills this workspace does not have: no-such-skill/);
  assert.ok(!/unsupported|not supported/i.test(r.stderr), r.stderr);

  const state = await cliState(d, "sub-skills");
  const results = Object.fromEntries((state.messages as Array<Record<string, any>>).filter((m) => m.type === "tool" && m.name === "task").map((m) => [m.tool_call_id, m.content]));
  assert.equal(results.c_picky, "Task Succeeded. Result: PICKY done.");
  assert.equal(results.c_slash, "Task Succeeded. Result: Skill `/beta` is not available for this agent.");
});
