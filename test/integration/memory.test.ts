// Long-term memory (issue 15) through the real CLI (dist/cli.js): extraction after a run (drained
// before the CLI exits), injection into a thread's first request, `memory show|clear`, retries,
// scrubbing, --no-memory / memory.enabled false, and a hand-broken memory file. The scripted model
// server tells the extraction request apart by its system prompt and answers it with a scripted
// update; every other request gets the lead agent's scripted answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { RecordedRequest, ScriptedReply, ScriptFn } from "../fixtures/modelServer.js";
import { textOf } from "../fixtures/requests.js";
import { runCli, sandboxDirs, scriptedRunArgs, spawnCli, useModelServer } from "./helpers/cli.js";
import { errorOf, settings, startHarness, type HarnessProcess } from "./helpers/server.js";
import type { Dirs } from "./helpers/cli.js";
import { MemoryQueue } from "../../extension/harness/memory/queue.js";
import { conversationOf, extractionInput, isExtraction, memoryBlock, memoryJson, memoryRun, script, serverRun as serverRunOn, showMemory, update } from "./helpers/memory.js";

const server = useModelServer();

const run = (dirs: Dirs, s: ScriptFn, prompt: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) => memoryRun(server, dirs, s, prompt, extra, env);
const show = (dirs: Dirs) => showMemory(dirs);

test("a fact stated in thread 1 is in the <memory> block of thread 2's first request; show prints it; clear removes it", async () => {
  const d = sandboxDirs();
  writeFileSync(join(d.workspace, "notes.txt"), "TOOL-RESULT-MARKER\n");
  const fact = "The user maintains the Zephyr-42 compiler, written in Rust.";
  // Thread 1: a tool call, its result, then the final answer.
  const t1 = await run(
    d,
    script(
      [{ toolCalls: [{ name: "read_file", args: { description: "read notes", path: "/mnt/user-data/workspace/notes.txt" } }] }, { content: "Noted: Zephyr-42 in Rust." }],
      () => update([{ content: fact }], { user: { workContext: { summary: "Maintains Zephyr-42 (Rust).", shouldUpdate: true } } }),
    ),
    "I maintain the Zephyr-42 compiler, it is written in Rust.",
  );
  assert.equal(t1.code, 0, t1.stderr);
  assert.equal(t1.lead.length, 2);
  assert.equal(memoryBlock(t1.lead[0]!), undefined, "an empty memory injects nothing");
  assert.equal(t1.extractions.length, 1, "the CLI drains the queue before it exits");
  assert.match(t1.stderr, /memory: updated \(1 facts\)/);
  // Only the user's message and the final answer went to extraction: no tool call, no tool result, no reminder.
  const input = extractionInput(t1.extractions[0]!);
  assert.match(input, /User: I maintain the Zephyr-42 compiler/);
  assert.match(input, /Assistant: Noted: Zephyr-42 in Rust\./);
  assert.doesNotMatch(input, /TOOL-RESULT-MARKER|read_file|current_date|system-reminder/);

  // Thread 2: its first request carries the fact, hidden, before the user's message.
  const t2 = await run(d, script([{ content: "Hello again." }], () => update([{ content: "The user prefers tabs over spaces.", category: "preference" }])), "What do you remember?");
  assert.equal(t2.code, 0, t2.stderr);
  const block = memoryBlock(t2.lead[0]!);
  assert.ok(block, "thread 2's first request has a <memory> block");
  assert.ok(block.startsWith("<system-reminder>\n<memory>\n") && block.endsWith("\n</memory>\n</system-reminder>"), block);
  assert.ok(block.includes(`- [context | 0.95] ${fact}`), block);
  assert.ok(block.includes("- Work: Maintains Zephyr-42 (Rust)."), block);
  const msgs = t2.lead[0]!.body!.messages!;
  const memIdx = msgs.findIndex((m) => textOf(m).includes("<memory>"));
  const userIdx = msgs.findIndex((m) => m.role === "user" && textOf(m).includes("What do you remember?"));
  assert.ok(memIdx >= 0 && memIdx < userIdx, "the memory block sits before the user's message");
  assert.ok(!textOf(msgs[0]).includes(fact), "the system prompt stays static");
  assert.match(textOf(msgs[0]), /user-managed data/);

  // Thread 2's next run sees the very same bytes, though memory changed since (the tabs fact).
  const t2b = await run(d, script([{ content: "Still here." }], () => update([])), "And now?", ["--thread", t2.threadId]);
  assert.equal(t2b.code, 0, t2b.stderr);
  assert.equal(memoryBlock(t2b.lead[0]!), block, "the thread's snapshot, byte for byte");

  const shown = await show(d);
  assert.equal(shown.code, 0, shown.stderr);
  assert.deepEqual(shown.doc!.facts.map((f) => f.content).sort(), [fact, "The user prefers tabs over spaces."].sort());
  assert.equal(shown.doc!.facts.find((f) => f.content === fact)!.source, t1.threadId);

  const cleared = await runCli(["memory", "clear", "--data-dir", d.dataDir]);
  assert.equal(cleared.code, 0, cleared.stderr);
  assert.deepEqual((await show(d)).doc!.facts, []);

  // Forget reaches existing threads: thread 2's snapshot held the fact; its next run has none.
  const t2c = await run(d, script([{ content: "Forgotten." }], () => update([])), "Anything left?", ["--thread", t2.threadId]);
  assert.equal(t2c.code, 0, t2c.stderr);
  assert.equal(memoryBlock(t2c.lead[0]!), undefined, "a cleared memory is not re-sent in an older thread");
  assert.ok(!JSON.stringify(t2c.lead[0]!.body).includes("Zephyr-42"), "no forgotten fact reaches the provider");

  // Thread 3: nothing to inject.
  const t3 = await run(d, script([{ content: "Hi." }], () => update([])), "Do you know me?");
  assert.equal(t3.code, 0, t3.stderr);
  assert.equal(memoryBlock(t3.lead[0]!), undefined);
  assert.ok(!JSON.stringify(t3.lead[0]!.body).includes("Zephyr-42"));
});

