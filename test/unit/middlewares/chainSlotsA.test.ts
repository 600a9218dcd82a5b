// The chain slots of Uploads, Todo, Title, ViewImage and Clarification: DeerFlow's relative order,
// their conditions (plan mode, vision), and Clarification always last.
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildMiddlewareChain } from "../../../extension/harness/agent/middlewareChain.js";
import type { ChainContext } from "../../../extension/harness/agent/middlewareChain.js";
import { chatModel, threadFixture } from "./helpers.js";

function names(over: Partial<ChainContext>): string[] {
  const { dirs, blobs } = threadFixture();
  const ctx: ChainContext = { dirs, blobs, model: chatModel("http://127.0.0.1:9/v1"), supportsVision: false, planMode: false, ...over };
  return buildMiddlewareChain(ctx).map((m) => m.name);
}

test("ThreadData < Uploads < Todo < Title < ViewImage, Clarification last", () => {
  const all = names({ planMode: true, supportsVision: true });
  const at = (n: string) => {
    const i = all.indexOf(n);
    assert.ok(i >= 0, `${n} is in the chain: ${all.join(", ")}`);
    return i;
  };
  assert.ok(at("ThreadDataMiddleware") < at("UploadsMiddleware"));
  assert.ok(at("UploadsMiddleware") < at("TodoMiddleware"));
  assert.ok(at("TodoMiddleware") < at("TitleMiddleware"));
  assert.ok(at("TitleMiddleware") < at("ViewImageMiddleware"));
  assert.equal(all.at(-1), "ClarificationMiddleware");
});

test("Todo only in plan mode, ViewImage only for vision models; Uploads, Title and Clarification always", () => {
  const plain = names({});
  assert.ok(!plain.includes("TodoMiddleware"));
  assert.ok(!plain.includes("ViewImageMiddleware"));
  for (const n of ["UploadsMiddleware", "TitleMiddleware", "ClarificationMiddleware"]) assert.ok(plain.includes(n), n);
  assert.equal(plain.at(-1), "ClarificationMiddleware");
  assert.ok(names({ planMode: true }).includes("TodoMiddleware"));
  assert.ok(names({ supportsVision: true }).includes("ViewImageMiddleware"));
});
