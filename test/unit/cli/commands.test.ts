// The command table (extension/harness/cli/commands.ts): every command and sub-command has a
// summary and a synopsis that starts with its own name, and its usage names no other command.
import { test } from "node:test";
import assert from "node:assert/strict";
import { COMMANDS, findCommand, overviewText, usageText } from "../../../extension/harness/cli/commands.js";

test("every command has a one-line summary and a synopsis of its own", () => {
  const names = COMMANDS.map((c) => c.name);
  assert.equal(new Set(names).size, names.length, "names are unique");
  for (const c of COMMANDS) {
    assert.ok(c.summary.length > 0 && !c.summary.includes("\n"), `${c.name}: one-line summary`);
    assert.ok((c.synopsis === undefined) !== (c.subcommands === undefined), `${c.name}: a synopsis, or sub-commands with theirs`);
    if (c.synopsis) assert.ok(c.synopsis.startsWith(`deerflow ${c.name} `), `${c.name}: ${c.synopsis}`);
    for (const s of c.subcommands ?? []) {
      assert.ok(s.synopsis.startsWith(`deerflow ${c.name} ${s.name}`), `${c.name} ${s.name}: ${s.synopsis}`);
      assert.ok(s.summary.length > 0 && !s.summary.includes("\n"), `${c.name} ${s.name}: one-line summary`);
    }
  }
});

test("a command's usage shows its own synopsis lines only", () => {
  for (const c of COMMANDS) {
    const usage = usageText(c);
    const synopsisLines = usage.split("\n").filter((l) => l.startsWith("  deerflow "));
    assert.ok(synopsisLines.length > 0, c.name);
    for (const l of synopsisLines) assert.ok(l.startsWith(`  deerflow ${c.name} `), `${c.name}'s usage shows ${l}`);
  }
  const mcp = findCommand("mcp")!;
  const list = usageText(mcp, mcp.subcommands!.find((s) => s.name === "list"));
  assert.ok(!list.includes("deerflow mcp approve"));
});

test("the overview has one line per command, no option and no line over 100 columns", () => {
  const text = overviewText();
  for (const c of COMMANDS) assert.ok(text.includes(`  ${c.name} `), c.name);
  assert.ok(!text.includes("--workspace"));
  for (const l of text.split("\n")) assert.ok(l.length <= 100, l);
});
