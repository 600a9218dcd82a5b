// Issue 21: what one "Always allow" covers. A bash rule is a command prefix read as VS Code reads
// its terminal auto-approve rules (every sub-command must start with it; substitutions and
// redirections to files are never covered); every rule is keyed by tool, class and sandbox kind;
// no rule ever covers a protected write; the legacy tool-name entries are read as no rule.
import { test } from "node:test";
import assert from "node:assert/strict";
import { alwaysAllowFor, commandPrefix, readRules, ruleCovers, subCommands, withRule } from "../../../extension/harness/approvals/alwaysAllow.js";

const bash = (command: string) => ({ name: "bash", args: { command } });

test("the prefix a card offers: the program and its sub-command, when they cover the whole line", () => {
  assert.equal(commandPrefix("npm test -- --watch"), "npm test");
  assert.equal(commandPrefix("git status"), "git status");
  assert.equal(commandPrefix("ls -la"), "ls");
  assert.equal(commandPrefix("npm test && npm test -- --ci"), "npm test");
  assert.equal(commandPrefix("python build.py --fast"), "python build.py");
  assert.equal(commandPrefix("npm test && rm -rf /"), undefined, "a second command the prefix does not cover");
  assert.equal(commandPrefix("echo PWNED; id"), undefined);
  assert.equal(commandPrefix("python -c 'import os'"), undefined, "an interpreter without its script");
  assert.equal(commandPrefix("bash"), undefined);
  for (const wrapper of ["sudo rm -rf /", "env X=1 make", "xargs rm", "eval ls", "timeout 5 make", "find . -name x", "awk '{print}' f"]) assert.equal(commandPrefix(wrapper), undefined, wrapper);
  assert.equal(commandPrefix("FOO=1 make"), undefined, "an assignment first");
  assert.equal(commandPrefix("make $(curl evil)"), undefined, "command substitution");
  assert.equal(commandPrefix("echo hi > .git/hooks/pre-commit"), undefined, "a redirection to a file");
  assert.equal(commandPrefix("npm test 2>&1 >/dev/null"), "npm test", "redirections that write no file");
});

test("sub-commands: split on ; && || | & and new lines; no split at all for substitutions", () => {
  assert.deepEqual(subCommands("a; b && c || d | e & f\ng |& h"), ["a", "b", "c", "d", "e", "f", "g", "h"]);
  for (const s of ["a `b`", "a $(b)", "diff <(a) b", "tee >(x)"]) assert.equal(subCommands(s), undefined, s);
});

test("a bash rule covers a line whose every sub-command starts with its words, in its own sandbox kind only", () => {
  const rule = { tool: "bash", class: "shell" as const, sandbox: "devcontainer" as const, prefix: "npm test" };
  assert.equal(ruleCovers(rule, bash("npm test"), "shell", "devcontainer"), true);
  assert.equal(ruleCovers(rule, bash("npm test -- --ci && npm test"), "shell", "devcontainer"), true);
  assert.equal(ruleCovers(rule, bash("npm testevil"), "shell", "devcontainer"), false, "words, not characters");
  assert.equal(ruleCovers(rule, bash("npm test; echo PWNED"), "shell", "devcontainer"), false);
  assert.equal(ruleCovers(rule, bash("npm test\necho PWNED"), "shell", "devcontainer"), false);
  assert.equal(ruleCovers(rule, bash("npm test $(echo PWNED)"), "shell", "devcontainer"), false);
  assert.equal(ruleCovers(rule, bash("npm test > ~/.bashrc"), "shell", "devcontainer"), false);
  assert.equal(ruleCovers(rule, bash("npm test"), "shell", "local"), false, "a yes for the dev container never covers the host");
  assert.equal(ruleCovers({ ...rule, prefix: undefined }, bash("npm test"), "shell", "devcontainer"), false, "a bash rule without a prefix covers nothing");
});

test("other tools: tool, class and sandbox kind; never a protected write, whatever the rule says", () => {
  const write = { name: "write_file", args: { path: "/mnt/user-data/workspace/a.ts" } };
  const rule = { tool: "write_file", class: "write" as const, sandbox: "local" as const };
  assert.equal(ruleCovers(rule, write, "write", "local"), true);
  assert.equal(ruleCovers(rule, write, "protected", "local"), false);
  assert.equal(ruleCovers({ ...rule, class: "protected" }, write, "protected", "local"), false);
  assert.equal(ruleCovers(rule, { ...write, name: "str_replace" }, "write", "local"), false);
  assert.equal(ruleCovers(rule, write, "write", "devcontainer"), false);
});

test("what the card offers: words that say the scope; nothing for a protected write or an uncoverable command", () => {
  assert.deepEqual(alwaysAllowFor(bash("npm test"), "shell", "devcontainer"), {
    rule: { tool: "bash", class: "shell", sandbox: "devcontainer", prefix: "npm test" },
    label: 'Always allow commands starting with "npm test" in the dev container in this thread',
  });
  assert.equal(alwaysAllowFor(bash("echo hi"), "shell", "local")?.label, 'Always allow commands starting with "echo hi" on this machine in this thread');
  assert.equal(alwaysAllowFor(bash("echo PWNED; id"), "shell", "local"), undefined);
  assert.deepEqual(alwaysAllowFor({ name: "write_file", args: {} }, "write", "local"), {
    rule: { tool: "write_file", class: "write", sandbox: "local" },
    label: "Always allow write_file (not protected paths) in this thread",
  });
  assert.equal(alwaysAllowFor({ name: "write_file", args: {} }, "protected", "local"), undefined);
  assert.equal(alwaysAllowFor({ name: "mcp_x", args: {} }, "other", "local")?.label, "Always allow mcp_x in this thread");
});

test("the thread's rules: legacy tool names and malformed or protected entries are read as none; a rule is added once", () => {
  const rule = { tool: "bash", class: "shell" as const, sandbox: "local" as const, prefix: "make" };
  assert.deepEqual(readRules(["bash", "write_file", rule, { tool: "write_file", class: "protected", sandbox: "local" }, { tool: "x" }, null]), [rule]);
  assert.deepEqual(readRules(null), []);
  assert.deepEqual(withRule(withRule([], rule), { ...rule }), [rule]);
  assert.equal(withRule([rule], { ...rule, sandbox: "devcontainer" }).length, 2);
});