test("a failing extraction (500) does not fail the run and is retried at the next run", async () => {
  const d = sandboxDirs();
  let failFirst = true;
  const extraction = (input: string): ScriptedReply => {
    if (input.includes("ALPHA") && failFirst) {
      failFirst = false;
      return { error: { status: 500 } };
    }
    return update(input.includes("ALPHA") ? [{ content: "The user codes in ALPHA-lang." }] : [{ content: "The user likes BETA tests." }]);
  };
  const a = await run(d, script([{ content: "ok" }], extraction), "I code in ALPHA-lang every day.");
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.end?.data?.status, "success");
  assert.equal(a.extractions.length, 1);
  assert.equal(a.extractions[0]!.status, 500);
  assert.match(a.stderr, /extraction for thread .* failed \(attempt 1 of 5\), will retry/);
  assert.deepEqual((await show(d)).doc!.facts, []);

  const b = await run(d, script([{ content: "ok" }], extraction), "I like BETA tests.");
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.extractions.length, 2, "thread A's entry is retried, thread B's processed");
  assert.match(b.stderr, /memory: updated \(2 facts\)/);
  assert.deepEqual((await show(d)).doc!.facts.map((f) => f.content).sort(), ["The user codes in ALPHA-lang.", "The user likes BETA tests."]);
});

