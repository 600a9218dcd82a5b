// The `deerflow` CLI's help, version and usage errors (issue 30 item 7), on the built dist/cli.js
// as a user runs it: the overview, one command's usage (sub-commands included), `--help` winning
// over other errors, the version from package.json, and short usage errors on stderr.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { runCliText, sandboxDirs } from "./helpers/cli.js";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
const COMMANDS = ["run", "approve", "state", "threads", "compact", "events", "runs", "cancel", "delete", "changes", "revert", "memory", "skills", "mcp", "devcontainer", "config", "serve", "help", "version"];

const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");

test("--help, -h and help print the overview: one line per command, and where each command's options are", async () => {
  const outputs = [];
  for (const args of [["--help"], ["-h"], ["help"]]) {
    const r = await runCliText(args);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    outputs.push(r.stdout);
  }
  assert.equal(outputs[1], outputs[0]);
  assert.equal(outputs[2], outputs[0]);
  const text = outputs[0]!;
  for (const name of COMMANDS) assert.match(text, new RegExp(`^  ${name} +\\S.*$`, "m"), `${name} has a line with its summary`);
  assert.match(text, /Run 'deerflow <command> --help' for a command's options\./);
  assert.ok(!text.includes("--workspace"), "the overview lists commands, not their options");
  assert.ok(lines(text).length < 40, `the overview is short (${lines(text).length} lines)`);
});

test("help run, run --help and run -h print run's usage only, on stdout", async () => {
  const outputs = [];
  for (const args of [["help", "run"], ["run", "--help"], ["run", "-h"]]) {
    const r = await runCliText(args);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stderr, "");
    outputs.push(r.stdout);
  }
  assert.equal(outputs[1], outputs[0]);
  assert.equal(outputs[2], outputs[0]);
  const text = outputs[0]!;
  assert.match(text, /^Usage:\n {2}deerflow run --workspace DIR/);
  for (const flag of ["--workspace", "--prompt", "--max-turns", "--approval", "--api-key-stdin"]) assert.ok(text.includes(flag), flag);
  assert.ok(!text.includes("deerflow serve"), "not serve's synopsis");
  assert.ok(!text.includes("--token-file"), "not serve's options");
  assert.ok(!text.includes("LangGraph-compatible"), "not serve's text");
});

test("--help anywhere in a command's arguments wins over its errors", async () => {
  const dirs = sandboxDirs();
  for (const args of [["run", "--prompt", "x", "--help"], ["run", "--frob", "--help"], ["serve", "--help", "--port", "nope"], ["state", "--workspace", dirs.workspace, "-h"]]) {
    const r = await runCliText(args);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Usage:\\n  deerflow ${args[0]} `), args.join(" "));
  }
});

test("sub-commands: mcp --help lists them, mcp list --help is list's usage alone", async () => {
  const mcp = await runCliText(["mcp", "--help"]);
  assert.equal(mcp.code, 0, mcp.stderr);
  assert.match(mcp.stdout, /deerflow mcp list /);
  assert.match(mcp.stdout, /deerflow mcp approve /);
  assert.match(mcp.stdout, /^ {2}list +\S/m);
  assert.match(mcp.stdout, /^ {2}approve +\S/m);

  for (const args of [["mcp", "list", "--help"], ["help", "mcp", "list"]]) {
    const r = await runCliText(args);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stdout, /^Usage:\n {2}deerflow mcp list --workspace DIR/);
    assert.match(r.stdout, /--no-start/);
    assert.ok(!r.stdout.includes("deerflow mcp approve"), "only list's synopsis");
  }
  for (const [command, sub] of [["memory", "promote"], ["skills", "enable"], ["devcontainer", "status"], ["config", "check"]] as const) {
    const r = await runCliText([command, sub, "--help"]);
    assert.equal(r.code, 0, `${command} ${sub}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Usage:\\n  deerflow ${command} ${sub}`));
  }
});

test("--version, -V and version print package.json's version", async () => {
  for (const args of [["--version"], ["-V"], ["version"]]) {
    const r = await runCliText(args);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `deerflow ${pkg.version}\n`);
  }
});

test("a usage error is two lines on stderr: what is wrong, and which --help to read (exit 2)", async () => {
  const dirs = sandboxDirs();
  const cases: Array<[string[], RegExp, string]> = [
    [["run", "--frob"], /^deerflow run: unknown option '--frob'$/, "Run 'deerflow run --help' for usage."],
    [["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir], /^deerflow run: --prompt TEXT is required$/, "Run 'deerflow run --help' for usage."],
    [["state", "--workspace"], /^deerflow state: option '--workspace' needs a value$/, "Run 'deerflow state --help' for usage."],
    [["mcp", "list", "--frob"], /^deerflow mcp list: unknown option '--frob'$/, "Run 'deerflow mcp list --help' for usage."],
    [["mcp", "frob"], /^deerflow mcp: unknown sub-command "frob"/, "Run 'deerflow mcp --help' for usage."],
    [["frobnicate"], /^deerflow: unknown command "frobnicate"$/, "Run 'deerflow --help' for the list of commands."],
    [["help", "frobnicate"], /^deerflow: unknown command "frobnicate"$/, "Run 'deerflow --help' for the list of commands."],
    [[], /^deerflow: no command given$/, "Run 'deerflow --help' for the list of commands."],
  ];
  for (const [args, first, second] of cases) {
    const r = await runCliText(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    const err = lines(r.stderr);
    assert.equal(err.length, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(err[0]!, first);
    assert.equal(err[1], second);
  }
});

test("a malformed configuration file stays a usage error naming its line, in one line", async () => {
  const dirs = sandboxDirs();
  writeFileSync(`${dirs.dataDir}/config.yaml`, "models:\n  - name: x\n    model: [1\n");
  const r = await runCliText(["run", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--prompt", "hi"]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  const err = lines(r.stderr);
  assert.equal(err.length, 1, r.stderr);
  assert.match(err[0]!, /^deerflow run: Invalid DeerFlow configuration .*config\.yaml:\d+: /);
});
