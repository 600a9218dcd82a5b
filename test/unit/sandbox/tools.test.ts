// The seven tools invoked like createAgent's ToolNode does: lazy acquisition, exact result strings.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { createReadStream, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { SANDBOX_TOOL_NAMES } from "../../../extension/harness/tools/sandbox/index.js";
import { commandText, invokeTool, makeFixture, run, toolsFor } from "./helpers.js";
import { EXIT_KEY, toolOutcome } from "../../../extension/protocol/toolOutcome.js";

const fx = makeFixture("t1");
after(() => fx.cleanup());
const tools = toolsFor(fx);
const W = "/mnt/user-data/workspace";

test("all seven tools, DeerFlow's names, description first", () => {
  assert.deepEqual(Object.keys(tools), [...SANDBOX_TOOL_NAMES]);
  const expected: Record<string, string[]> = {
    bash: ["description", "command"],
    ls: ["description", "path"],
    read_file: ["description", "path", "start_line", "end_line"],
    write_file: ["description", "path", "content", "append"],
    str_replace: ["description", "path", "old_str", "new_str", "replace_all"],
    glob: ["description", "pattern", "path", "include_dirs", "max_results"],
    grep: ["description", "pattern", "path", "glob", "literal", "case_sensitive", "max_results"],
  };
  for (const [name, t] of Object.entries(tools)) {
    const shape = (t.schema as { shape: Record<string, unknown> }).shape;
    assert.deepEqual(Object.keys(shape), expected[name], name);
  }
  const bashDescription = tools.bash!.description.toLowerCase();
  assert.ok(bashDescription.includes("background") && bashDescription.includes("server"));
});

test("the first call acquires lazily and returns a Command carrying the sandbox id", async () => {
  writeFileSync(join(fx.ws, "file.txt"), "content\n");
  for (const state of [{}, { sandbox: { sandbox_id: "local:default:gone-after-restart" } }]) {
    const out = await invokeTool(tools.read_file, { description: "d", path: `${W}/file.txt` }, state);
    assert.ok(out instanceof Command);
    const update = out.update as { sandbox: unknown; messages: ToolMessage[] };
    assert.deepEqual(update.sandbox, { sandbox_id: "local:default:t1" });
    assert.equal(update.messages.length, 1);
    assert.equal(update.messages[0]!.content, "content\n");
    assert.equal(update.messages[0]!.name, "read_file");
    assert.match(update.messages[0]!.tool_call_id, /^call-/);
  }
  const again = await invokeTool(tools.read_file, { description: "d", path: `${W}/file.txt` }, { sandbox: { sandbox_id: fx.sandboxId } });
  assert.ok(again instanceof ToolMessage, "a known sandbox id gives a plain result");
});

test("bash on the local provider is refused without consent", async () => {
  const refused = toolsFor(fx, false);
  const out = await invokeTool(refused.bash, { description: "d", command: "/bin/echo hello" }, {});
  const text = commandText(out);
  assert.ok(text.startsWith("Error: Host bash execution is disabled for LocalSandboxProvider"));
  assert.ok(text.includes("--allow-host-commands") && text.includes("deerflow.allowHostCommands"));
});

test("bash validates paths, rewrites virtual paths and masks host paths", async () => {
  assert.equal(
    await run(fx, tools.bash, { description: "d", command: "cat /etc/passwd" }),
    "Error: Unsafe absolute paths in command: /etc/passwd. Use paths under /mnt/user-data",
  );
  assert.equal(await run(fx, tools.bash, { description: "d", command: "cat ../uploads/secret.txt" }), "Error: Access denied: path traversal detected");
  assert.equal(
    await run(fx, tools.bash, { description: "d", command: "echo hi > /mnt/user-data/outputs/o.txt && cat /mnt/user-data/outputs/o.txt && pwd" }),
    "hi\n/mnt/user-data/workspace\n",
  );
  assert.equal(readFileSync(join(fx.dirs.outputs, "o.txt"), "utf8"), "hi\n");
  const masked = await run(fx, tools.bash, { description: "d", command: 'echo "$PWD/.deerflow/threads/t1/uploads/u.txt $PWD/a"' });
  assert.equal(masked, "/mnt/user-data/uploads/u.txt /mnt/user-data/workspace/a\n");
  assert.equal(await run(fx, tools.bash, { description: "d", command: "echo out; echo oops >&2; exit 3" }), "out\n\nStd Error:\noops\n\nExit Code: 3");
  assert.equal(await run(fx, tools.bash, { description: "d", command: "true" }), "(no output)");
  const big = await run(fx, tools.bash, { description: "d", command: "head -c 30000 /dev/zero | tr '\\0' a" });
  assert.ok(big.length <= 20000 && big.includes("[middle truncated:"));
});

