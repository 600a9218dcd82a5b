/** Add Model's settings entry and input checks (issue 30 item 1): extension/host/modelEntry.ts. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseUrlProblem, isLoopbackUrl, newModelEntry } from "../../../extension/host/modelEntry.js";

test("an entry is named after the model id, with its own key name and no trailing slash", () => {
  assert.deepEqual(newModelEntry(" https://api.openai.com/v1/ ", " gpt-4.1 ", []), {
    name: "gpt-4.1",
    model: "gpt-4.1",
    base_url: "https://api.openai.com/v1",
    api_key_env: "DEERFLOW_GPT_4_1_API_KEY",
  });
});

test("a second model of the same id gets a name of its own, and so a key of its own", () => {
  const first = newModelEntry("http://127.0.0.1:11434/v1", "qwen2.5-coder:7b", []);
  const second = newModelEntry("http://10.0.0.2:11434/v1", "qwen2.5-coder:7b", [first]);
  const third = newModelEntry("http://10.0.0.3:11434/v1", "qwen2.5-coder:7b", [first, second]);
  assert.equal(second.name, "qwen2.5-coder:7b (2)");
  assert.equal(third.name, "qwen2.5-coder:7b (3)");
  assert.equal(new Set([first, second, third].map((m) => m.api_key_env)).size, 3, "three endpoints, three key names");
  for (const m of [first, second, third]) assert.match(m.api_key_env!, /^[A-Za-z_][A-Za-z0-9_]*$/, "a valid api_key_env");
});

test("a model id with no letters or digits still gives a valid key name", () => {
  assert.equal(newModelEntry("http://127.0.0.1:1/v1", "---", []).api_key_env, "DEERFLOW_MODEL_API_KEY");
});

test("the base URL box accepts http(s) URLs and says what is wrong with anything else", () => {
  assert.equal(baseUrlProblem("https://api.openai.com/v1"), undefined);
  assert.equal(baseUrlProblem("http://127.0.0.1:11434/v1"), undefined);
  assert.match(baseUrlProblem("")!, /base URL/);
  assert.match(baseUrlProblem("api.openai.com")!, /Not a URL/);
  assert.match(baseUrlProblem("ftp://example.com/v1")!, /http/);
  assert.match(baseUrlProblem("https://user:sk-123@example.com/v1")!, /key out of the URL/);
});

test("loopback URLs are this machine; others and non-URLs are not", () => {
  for (const u of ["http://127.0.0.1:8080/v1", "http://localhost/v1", "http://[::1]:9/v1"]) assert.equal(isLoopbackUrl(u), true, u);
  for (const u of ["https://api.openai.com/v1", "http://10.0.0.1/v1", "not a url", undefined]) assert.equal(isLoopbackUrl(u), false, String(u));
});
