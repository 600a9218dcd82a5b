// Issue 30 item 7: `deerflow run` on a terminal prints a readable stream (the answer, one line per
// tool call, approvals with the command that decides them, the ending); with --json, or when
// stdout is not a terminal, the JSON Lines of before. The terminal is a real pty: util-linux's
// `script -qec`, as a user's shell would give the CLI.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, runCli, sandboxDirs, scriptedRunArgs, useModelServer, type Dirs } from "./helpers/cli.js";
import type { ScriptedReply } from "../fixtures/modelServer.js";

const server = useModelServer();

const sh = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

/** The CLI on a pty: what the terminal shows (CRLF as \n) and the exit code. */
async function onTerminal(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; text: string }> {
  const cmd = [process.execPath, CLI, ...args, "--no-memory"].map(sh).join(" ");
  const child = spawn("script", ["-qec", cmd, "/dev/null"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: "xterm-256color", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (text += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (text += d));
  const [code] = await once(child, "close");
  return { code: code as number | null, text: text.replace(/\r\n/g, "\n") };
}

function runOnTerminal(dirs: Dirs, script: ScriptedReply[], prompt: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  server.setScript(script);
  return onTerminal([...scriptedRunArgs(server, dirs, prompt), ...extra], env);
}

const read = { id: "call_r", name: "read_file", args: { description: "read", path: "/mnt/user-data/workspace/notes.md" } };
const failing = { id: "call_b", name: "bash", args: { description: "try it", command: "echo trying; exit 3" } };
const HOSTILE = "All done.\u001b]0;pwned\u0007\u001b[2J";

test("on a terminal: the answer, a line per tool call (done / failed with its exit code), the ending; the model's control characters dropped", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.md"), "alpha\n");
  const r = await runOnTerminal(d, [{ content: "Let me look.", toolCalls: [read] }, { toolCalls: [failing] }, { content: HOSTILE }], "Look at notes.", ["--allow-host-commands", "--approval", "shell=auto"], { NO_COLOR: "1" });
  assert.equal(r.code, 0, r.text);
  const lines = r.text.split("\n").filter((l) => l.trim());
  assert.match(lines[0] ?? "", /^DeerFlow · scripted · sandbox local · thread [\w-]+$/);
  assert.ok(lines.includes("Let me look."), r.text);
  assert.ok(lines.includes("✓ read_file notes.md"), r.text);
  assert.ok(lines.includes("✗ bash echo trying; exit 3 — Failed (exit code 3)"), r.text);
  assert.ok(lines.includes("All done."), `the answer, without the escape sequences it carried: ${JSON.stringify(lines)}`);
  assert.match(lines.at(-1) ?? "", /^Done · [\d,]+ tokens$/);
  assert.ok(!r.text.includes("\u001b"), "NO_COLOR and a clean answer: no escape sequence at all");
  assert.ok(!r.text.includes('{"seq"'), "no JSON Lines on a terminal");
});

test("on a terminal: a paused run lists the waiting calls and the deerflow approve line that decides them; colours without NO_COLOR", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.md"), "alpha\n");
  const write = { id: "call_w", name: "write_file", args: { description: "write", path: "/mnt/user-data/workspace/notes.md", content: "beta\n" } };
  const r = await runOnTerminal(d, [{ toolCalls: [read] }, { toolCalls: [write] }], "Rewrite notes.", ["--approval", "write=ask"]);
  assert.equal(r.code, 0, r.text);
  // eslint-disable-next-line no-control-regex
  const plain = r.text.replace(/\u001b\[[\d;]*m/g, "");
  assert.notEqual(plain, r.text, "colours on a terminal");
  const thread = /thread ([\w-]+)/.exec(plain)?.[1];
  assert.ok(thread, plain);
  assert.match(plain, /Waiting for your decision on 1 call:\n {2}call_w {2}write_file: .+\n {4}\{"description":"write","path":"\/mnt\/user-data\/workspace\/notes.md","content":"beta\\n"\}\n/);
  assert.ok(plain.includes(`Approve: deerflow approve --workspace ${d.workspace} --thread ${thread} --all approve`), plain);
  assert.ok(plain.includes(`Reject:  deerflow approve --workspace ${d.workspace} --thread ${thread} --all reject --reason "why"`), plain);
});

test("--json on a terminal, and any run whose stdout is not a terminal, print the JSON Lines, the end event last", async () => {
  const d = sandboxDirs();
  const r = await runOnTerminal(d, [{ content: "Plain." }], "Hi.", ["--json"]);
  assert.equal(r.code, 0, r.text);
  const events = r.text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as { event: string; data: { status?: string } });
  assert.equal(events[0]?.event, "metadata");
  assert.equal(events.at(-1)?.event, "end");
  assert.equal(events.at(-1)?.data.status, "success");
  server.setScript([{ content: "Piped." }]);
  const piped = await runCli(scriptedRunArgs(server, d, "Again."));
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.lines.at(-1)?.event, "end");
});
