// The extraction's answer is model output: parsed leniently, applied within the document's rules
// (memory/extract.ts), and the result always validates (memory/schema.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyUpdate, MAX_FACTS, parseUpdate } from "../../../extension/harness/memory/extract.js";
import { MemoryDocZ, emptyMemory } from "../../../extension/harness/memory/schema.js";
import { conversationFor, MAX_MESSAGE_CHARS } from "../../../extension/harness/memory/conversation.js";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";

const now = new Date("2026-02-03T04:05:06.000Z");

test("a fenced answer with a preamble is still an update; no JSON is an error", () => {
  const u = parseUpdate('Sure:\n```json\n{"newFacts": [{"content": "Uses Vim.", "category": "preference", "confidence": 0.9}]}\n```');
  assert.equal(u.newFacts?.[0]?.content, "Uses Vim.");
  assert.throws(() => parseUpdate("I could not find anything."), /no JSON object/);
  assert.throws(() => parseUpdate('{"newFacts": "lots"}'), /not a memory update/);
});

test("applyUpdate: sections with shouldUpdate, facts thresholded, deduplicated, categories kept known, removals by id", () => {
  const start = applyUpdate(emptyMemory(), parseUpdate('{"newFacts":[{"content":"Old fact.","category":"context","confidence":0.9}]}'), "t0", now);
  const oldId = start.facts[0]!.id;
  const next = applyUpdate(
    start,
    parseUpdate(
      JSON.stringify({
        user: { workContext: { summary: " Engineer. ", shouldUpdate: true }, topOfMind: { summary: "ignored", shouldUpdate: false } },
        history: { recentMonths: { summary: "Shipped v2.", shouldUpdate: true } },
        newFacts: [
          { content: "Prefers Rust.", category: "preference", confidence: 0.95 },
          { content: "prefers   rust.", category: "preference", confidence: 0.9 },
          { content: "Maybe likes Go.", category: "preference", confidence: 0.5 },
          { content: "Has a cat.", category: "pets", confidence: 1.7 },
        ],
        factsToRemove: [{ id: oldId }],
      }),
    ),
    "t1",
    now,
  );
  assert.equal(next.user.workContext.summary, "Engineer.");
  assert.equal(next.user.workContext.updatedAt, now.toISOString());
  assert.equal(next.user.topOfMind.summary, "");
  assert.equal(next.history.recentMonths.summary, "Shipped v2.");
  assert.deepEqual(next.facts.map((f) => [f.content, f.category, f.confidence, f.source]), [
    ["Prefers Rust.", "preference", 0.95, "t1"],
    ["Has a cat.", "context", 1, "t1"],
  ]);
  assert.ok(MemoryDocZ.safeParse(next).success);
  assert.equal(start.facts.length, 1, "the input document is not changed");
});

test("at most MAX_FACTS facts: the least certain go", () => {
  let d = emptyMemory();
  const many = Array.from({ length: MAX_FACTS + 5 }, (_, i) => ({ content: `Fact ${i}.`, category: "context", confidence: i < 5 ? 0.7 : 0.9 }));
  d = applyUpdate(d, parseUpdate(JSON.stringify({ newFacts: many })), "t", now);
  assert.equal(d.facts.length, MAX_FACTS);
  assert.ok(d.facts.every((f) => f.confidence === 0.9));
});

test("the conversation for extraction: user messages and final answers only, scrubbed", () => {
  const msgs = [
    new HumanMessage({ content: "Hi, my key is sk-abcdefghijklmnop1234" }),
    new HumanMessage({ content: "<system-reminder>date</system-reminder>", name: "dynamic_context", additional_kwargs: { hide_from_ui: true } }),
    new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "ls", args: {} }] }),
    new ToolMessage({ content: "secret listing", tool_call_id: "c1" }),
    new AIMessage({ content: "Done." }),
  ];
  assert.deepEqual(conversationFor(msgs), [
    { role: "user", content: "Hi, my key is [redacted]" },
    { role: "assistant", content: "Done." },
  ]);
});

test("conversationFor scrubs before it truncates: a key crossing the cut leaves no part of it", () => {
  // The key starts 5 characters before the cut: truncated first, "sk-ab" would be too short to look like a key.
  const text = `${"x".repeat(MAX_MESSAGE_CHARS - 6)} sk-abcdefghijklmnop1234 and more`;
  const [m] = conversationFor([new HumanMessage(text)]);
  assert.ok(m, "the message is kept");
  assert.ok(!m.content.includes("sk-"), m.content.slice(-40));
  assert.ok(m.content.endsWith("…"), "still truncated");
  assert.equal(m.content.length, MAX_MESSAGE_CHARS + 1);
});