test("bash timeout through the tool", async () => {
  const quick = toolsFor(fx, true, 1000);
  const text = await run(fx, quick.bash, { description: "d", command: "echo started; sleep 30" });
  assert.ok(text.startsWith("started\n"));
  assert.ok(text.includes("Command timed out after 1 second and was terminated."));
});

test("bash records a non-zero exit and a timeout for the panel (deerflow_exit); a zero exit records nothing", async () => {
  const exitOf = async (t: typeof tools, command: string) => {
    await fx.provider.acquire(fx.dirs.threadId);
    const out = await invokeTool(t.bash, { description: "d", command }, { sandbox: { sandbox_id: fx.sandboxId } });
    assert.ok(out instanceof ToolMessage);
    return { kw: out.additional_kwargs?.[EXIT_KEY], outcome: toolOutcome({ content: commandText(out), name: "bash", status: out.status, additional_kwargs: out.additional_kwargs }) };
  };
  const failed = await exitOf(tools, "echo partial; exit 254");
  assert.deepEqual(failed.kw, { code: 254, timed_out: false });
  assert.deepEqual(failed.outcome, { kind: "failed", detail: "exit code 254" });
  const ok = await exitOf(tools, "echo fine");
  assert.equal(ok.kw, undefined);
  assert.deepEqual(ok.outcome, { kind: "done" });
  const slow = await exitOf(toolsFor(fx, true, 1000), "sleep 30");
  assert.deepEqual(slow.kw, { code: null, timed_out: true });
  assert.deepEqual(slow.outcome, { kind: "failed", detail: "timed out" });
});

test("read_file line ranges and their messages", async () => {
  writeFileSync(join(fx.ws, "five.txt"), "line1\nline2\nline3\nline4\nline5\n");
  const read = (extra: Record<string, unknown>) => run(fx, tools.read_file, { description: "d", path: `${W}/five.txt`, ...extra });
  assert.equal(await read({ start_line: 3 }), "line3\nline4\nline5");
  assert.equal(await read({ end_line: 2 }), "line1\nline2");
  assert.equal(await read({ start_line: 2, end_line: 4 }), "line2\nline3\nline4");
  assert.equal(await read({ end_line: 99 }), "line1\nline2\nline3\nline4\nline5");
  assert.equal(await read({}), "line1\nline2\nline3\nline4\nline5\n");
  assert.equal(await read({ start_line: 0 }), "(start_line must be >= 1)");
  assert.equal(await read({ start_line: -1 }), "(start_line must be >= 1)");
  assert.equal(await read({ end_line: 0 }), "(end_line must be >= 1)");
  assert.equal(await read({ start_line: 4, end_line: 2 }), "(start_line > end_line — no lines in range)");
  assert.equal(await read({ start_line: 9 }), "(start_line exceeds file length)");
  writeFileSync(join(fx.ws, "empty.txt"), "");
  assert.equal(await run(fx, tools.read_file, { description: "d", path: `${W}/empty.txt` }), "(empty)");
});

