// Uploads, ViewImage, Title and Clarification through the real CLI (dist/cli.js): a child process,
// the real SQLite store and thread folders, the scripted model server as the only fake. Each test
// asserts what the model was sent and what `deerflow state` shows afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply } from "../fixtures/modelServer.js";
import { chat, textOf } from "../fixtures/requests.js";
import { cliState, sandboxDirs, scriptedRun, tempDir, useModelServer } from "./helpers/cli.js";
import type { Dirs } from "./helpers/cli.js";

const server = useModelServer();

const run = (dirs: Dirs, script: ScriptedReply[], prompt: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) =>
  scriptedRun(server, dirs, script, prompt, extra, env);

const state = cliState;

function imageUrls(req: RecordedRequest): string[] {
  return chat(req).flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === "image_url").map((b) => b.image_url!.url) : []));
}

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");

test("a first exchange produces a title; a later run keeps it", async () => {
  const dirs = sandboxDirs();
  const prompt = "Refactor the billing service so invoices are generated asynchronously";
  const r1 = await run(dirs, [{ content: "Here is a plan." }], prompt);
  assert.equal(r1.code, 0, r1.stderr);
  const s1 = await state(dirs, r1.threadId);
  assert.equal(s1.title, prompt.slice(0, 50).trimEnd() + "...");
  const r2 = await run(dirs, [{ content: "Done." }], "now do it", ["--thread", r1.threadId]);
  assert.equal(r2.code, 0, r2.stderr);
  assert.equal((await state(dirs, r1.threadId)).title, s1.title, "never regenerated");
});

test("uploads: the block reaches the model in the run that uploaded, not in the next; the viewed image reaches only the very next request", async () => {
  const dirs = sandboxDirs();
  const src = join(tempDir("upload"), "chart.png");
  writeFileSync(src, PNG);
  const r1 = await run(
    dirs,
    [
      { toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/chart.png" } }] },
      { toolCalls: [{ name: "ls", args: { description: "look around", path: "/mnt/user-data/uploads" } }] },
      { content: "A one-pixel chart." },
    ],
    "what does this chart show?",
    ["--upload", src],
  );
  assert.equal(r1.code, 0, r1.stderr);
  assert.equal(r1.requests.length, 3);
  const user = textOf(chat(r1.requests[0]!)[0]);
  assert.match(user, /<current_uploads>\nThe following files were uploaded in this message:\n\n- chart\.png \(0\.1 KB\)\n {2}Path: \/mnt\/user-data\/uploads\/chart\.png\n/);
  assert.match(user, /read_file/);
  // InputSanitization may frame the typed text; the block stays first, the question after it.
  const blockEnd = user.indexOf("</current_uploads>\n\n");
  assert.ok(blockEnd > 0 && blockEnd < user.indexOf("what does this chart show?"));

  assert.deepEqual(imageUrls(r1.requests[0]!), []);
  assert.deepEqual(imageUrls(r1.requests[1]!), [`data:image/png;base64,${PNG.toString("base64")}`], "the very next request carries the image");
  assert.deepEqual(imageUrls(r1.requests[2]!), [], "the third request of the run does not");

  const s1 = await state(dirs, r1.threadId);
  assert.deepEqual(s1.uploaded_files, [{ filename: "chart.png", size: PNG.length, path: "/mnt/user-data/uploads/chart.png", extension: ".png" }]);
  assert.equal(s1.title, "what does this chart show?", "the title is the typed text, not the uploads block");
  assert.ok(!JSON.stringify(s1.messages).includes(PNG.toString("base64")), "the image is not in the saved messages");

  const r2 = await run(dirs, [{ content: "Nothing new." }], "anything else?", ["--thread", r1.threadId]);
  assert.equal(r2.code, 0, r2.stderr);
  assert.deepEqual(imageUrls(r2.requests[0]!), [], "the next run does not resend it");
  const sent = chat(r2.requests[0]!);
  assert.match(textOf(sent.at(-1)), /anything else\?/);
  assert.doesNotMatch(textOf(sent.at(-1)), /current_uploads/, "no uploads block in a run without uploads");
  assert.equal(sent.filter((m) => textOf(m).includes("<current_uploads>")).length, 1, "only the first message, as it was saved");
  assert.deepEqual((await state(dirs, r1.threadId)).uploaded_files, []);
});

test("clarification ends the run on the question; the next run with the answer continues the thread", async () => {
  const dirs = sandboxDirs();
  const r1 = await run(
    dirs,
    [
      { toolCalls: [{ id: "call-env", name: "ask_clarification", args: { question: "Which environment?", clarification_type: "approach_choice", options: ["dev", "staging", "prod"] } }] },
      { content: "must not be requested" },
    ],
    "deploy the app",
  );
  assert.equal(r1.code, 0, r1.stderr);
  assert.equal(r1.end!.data.status, "success");
  assert.equal(r1.requests.length, 1, "the model is not called after the question");
  const s1 = await state(dirs, r1.threadId);
  const last = s1.messages.at(-1);
  assert.equal(last.type, "tool");
  assert.equal(last.name, "ask_clarification");
  assert.equal(last.content, "🔀 Which environment?\n\n  1. dev\n  2. staging\n  3. prod");
  assert.equal(last.additional_kwargs.human_input.request_id, "clarification:call-env");
  assert.deepEqual(last.additional_kwargs.human_input.options.map((o: any) => o.value), ["dev", "staging", "prod"]);

  const r2 = await run(dirs, [{ content: "Deploying to staging." }], "staging", ["--thread", r1.threadId]);
  assert.equal(r2.code, 0, r2.stderr);
  const sent = chat(r2.requests[0]!);
  assert.deepEqual(sent.map((m) => m.role), ["user", "assistant", "tool", "user"]);
  assert.equal(sent[2]!.tool_call_id, "call-env");
  assert.match(textOf(sent[3]), /staging/);
  const s2 = await state(dirs, r1.threadId);
  assert.equal(s2.messages.at(-1).content, "Deploying to staging.");
});

test("plan mode: write_todos fills the list; a final answer with open items is nudged twice, the reminders never saved", async () => {
  const dirs = sandboxDirs();
  const todos = [
    { content: "Read the code", status: "completed" },
    { content: "Write the fix", status: "in_progress" },
  ];
  const r = await run(
    dirs,
    [{ toolCalls: [{ name: "write_todos", args: { todos } }] }, { content: "Done." }, { content: "Done, really." }, { content: "Still done." }],
    "fix the bug",
    ["--plan-mode"],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.requests[0]!.body!.tools!.some((t) => t.function.name === "write_todos"));
  assert.equal(r.requests.length, 4, "two nudges after the first final answer, then the run ends");
  for (const req of r.requests.slice(2)) {
    const last = chat(req).at(-1)!;
    assert.equal(last.name, "todo_completion_reminder");
    assert.match(textOf(last), /- \[in_progress\] Write the fix/);
    assert.doesNotMatch(textOf(last), /Read the code/);
  }
  const s = await state(dirs, r.threadId);
  assert.deepEqual(s.todos, todos);
  assert.ok(!s.messages.some((m: any) => m.name === "todo_completion_reminder"));
  assert.equal(s.messages.at(-1).content, "Still done.");

  const plain = await run(dirs, [{ content: "hi" }], "hello");
  assert.ok(!plain.requests[0]!.body!.tools!.some((t) => t.function.name === "write_todos"), "no write_todos outside plan mode");
});
