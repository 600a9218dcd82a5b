// Host command execution (DeerFlow's test_local_sandbox_command_timeout.py), with real processes.
// Nothing here sleeps to wait: results are awaited, and "returned promptly" is proven by the
// command finishing without hitting its (much longer) timeout.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readlinkSync, watch } from "node:fs";
import { join } from "node:path";
import { runCommand, scrubbedEnv } from "../../../extension/harness/sandbox/exec.js";
import type { LocalSandbox } from "../../../extension/harness/sandbox/local.js";
import { formatExecResult, formatTimeoutDuration } from "../../../extension/harness/tools/sandbox/output.js";
import { makeFixture } from "./helpers.js";

const fx = makeFixture("exec");
after(() => fx.cleanup());

async function sandbox(): Promise<LocalSandbox> {
  const s = await fx.provider.get(await fx.provider.acquire("exec"));
  assert.ok(s);
  return s;
}

/**
 * Dead = gone, a zombie, or past the point of no return. The kernel releases a dying task's
 * memory before its files (do_exit: exit_mm, then exit_files), so once our pipes have closed a
 * killed process either is already gone/zombie or has no address space left: its cmdline reads
 * empty. Checking only ESRCH would race with init reaping the orphan.
 */
function isDead(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`).length === 0;
  } catch {
    return true;
  }
}

function readPid(name: string): number {
  return Number.parseInt(readFileSync(join(fx.ws, name), "utf8").trim(), 10);
}

test("provider ids, reuse, unknown ids and release", async () => {
  assert.equal(await fx.provider.acquire("alpha"), "local:default:alpha");
  const a = await fx.provider.get("local:default:alpha");
  assert.equal(await fx.provider.acquire("alpha"), "local:default:alpha");
  await fx.provider.release("local:default:alpha");
  assert.equal(await fx.provider.get("local:default:alpha"), a, "release keeps the instance");
  assert.equal(await fx.provider.get("local:default:nope"), undefined);
  await assert.rejects(fx.provider.acquire("../x"), /Invalid thread_id/);
});

test("echo, exit code and stderr keep DeerFlow's output contract", async () => {
  const s = await sandbox();
  assert.match(formatExecResult(await s.execCommand("echo hello")), /hello/);
  assert.equal(formatExecResult(await s.execCommand("exit 3")), "\nExit Code: 3");
  assert.equal(formatExecResult(await s.execCommand("echo out; echo oops >&2")), "out\n\nStd Error:\noops\n");
  assert.equal(formatExecResult(await s.execCommand("echo oops >&2; exit 2")), "oops\n\nExit Code: 2");
  assert.equal(formatExecResult(await s.execCommand("true")), "(no output)");
});

test("the command runs in the workspace", async () => {
  const r = await (await sandbox()).execCommand("pwd");
  assert.equal(r.stdout.trim(), fx.ws);
});

test("a command reading stdin gets EOF instead of blocking", async () => {
  const r = await (await sandbox()).execCommand("read x; echo got", { timeoutMs: 60_000 });
  assert.equal(r.timedOut, false);
  assert.equal(r.stdout, "got\n");
});

test("a backgrounded process does not hold the call until the timeout", async () => {
  const r = await (await sandbox()).execCommand("sleep 300 & echo $! > bg.pid; echo serving", { timeoutMs: 60_000 });
  const pid = readPid("bg.pid");
  try {
    assert.equal(r.timedOut, false, "returned when the foreground shell exited");
    assert.equal(r.stdout, "serving\n");
    assert.equal(isDead(pid), false, "the background process keeps running");
    // It writes into a pipe, never into a deleted capture file (DeerFlow's disk-leak regression).
    assert.ok(!readlinkSync(`/proc/${pid}/fd/1`).includes("(deleted)"));
  } finally {
    process.kill(pid, "SIGKILL");
  }
});

test("timeout kills the whole process group and returns partial output with the notice", async () => {
  const r = await (await sandbox()).execCommand(
    "echo partial; (sleep 300 & echo $! > grandchild.pid; wait); echo never",
    { timeoutMs: 1500 },
  );
  assert.equal(r.timedOut, true);
  const pid = readPid("grandchild.pid");
  assert.ok(isDead(pid), "the grandchild died with its group");
  const text = formatExecResult(r);
  assert.ok(text.startsWith("partial\n"));
  assert.ok(!text.includes("never"));
  assert.ok(text.endsWith(
    "Command timed out after 1.5 seconds and was terminated. To run a long-lived process such as a web server, " +
      "start it in the background and redirect its output, e.g. `your-command > /mnt/user-data/workspace/server.log 2>&1 &`.",
  ));
  assert.equal(formatTimeoutDuration(1000), "1 second");
  assert.equal(formatTimeoutDuration(600_000), "600 seconds");
});

test("aborting kills the process group and rejects with the abort reason", async () => {
  const controller = new AbortController();
  const pidFile = join(fx.ws, "abort.pid");
  const ready = new Promise<void>((resolve) => {
    const watcher = watch(fx.ws, (_event, name) => {
      if (name === "abort.pid" && existsSync(pidFile)) {
        watcher.close();
        resolve();
      }
    });
  });
  const running = (await sandbox()).execCommand(
    "(sleep 300 & echo $! > abort.tmp; mv abort.tmp abort.pid; wait)",
    { timeoutMs: 60_000, signal: controller.signal },
  );
  await ready;
  controller.abort();
  await assert.rejects(running, { name: "AbortError" });
  assert.ok(isDead(Number.parseInt(readFileSync(pidFile, "utf8"), 10)));
});

test("output capture is bounded", async () => {
  const r = await runCommand("head -c 5000 /dev/zero | tr '\\0' a", { cwd: fx.ws, env: scrubbedEnv(), captureLimitBytes: 100 });
  assert.equal(r.stdout, `${"a".repeat(100)}\n... [output truncated after 100 of 5000 bytes; remaining output discarded] ...`);
});

test("credential-looking variables are scrubbed from the environment", async () => {
  const env = scrubbedEnv({ PATH: process.env.PATH, HOME: "/h", MY_API_KEY: "k", GH_TOKEN: "t", DB_PASS: "p", SENTRY_DSN: "d", AWS_SECRET_ACCESS_KEY: "s", DATABASE_URL: "u", LANG: "C" });
  assert.deepEqual(Object.keys(env).sort(), ["HOME", "LANG", "PATH"]);
  process.env.DEERFLOW_TEST_TOKEN = "leak";
  try {
    const r = await (await sandbox()).execCommand('echo "${DEERFLOW_TEST_TOKEN:-unset}"');
    assert.equal(r.stdout, "unset\n");
  } finally {
    delete process.env.DEERFLOW_TEST_TOKEN;
  }
});