test("read_file errors name only the virtual path", async () => {
  const read = (path: string) => run(fx, tools.read_file, { description: "d", path });
  assert.equal(await read(`${W}/missing.txt`), `Error: File not found: ${W}/missing.txt`);
  mkdirSync(join(fx.ws, "adir"), { recursive: true });
  assert.equal(await read(`${W}/adir`), `Error: Path is a directory, not a file: ${W}/adir`);
  writeFileSync(join(fx.ws, "bin.dat"), Buffer.from([0xff, 0xfe, 0x00, 0x81]));
  assert.ok((await read(`${W}/bin.dat`)).startsWith(`Error: cannot read '${W}/bin.dat' as text — it appears to be a binary file`));
  assert.equal(await read("/etc/passwd"), "Error: Permission denied reading file: /etc/passwd (Only paths under /mnt/user-data/ are allowed)");
  assert.ok(((await read(`${W}/../x`))).startsWith(`Error: Permission denied reading file: ${W}/../x`), "DeerFlow's prefix, then the reason");
  // A host path the model typed itself is refused and answered in its virtual form.
  assert.ok(((await read(fx.ws + "/five.txt"))).startsWith(`Error: Permission denied reading file: ${W}/five.txt`), "DeerFlow's prefix, then the reason");
  const outside = join(fx.root, "outside.txt");
  writeFileSync(outside, "secret");
  symlinkSync(outside, join(fx.dirs.uploads, "link.txt"));
  assert.ok(((await read("/mnt/user-data/uploads/link.txt"))).startsWith("Error: Permission denied reading file: /mnt/user-data/uploads/link.txt"), "DeerFlow's prefix, then the reason");
  writeFileSync(join(fx.ws, "mentions.txt"), `built in ${fx.ws}/dist\n`);
  assert.equal(await read(`${W}/mentions.txt`), "built in /mnt/user-data/workspace/dist\n");
});

test("write_file: OK, parents created, size guard and its switches", async () => {
  const write = (path: string, content: string, append?: boolean) =>
    run(fx, tools.write_file, { description: "d", path, content, ...(append === undefined ? {} : { append }) });
  assert.equal(await write("/mnt/user-data/outputs/a/b/c.md", "# hi\n"), "OK");
  assert.equal(readFileSync(join(fx.dirs.outputs, "a/b/c.md"), "utf8"), "# hi\n");
  assert.equal(await write("/mnt/user-data/outputs/a/b/c.md", "more\n", true), "OK");
  assert.equal(readFileSync(join(fx.dirs.outputs, "a/b/c.md"), "utf8"), "# hi\nmore\n");

  assert.equal(await write(`${W}/small.txt`, "a".repeat(79 * 1024)), "OK");
  const tooBig = await write(`${W}/big.txt`, "a".repeat(81 * 1024));
  assert.ok(tooBig.startsWith("Error: write_file content (82944 bytes) exceeds the 81920-byte single-call limit."));
  assert.ok(tooBig.includes("str_replace") && tooBig.includes("append=True"));
  assert.equal(await write(`${W}/big.txt`, "a".repeat(81 * 1024), true), "OK");
  const saved = process.env.DEERFLOW_WRITE_FILE_MAX_BYTES;
  try {
    process.env.DEERFLOW_WRITE_FILE_MAX_BYTES = String(200 * 1024);
    assert.equal(await write(`${W}/big2.txt`, "a".repeat(81 * 1024)), "OK");
    process.env.DEERFLOW_WRITE_FILE_MAX_BYTES = "0";
    assert.equal(await write(`${W}/big3.txt`, "a".repeat(300 * 1024)), "OK");
    process.env.DEERFLOW_WRITE_FILE_MAX_BYTES = "not-a-number";
    assert.ok((await write(`${W}/big4.txt`, "a".repeat(81 * 1024))).startsWith("Error: write_file content"));
  } finally {
    if (saved === undefined) delete process.env.DEERFLOW_WRITE_FILE_MAX_BYTES;
    else process.env.DEERFLOW_WRITE_FILE_MAX_BYTES = saved;
  }
  mkdirSync(join(fx.ws, "somedir"), { recursive: true });
  assert.equal(await write(`${W}/somedir`, "x"), `Error: Path is a directory, not a file: ${W}/somedir`);
  assert.equal(await write("/etc/evil", "x"), "Error: Permission denied writing to file: /etc/evil (Only paths under /mnt/user-data/ are allowed)");
  symlinkSync(join(fx.root, "created-outside.txt"), join(fx.ws, "dangling"));
  assert.ok(((await write(`${W}/dangling`, "x"))).startsWith(`Error: Permission denied writing to file: ${W}/dangling`), "DeerFlow's prefix, then the reason");
});

