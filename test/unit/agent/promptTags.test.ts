// The sanitiser's denylist is derived from the tags the system prompt emits: render the prompt with
// every option on and check each tag in it is on the denylist and is escaped in user text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildSystemPrompt } from "../../../extension/harness/agent/prompt.js";
import { BLOCKED_TAG_NAMES, neutralizeUntrustedTags } from "../../../extension/harness/middlewares/inputSanitization.js";

test("every tag in the rendered system prompt is on the sanitiser's denylist", () => {
  const prompt = buildSystemPrompt({ hasBash: true, bashEnabled: true, hasVision: true, planMode: true });
  const tags = new Set([...prompt.matchAll(/<\/?\s*([A-Za-z][\w-]*)[^>]*>/g)].map((m) => m[1]!.toLowerCase()));
  assert.ok(tags.has("deliverables") && tags.has("tools") && tags.has("clarification"), [...tags].join(","));
  for (const tag of tags) {
    assert.ok(BLOCKED_TAG_NAMES.includes(tag), `<${tag}> is emitted by the prompt but not on the denylist`);
    assert.equal(neutralizeUntrustedTags(`<${tag}>x</${tag}>`), `&lt;${tag}&gt;x&lt;/${tag}&gt;`);
  }
});
