// Memory extraction as DeerFlow does it (issue 22), through the real CLI with the scripted model:
// the valid part of a messy answer is kept; an upload-only turn leaves memory alone; only the
// messages after the thread's watermark are sent, so nothing is re-sent on every run and a fact
// the user deleted does not come back. Each test asserts what the provider was sent and what
// memory holds after.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptedReply } from "../fixtures/modelServer.js";
import { runCli, sandboxDirs, tempDir, useModelServer } from "./helpers/cli.js";
import { conversationOf, extractionInput, memoryJson, memoryRun, script, showMemory, update } from "./helpers/memory.js";

const server = useModelServer();

test("a messy extraction answer keeps its valid part: the update is picked out of the text around it, invalid fields dropped, numbers read", async () => {
  const d = sandboxDirs();
  const messy: ScriptedReply = {
    content: [
      "<think>The user states two things; one more object first:</think>",
      '{"analysis": {"facts_found": 2}}',
      "Here is the update:",
      "```json",
      JSON.stringify({
        user: { workContext: { summary: "Staff engineer on the payments API.", shouldUpdate: "true" }, topOfMind: "bad" },
        history: [],
        newFacts: [
          { content: "The user is a staff engineer on the payments API.", category: "context", confidence: "0.95" },
          { content: "The user prefers Postgres over MySQL.", category: "preference", confidence: 0.9 },
          { content: 42, confidence: 0.9 },
          "not a fact",
          { content: "The user likes something, maybe.", confidence: "high" },
        ],
        factsToRemove: "none",
      }),
      "```",
      "Done.",
    ].join("\n"),
  };
  const r = await memoryRun(server, d, script([{ content: "Noted." }], () => messy), "I'm a staff engineer on the payments API and I prefer Postgres.");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.extractions.length, 1, "one extraction request");
  assert.match(r.stderr, /memory: updated \(2 facts\)/);
  assert.match(r.stderr, /memory: 6 malformed entries of the model's answer for thread .* left out; the rest is applied/);
  const doc = (await showMemory(d)).doc!;
  assert.deepEqual(
    doc.facts.map((f) => [f.content, f.confidence]),
    [
      ["The user is a staff engineer on the payments API.", 0.95],
      ["The user prefers Postgres over MySQL.", 0.9],
    ],
  );
  assert.equal(Object.values(doc.workspaces!)[0]!.user.workContext!.summary, "Staff engineer on the payments API.");

  // Only removals beside a malformed replacement: the whole update is refused (DeerFlow's unsafe partial update), memory unchanged.
  const before = readFileSync(memoryJson(d), "utf8");
  const unsafe = await memoryRun(
    server,
    d,
    script([{ content: "ok" }], () => ({ content: JSON.stringify({ user: {}, history: {}, newFacts: [{ content: "Prefers MySQL now.", confidence: "very" }], factsToRemove: [doc.facts[1]!.id] }) })),
    "Actually I switched to MySQL.",
  );
  assert.equal(unsafe.code, 0, unsafe.stderr);
  assert.match(unsafe.stderr, /unsafe partial update/);
  assert.equal(readFileSync(memoryJson(d), "utf8"), before);
});