test("str_replace: empty file, empty old_str, first occurrence, replace_all, missing file", async () => {
  const replace = (args: Record<string, unknown>) => run(fx, tools.str_replace, { description: "d", ...args });
  writeFileSync(join(fx.ws, "empty.md"), "");
  assert.equal(await replace({ path: `${W}/empty.md`, old_str: "x", new_str: "y" }), `Error: String to replace not found in file: ${W}/empty.md`);
  writeFileSync(join(fx.ws, "s.txt"), "a-a-a");
  assert.equal(await replace({ path: `${W}/s.txt`, old_str: "", new_str: "zzz" }), "OK");
  assert.equal(await replace({ path: `${W}/s.txt`, old_str: "", new_str: "zzz", replace_all: true }), "OK");
  assert.equal(readFileSync(join(fx.ws, "s.txt"), "utf8"), "a-a-a");
  assert.equal(await replace({ path: `${W}/s.txt`, old_str: "a", new_str: "$&b" }), "OK");
  assert.equal(readFileSync(join(fx.ws, "s.txt"), "utf8"), "$&b-a-a");
  assert.equal(await replace({ path: `${W}/s.txt`, old_str: "a", new_str: "c", replace_all: true }), "OK");
  assert.equal(readFileSync(join(fx.ws, "s.txt"), "utf8"), "$&b-c-c");
  assert.equal(await replace({ path: `${W}/s.txt`, old_str: "nope", new_str: "c" }), `Error: String to replace not found in file: ${W}/s.txt`);
  assert.equal(await replace({ path: `${W}/none.txt`, old_str: "a", new_str: "b" }), `Error: File not found: ${W}/none.txt`);
  writeFileSync(join(fx.ws, "crlf.txt"), "one\r\ntwo\r\n");
  assert.equal(await replace({ path: `${W}/crlf.txt`, old_str: "one\ntwo", new_str: "1\n2" }), "OK");
  assert.equal(readFileSync(join(fx.ws, "crlf.txt"), "utf8"), "1\r\n2\r\n");
});

test("parallel str_replace on one file keeps both edits", async () => {
  writeFileSync(join(fx.ws, "par.txt"), "alpha\nbeta\n");
  const results = await Promise.all([
    run(fx, tools.str_replace, { description: "d", path: `${W}/par.txt`, old_str: "alpha", new_str: "ALPHA" }),
    run(fx, tools.str_replace, { description: "d", path: `${W}/par.txt`, old_str: "beta", new_str: "BETA" }),
    run(fx, tools.write_file, { description: "d", path: `${W}/par.txt`, content: "tail\n", append: true }),
  ]);
  assert.deepEqual(results, ["OK", "OK", "OK"]);
  assert.equal(readFileSync(join(fx.ws, "par.txt"), "utf8"), "ALPHA\nBETA\ntail\n");
});