test("a secret-looking value is scrubbed: not in memory.json, not in the queue database", async () => {
  const d = sandboxDirs();
  const secret = "sk-live1234567890abcdefSECRET";
  const r = await run(
    d,
    script([{ content: "I will not store that." }], () => update([{ content: `The user's OpenAI key is ${secret}` }], { user: { topOfMind: { summary: `Rotating ${secret}`, shouldUpdate: true } } })),
    `My key is ${secret}, remember it.`,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!extractionInput(r.extractions[0]!).includes(secret), "the queued conversation was scrubbed");
  const raw = readFileSync(memoryJson(d), "utf8");
  assert.ok(!raw.includes(secret), raw);
  assert.match(raw, /The user's OpenAI key is \[redacted\]/);
  assert.match(raw, /Rotating \[redacted\]/);
  for (const f of ["memory.db", "memory.db-wal"]) {
    const p = join(d.dataDir, "memory", f);
    if (existsSync(p)) assert.ok(!readFileSync(p).includes(secret), `${f} holds the secret`);
  }
});

test("--no-memory and memory.enabled false: no injection and no extraction request", async () => {
  const d = sandboxDirs();
  const seeded = await run(d, script([{ content: "ok" }], () => update([{ content: "The user is called Ada." }])), "Call me Ada.");
  assert.equal(seeded.code, 0, seeded.stderr);
  assert.equal((await show(d)).doc!.facts.length, 1);

  const off = await run(d, script([{ content: "ok" }], () => update([{ content: "SHOULD-NOT-BE-STORED" }])), "Hello.", ["--no-memory"]);
  assert.equal(off.code, 0, off.stderr);
  assert.equal(off.requests.length, 1, "only the lead's request");
  assert.equal(memoryBlock(off.lead[0]!), undefined);
  assert.doesNotMatch(off.stderr, /memory:/);

  writeFileSync(join(d.dataDir, "config.json"), JSON.stringify({ memory: { enabled: false } }));
  const cfgOff = await run(d, script([{ content: "ok" }], () => update([{ content: "SHOULD-NOT-BE-STORED" }])), "Hello again.");
  assert.equal(cfgOff.code, 0, cfgOff.stderr);
  assert.equal(cfgOff.requests.length, 1);
  assert.equal(memoryBlock(cfgOff.lead[0]!), undefined);
  assert.deepEqual((await show(d)).doc!.facts.map((f) => f.content), ["The user is called Ada."]);
});

test("a hand-broken memory file: a clear error from memory show, never overwritten, runs still succeed", async () => {
  const d = sandboxDirs();
  const seeded = await run(d, script([{ content: "ok" }], () => update([{ content: "The user is called Ada." }])), "Call me Ada.");
  assert.equal(seeded.code, 0, seeded.stderr);

  const broken = readFileSync(memoryJson(d), "utf8").replace('"facts": [', '"facts": [ oops');
  writeFileSync(memoryJson(d), broken);
  const s = await show(d);
  assert.equal(s.code, 1);
  assert.ok(s.stderr.includes(memoryJson(d)) && /not valid JSON/.test(s.stderr), s.stderr);

  const r = await run(d, script([{ content: "ok" }], () => update([{ content: "SHOULD-NOT-BE-STORED" }])), "Hello.");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(memoryBlock(r.lead[0]!), undefined);
  assert.match(r.stderr, /memory: not updated; 1 extraction\(s\) failed/);
  assert.equal(readFileSync(memoryJson(d), "utf8"), broken, "the broken file is left as it is");

  // Valid JSON, not memory-shaped: the zod path names the field.
  const doc = JSON.parse(broken.replace('"facts": [ oops', '"facts": [')) as { facts: Array<{ confidence: number }> };
  doc.facts[0]!.confidence = 7;
  writeFileSync(memoryJson(d), JSON.stringify(doc));
  const s2 = await show(d);
  assert.equal(s2.code, 1);
  assert.match(s2.stderr, /facts\.0\.confidence/);
});

const serverRun = (h: HarnessProcess, workspace: string, s: ScriptFn, prompt: string) => serverRunOn(server, h, workspace, s, prompt);

test("harness server: debounced extraction after a run, memory/get|set|clear, a broken document refused, memory off by setting", async () => {
  const d = sandboxDirs();
  // A debounce of 0 s: extraction right after the run, still through the server's timer.
  const h = startHarness({ DEERFLOW_MEMORY_DEBOUNCE_SECONDS: "0" });
  try {
    await h.request("harness/initialize", { dataDir: d.dataDir, settings: settings(server.url) });
    const empty = await h.request("memory/get", {});
    assert.deepEqual(empty.memory.facts, []);
    assert.equal(empty.queued, 0);

    const r1 = await serverRun(h, d.workspace, script([{ content: "Hello Grace." }], () => update([{ content: "The user is called Grace." }])), "I am Grace.");
    await h.waitNote("log/message", (p) => p.message === "memory: updated (1 facts)");
    assert.equal(r1.requests().filter(isExtraction).length, 1);
    const got = await h.request("memory/get", {});
    assert.deepEqual(got.memory.facts.map((f) => f.content), ["The user is called Grace."]);
    assert.equal(got.queued, 0);

    // A document that does not fit is refused with the field at fault; nothing changes.
    const before = readFileSync(memoryJson(d), "utf8");
    const bad = structuredClone(got.memory);
    bad.facts[0]!.confidence = 5;
    const refused = await errorOf(h.request("memory/set", { memory: bad }));
    assert.equal(refused.data?.code, "memory_invalid");
    assert.match(refused.message, /facts\.0\.confidence/);
    assert.equal(readFileSync(memoryJson(d), "utf8"), before);

    // An edit is stored scrubbed, and a new thread's first request carries it.
    const edited = structuredClone(got.memory);
    edited.facts[0]!.content = "The user is called Grace Hopper; token sk-abcdef1234567890XYZ.";
    const saved = await h.request("memory/set", { memory: edited });
    assert.equal(saved.memory.facts[0]!.content, "The user is called Grace Hopper; token [redacted].");
    assert.ok(!readFileSync(memoryJson(d), "utf8").includes("sk-abcdef"));
    const r2 = await serverRun(h, d.workspace, script([{ content: "Hi." }], () => update([])), "Who am I?");
    assert.ok(memoryBlock(r2.requests().filter((q) => !isExtraction(q))[0]!)?.includes("The user is called Grace Hopper; token [redacted]."));

    // Memory off by setting: no injection, no extraction.
    await h.request("harness/configure", { settings: settings(server.url, { memory: { enabled: false } }) });
    const r3 = await serverRun(h, d.workspace, script([{ content: "Hi." }], () => update([{ content: "SHOULD-NOT-BE-STORED" }])), "Hello.");
    assert.equal(r3.requests().length, 1);
    assert.equal(memoryBlock(r3.requests()[0]!), undefined);

    assert.equal(await h.request("memory/clear", {}), null);
    assert.deepEqual((await h.request("memory/get", {})).memory.facts, []);
  } finally {
    await h.close();
  }
});

test("a compaction flushes the messages it summarizes into memory first (DeerFlow's memory_flush_hook); none is ever sent twice", async () => {
  const d = sandboxDirs();
  writeFileSync(
    join(d.dataDir, "config.json"),
    JSON.stringify({
      models: [{ name: "main", model: "scripted-main", base_url: server.url }],
      default_model: "main",
      summarization: { trigger: [{ type: "messages", value: 6 }], keep: { type: "messages", value: 1 } },
    }),
  );
  const ls = (id: string): ScriptedReply => ({ toolCalls: [{ id, name: "ls", args: { description: "list", path: "/mnt/user-data/workspace" } }] });
  const isSummary = (req: RecordedRequest) => (req.body?.messages ?? []).length === 1 && textOf(req.body!.messages![0]).includes("Messages to summarize:");
  /** Two runs on one thread; the second crosses the trigger. `failFirst`: the first run's extraction fails (500), so its turns stay unextracted. */
  const twoRuns = async (failFirst: boolean) => {
    const replies = [ls("call_one"), { content: "Answer one." }, ls("call_two"), { content: "Answer two." }];
    let lead = 0;
    let failed = !failFirst;
    const s: ScriptFn = (req) => {
      if (isExtraction(req)) {
        if (failed) return update([]);
        failed = true;
        return { error: { status: 500 } };
      }
      return isSummary(req) ? { content: "Earlier: the user asked about the first listing." } : replies[lead++];
    };
    const thread = randomUUID();
    const turn = async (prompt: string) => {
      server.setScript(s);
      const from = server.requests.length;
      const r = await runCli(["run", "--workspace", d.workspace, "--data-dir", d.dataDir, "--thread", thread, "--prompt", prompt], {}, { memory: true });
      assert.equal(r.code, 0, r.stderr);
      return server.requests.slice(from);
    };
    const one = await turn("First question, about the listing.");
    assert.equal(one.filter(isExtraction).length, 1, "the first run's conversation");
    const two = await turn("Second question.");
    assert.ok(two.some(isSummary), "the second run crossed the trigger and summarized");
    return two.filter(isExtraction).map((q) => conversationOf(extractionInput(q)));
  };

  // The first run's extraction failed: the summarized turns were never extracted, so the flush
  // sends them (first: it is the older slice), and the thread's conversation only what follows.
  const extractions = await twoRuns(true);
  assert.equal(extractions.length, 2, "the flushed slice and the run's conversation, each extracted");
  const flushed = extractions.find((c) => !c.includes("Answer two."));
  assert.ok(flushed, `one extraction holds only what was summarized: ${extractions.join("\n----\n")}`);
  assert.match(flushed, /User: First question, about the listing\./);
  assert.match(flushed, /Assistant: Answer one\./);
  const rest = extractions.find((c) => c.includes("Answer two."))!;
  assert.doesNotMatch(rest, /First question|Answer one/, "nothing is sent twice");

  // Extracted after the first run already: the flush has nothing new and sends nothing; the second run's extraction holds only its own turn.
  const after = await twoRuns(false);
  assert.equal(after.length, 1, `only the second run's conversation: ${after.join("\n----\n")}`);
  assert.match(after[0]!, /User: Second question\./);
  assert.doesNotMatch(after[0]!, /First question|Answer one/);
});

test("harness server: an edit saved while the model extracts is kept; a Forget while it extracts is not undone", async () => {
  const d = sandboxDirs();
  const h = startHarness({ DEERFLOW_MEMORY_DEBOUNCE_SECONDS: "0" });
  try {
    await h.request("harness/initialize", { dataDir: d.dataDir, settings: settings(server.url) });
    // The extraction's answer waits for the test: the script is async.
    let release!: () => void;
    const hold = (facts: Array<{ content: string }>): ScriptFn => {
      const gate = new Promise<void>((r) => (release = r));
      const inner = script([{ content: "ok" }], () => update(facts));
      return async (req, i) => {
        if (isExtraction(req)) await gate;
        return inner(req, i);
      };
    };

    const from = server.requests.length;
    await serverRun(h, d.workspace, hold([{ content: "Extracted: likes chess." }]), "I like chess.");
    await server.waitForRequests(from + 2);
    assert.ok(isExtraction(server.requests[from + 1]!));
    const edited = (await h.request("memory/get", {})).memory;
    edited.facts.push({ id: "fact_hand", content: "Hand-written: lives in Lyon.", category: "context", confidence: 1, createdAt: "2026-01-01T00:00:00.000Z", source: "user" });
    await h.request("memory/set", { memory: edited });
    release();
    await h.waitNote("log/message", (p) => p.message === "memory: updated (2 facts)");
    assert.deepEqual((await h.request("memory/get", {})).memory.facts.map((f) => f.content).sort(), ["Extracted: likes chess.", "Hand-written: lives in Lyon."]);

    const next = server.requests.length;
    await serverRun(h, d.workspace, hold([{ content: "Extracted: SHOULD-BE-FORGOTTEN." }]), "I also like go.");
    await server.waitForRequests(next + 2);
    assert.equal(await h.request("memory/clear", {}), null);
    release();
    await h.waitNote("log/message", (p) => p.message === "memory: updated (0 facts)");
    assert.deepEqual((await h.request("memory/get", {})).memory.facts, []);
  } finally {
    await h.close();
  }
});

test("durable queue: a CLI killed while it extracts loses nothing; the harness server picks the entry up when it starts", async () => {
  const d = sandboxDirs();
  // No debounce: the entry is due as soon as the server looks (the killed CLI's lease is not waited for either).
  writeFileSync(join(d.dataDir, "config.json"), JSON.stringify({ memory: { debounce_seconds: 0 } }));
  // The CLI's extraction never gets an answer: the process is killed while it waits.
  let extractionArrived!: () => void;
  const arrived = new Promise<void>((r) => (extractionArrived = r));
  const lead = script([{ content: "ok" }], () => update([]));
  server.setScript(async (req, i) => {
    if (!isExtraction(req)) return lead(req, i);
    extractionArrived();
    return new Promise<never>(() => undefined);
  });
  const cli = spawnCli([...scriptedRunArgs(server, d, "I collect vintage maps."), "--thread", randomUUID()], {}, { memory: true });
  await arrived;
  cli.child.kill("SIGKILL");
  await cli.done;

  // Configured like the CLI's ad-hoc model: the entry names model "scripted" at the server's URL.
  const h = startHarness();
  try {
    server.setScript(script([], (c) => update(c.includes("vintage maps") ? [{ content: "The user collects vintage maps." }] : [])));
    await h.request("harness/initialize", { dataDir: d.dataDir, settings: settings(server.url) });
    await h.waitNote("log/message", (p) => p.message === "memory: updated (1 facts)");
    assert.deepEqual((await h.request("memory/get", {})).memory.facts.map((f) => f.content), ["The user collects vintage maps."]);
  } finally {
    await h.close();
  }
});

test("harness server: an extraction queued by an ad-hoc CLI run (--base-url) never gets the host's key; a configured model does", async () => {
  const d = sandboxDirs();
  const HOST_KEY = "sk-host-held-0123456789abcdef";
  const h = startHarness({ DEERFLOW_MEMORY_DEBOUNCE_SECONDS: "0" });
  try {
    await h.request("harness/initialize", { dataDir: d.dataDir, settings: settings(server.url) });
    await h.request("harness/configure", { settings: settings(server.url), apiKeys: { OPENAI_API_KEY: HOST_KEY } });
    // What `deerflow run --base-url URL --model adhoc-m` leaves queued (its extraction not yet done).
    const queue = MemoryQueue.open(d.dataDir);
    queue.enqueue({ threadId: "adhoc-thread", workspace: realpathSync(d.workspace), kind: "conversation", model: "adhoc-m", baseURL: server.url, messages: [{ role: "user", content: "I fly gliders." }], dueAt: Date.now() });
    queue.close();
    // A server run queues its own conversation and arms the timer: both entries are extracted.
    const r = await serverRun(h, d.workspace, script([{ content: "Hi." }], (c) => update(c.includes("gliders") ? [{ content: "The user flies gliders." }] : [])), "Hello.");
    await h.waitNote("log/message", (p) => typeof p.message === "string" && p.message.startsWith("memory: updated"));
    const extractions = r.requests().filter(isExtraction);
    const adhoc = extractions.find((q) => (q.body as { model?: string }).model === "adhoc-m");
    const configured = extractions.find((q) => (q.body as { model?: string }).model === "scripted");
    assert.ok(adhoc && configured, `both extractions ran: ${extractions.map((q) => (q.body as { model?: string }).model).join(", ")}`);
    assert.ok(!(adhoc.headers.authorization ?? "").includes(HOST_KEY), "the host's key never goes to the ad-hoc endpoint");
    assert.equal(configured.headers.authorization, `Bearer ${HOST_KEY}`, "the configured model gets the key held for its api_key_env");
  } finally {
    await h.close();
  }
});