test("an upload-only turn leaves memory alone: no extraction request for it, and its answer is never sent later", async () => {
  const d = sandboxDirs();
  const first = await memoryRun(server, d, script([{ content: "Hello Ada." }], () => update([{ content: "The user is called Ada." }])), "I am Ada.");
  assert.equal(first.code, 0, first.stderr);
  const stored = readFileSync(memoryJson(d), "utf8");

  const report = join(tempDir("upload"), "q3-report.md");
  writeFileSync(report, "# Q3\n\nRevenue grew by 12 percent in the EMEA region.\n");
  const uploadOnly = await memoryRun(
    server,
    d,
    script(
      [
        { toolCalls: [{ name: "read_file", args: { description: "read the upload", path: "/mnt/user-data/uploads/q3-report.md" } }] },
        { content: "The uploaded report says EMEA revenue grew by 12 percent." },
      ],
      () => update([{ content: "SHOULD-NOT-BE-STORED: the user uploaded a Q3 report." }]),
    ),
    "",
    ["--thread", first.threadId, "--upload", report],
  );
  assert.equal(uploadOnly.code, 0, uploadOnly.stderr);
  assert.equal(uploadOnly.end?.data?.status, "success");
  assert.ok(JSON.stringify(uploadOnly.lead[0]!.body).includes("<current_uploads>"), "the turn was the upload");
  assert.equal(uploadOnly.extractions.length, 0, "no extraction request for an upload-only turn");
  assert.doesNotMatch(uploadOnly.stderr, /memory: updated/);
  assert.equal(readFileSync(memoryJson(d), "utf8"), stored, "memory unchanged");

  // The next turn with text: only it is sent, never the answer about the uploaded file.
  const next = await memoryRun(server, d, script([{ content: "You're welcome." }], () => update([])), "Thanks!", ["--thread", first.threadId]);
  assert.equal(next.extractions.length, 1);
  const sent = conversationOf(extractionInput(next.extractions[0]!));
  assert.match(sent, /User: Thanks!/);
  assert.doesNotMatch(sent, /EMEA|uploaded report|current_uploads/);
});

test("extraction sends only the messages after the thread's watermark: nothing is re-sent, and a fact the user deleted does not come back", async () => {
  const d = sandboxDirs();
  // The scripted model learns the Rust fact whenever the conversation it is given says so.
  const extraction = (conversation: string): ScriptedReply => update(conversation.includes("Rust") ? [{ content: "The user writes Rust." }] : []);
  const one = await memoryRun(server, d, script([{ content: "Rust it is." }], extraction), "I write Rust every day.");
  assert.equal(one.code, 0, one.stderr);
  assert.deepEqual((await showMemory(d)).doc!.facts.map((f) => f.content), ["The user writes Rust."]);

  // The user deletes the fact by hand (the file is theirs to edit).
  const doc = JSON.parse(readFileSync(memoryJson(d), "utf8")) as { facts: unknown[] };
  doc.facts = [];
  writeFileSync(memoryJson(d), JSON.stringify(doc, null, 2));

  const two = await memoryRun(server, d, script([{ content: "Sure." }], extraction), "Can you help with a shell script?", ["--thread", one.threadId]);
  assert.equal(two.code, 0, two.stderr);
  assert.equal(two.extractions.length, 1);
  const sent = conversationOf(extractionInput(two.extractions[0]!));
  assert.match(sent, /User: Can you help with a shell script\?/);
  assert.match(sent, /Assistant: Sure\./);
  assert.doesNotMatch(sent, /Rust/, "the first run's turn is not sent again");
  assert.deepEqual((await showMemory(d)).doc!.facts, [], "the deleted fact did not come back");

  // A third run on the thread sends its own turn only.
  const three = await memoryRun(server, d, script([{ content: "Bye." }], extraction), "Bye.", ["--thread", one.threadId]);
  assert.equal(conversationOf(extractionInput(three.extractions[0]!)).match(/^(User|Assistant):/gm)?.length, 2);

  // A turn whose extraction failed waits in the queue; Forget (memory clear) drops it, and the
  // thread's next extraction does not send it again: forgetting is not postponing.
  let fail = true;
  const failing = (conversation: string): ScriptedReply => {
    if (fail) {
      fail = false;
      return { error: { status: 500 } };
    }
    return extraction(conversation);
  };
  const four = await memoryRun(server, d, script([{ content: "Noted." }], failing), "My secret project is in Rust too.", ["--thread", one.threadId]);
  assert.match(four.stderr, /will retry/);
  assert.equal((await runCli(["memory", "clear", "--data-dir", d.dataDir])).code, 0);
  const five = await memoryRun(server, d, script([{ content: "Hello again." }], extraction), "Hello?", ["--thread", one.threadId]);
  const afterForget = conversationOf(extractionInput(five.extractions[0]!));
  assert.match(afterForget, /User: Hello\?/);
  assert.doesNotMatch(afterForget, /Rust/, "the forgotten turn is not sent");
  assert.deepEqual((await showMemory(d)).doc!.facts, []);
});