test("glob: virtual paths, ignored dirs and thread data hidden, truncation", async () => {
  const g = makeFixture("g1");
  try {
    const t = toolsFor(g);
    writeFileSync(join(g.ws, "app.py"), "print('hi')\n");
    mkdirSync(join(g.ws, "pkg"));
    writeFileSync(join(g.ws, "pkg", "util.py"), "print('util')\n");
    mkdirSync(join(g.ws, "node_modules", "lib"), { recursive: true });
    writeFileSync(join(g.ws, "node_modules", "skip.py"), "x\n");
    writeFileSync(join(g.dirs.outputs, "hidden.py"), "x\n");
    const all = await run(g, t.glob, { description: "d", pattern: "**/*.py", path: W });
    assert.equal(all, `Found 2 paths under ${W}\n1. ${W}/app.py\n2. ${W}/pkg/util.py`);
    assert.ok(!all.includes(g.root));
    const suffix = await run(g, t.glob, { description: "d", pattern: "*.py", path: W });
    assert.equal(suffix, all, "patterns match from the right, like PurePosixPath.match");
    const dirsOnly = await run(g, t.glob, { description: "d", pattern: "**", path: W, include_dirs: true });
    assert.ok(dirsOnly.includes(`${W}/pkg`) && !dirsOnly.includes("node_modules") && !dirsOnly.includes(".deerflow"));
    writeFileSync(join(g.ws, "c.py"), "x\n");
    assert.equal(
      await run(g, t.glob, { description: "d", pattern: "**/*.py", path: W, max_results: 2 }),
      `Found 2 paths under ${W} (showing first 2)\n1. ${W}/app.py\n2. ${W}/c.py\nResults truncated. Narrow the path or pattern to see fewer matches.`,
    );
    assert.equal(
      await run(g, t.glob, { description: "d", pattern: "**/*.py", path: "/mnt/user-data/outputs" }),
      "Found 1 paths under /mnt/user-data/outputs\n1. /mnt/user-data/outputs/hidden.py",
    );
    assert.equal(await run(g, t.glob, { description: "d", pattern: "*.rs", path: W }), `No files matched under ${W}`);
    assert.equal(await run(g, t.glob, { description: "d", pattern: "*", path: `${W}/app.py` }), `Error: Path is not a directory: ${W}/app.py`);
    assert.equal(await run(g, t.glob, { description: "d", pattern: "*", path: `${W}/nope` }), `Error: Directory not found: ${W}/nope`);
  } finally {
    g.cleanup();
  }
});

test("grep: glob filter, binaries skipped, single file, truncation, literal, case, bad regex", async () => {
  const g = makeFixture("g2");
  try {
    const t = toolsFor(g);
    writeFileSync(join(g.ws, "main.py"), "TODO = 'ship it'\nprint(TODO)\n");
    writeFileSync(join(g.ws, "notes.txt"), "TODO in txt should be filtered\n");
    writeFileSync(join(g.ws, "image.bin"), Buffer.from("\0binary TODO"));
    const filtered = await run(g, t.grep, { description: "d", pattern: "TODO", path: W, glob: "**/*.py" });
    assert.equal(filtered, `Found 2 matches under ${W}\n${W}/main.py:1: TODO = 'ship it'\n${W}/main.py:2: print(TODO)`);
    const everything = await run(g, t.grep, { description: "d", pattern: "TODO", path: W });
    assert.ok(everything.includes(`${W}/notes.txt:1: TODO in txt`) && !everything.includes("image.bin"));

    writeFileSync(join(g.dirs.uploads, "report.md"), "Revenue grew 20%\n");
    assert.equal(
      await run(g, t.grep, { description: "d", pattern: "Revenue", path: "/mnt/user-data/uploads/report.md" }),
      "Found 1 matches under /mnt/user-data/uploads/report.md\n/mnt/user-data/uploads/report.md:1: Revenue grew 20%",
    );
    writeFileSync(join(g.ws, "main.py"), "TODO one\nTODO two\nTODO three\n");
    const capped = await run(g, t.grep, { description: "d", pattern: "TODO", path: W, glob: "*.py", max_results: 2 });
    assert.ok(capped.startsWith(`Found 2 matches under ${W} (showing first 2)`));
    assert.ok(capped.includes("TODO two") && !capped.includes("TODO three"));
    assert.ok(capped.endsWith("Results truncated. Narrow the path or add a glob filter."));

    writeFileSync(join(g.ws, "file.py"), "price = (a+b)\nresult = a+b\nTODO: fix\ntodo: also fix\n" + "long ".repeat(100) + "\n");
    const literal = await run(g, t.grep, { description: "d", pattern: "(a+b)", path: `${W}/file.py`, literal: true });
    assert.ok(literal.includes("price = (a+b)") && !literal.includes("result = a+b"));
    const sensitive = await run(g, t.grep, { description: "d", pattern: "TODO", path: `${W}/file.py`, case_sensitive: true });
    assert.ok(sensitive.includes("TODO: fix") && !sensitive.includes("todo: also fix"));
    const clipped = await run(g, t.grep, { description: "d", pattern: "long", path: `${W}/file.py` });
    assert.ok(clipped.endsWith(`${W}/file.py:5: ${"long ".repeat(100).slice(0, 197)}...`));
    assert.match(await run(g, t.grep, { description: "d", pattern: "[invalid", path: W }), /^Error: Invalid regex pattern: /);
    assert.equal(await run(g, t.grep, { description: "d", pattern: "zebra", path: W }), `No matches found under ${W}`);
  } finally {
    g.cleanup();
  }
});

test("ls: virtual paths, (empty), staging files and thread data hidden, bare root refused", async () => {
  const g = makeFixture("g3");
  try {
    const t = toolsFor(g);
    assert.equal(await run(g, t.ls, { description: "d", path: W }), "(empty)");
    writeFileSync(join(g.ws, "report.txt"), "hello\n");
    mkdirSync(join(g.ws, "subdir", "deeper", "deepest"), { recursive: true });
    mkdirSync(join(g.ws, ".git"));
    assert.equal(
      await run(g, t.ls, { description: "d", path: W }),
      `${W}/report.txt\n${W}/subdir/\n${W}/subdir/deeper/`,
    );
    writeFileSync(join(g.dirs.uploads, "report.txt"), "ready\n");
    writeFileSync(join(g.dirs.uploads, ".upload-active.part"), "partial\n");
    writeFileSync(join(g.dirs.uploads, ".upload-note.txt"), "intentional\n");
    assert.equal(
      await run(g, t.ls, { description: "d", path: "/mnt/user-data/uploads" }),
      "/mnt/user-data/uploads/.upload-note.txt\n/mnt/user-data/uploads/report.txt",
    );
    assert.equal(await run(g, t.ls, { description: "d", path: "/mnt/user-data" }), "Error: Permission denied: /mnt/user-data (Only paths under /mnt/user-data/ are allowed)");
    assert.equal(await run(g, t.ls, { description: "d", path: `${W}/missing` }), `Error: Directory not found: ${W}/missing`);
  } finally {
    g.cleanup();
  }
});

test("aborting the run kills bash's process group", async () => {
  const fifo = join(fx.ws, "holder.fifo");
  execFileSync("mkfifo", [fifo]);
  await fx.provider.acquire("t1");
  const controller = new AbortController();
  const invoked = tools.bash!.invoke(
    { id: "abort-1", name: "bash", args: { description: "d", command: "(sleep 300 > holder.fifo & wait)" }, type: "tool_call" },
    { state: { sandbox: { sandbox_id: fx.sandboxId } }, signal: controller.signal } as never,
  );
  // The grandchild holds the FIFO's write end: `open` = it is running, `end` = it is dead.
  const reader = createReadStream(fifo);
  await once(reader, "open");
  reader.resume();
  const ended = once(reader, "end");
  controller.abort();
  await assert.rejects(invoked, { name: "AbortError" });
  await ended;
});

test("one sandbox per thread, also under concurrent acquisition", async () => {
  const ids = await Promise.all([fx.provider.acquire("c1"), fx.provider.acquire("c1"), fx.provider.acquire("c2")]);
  assert.deepEqual(ids, ["local:default:c1", "local:default:c1", "local:default:c2"]);
  const [a, b] = await Promise.all([fx.provider.get(ids[0] ?? ""), fx.provider.get(ids[1] ?? "")]);
  assert.ok(a && a === b);
  assert.notEqual(a, await fx.provider.get(ids[2] ?? ""));
});
