// Issue 35: web_fetch calls are the approval class `web` (default ask, `--approval web=…`); a URL
// the network guard refuses by itself never asks; "Always allow" covers one host in a thread.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defaultPolicy, parsePolicySpec } from "../../../extension/harness/approvals/policy.js";
import { classifyToolCall, toolClassOf, type ClassifyContext } from "../../../extension/harness/approvals/classify.js";
import { alwaysAllowFor, readRules, ruleCovers } from "../../../extension/harness/approvals/alwaysAllow.js";
import type { ThreadDirs } from "../../../extension/harness/threads/threadDirs.js";

// web_fetch's class never depends on the thread's folders.
const ctx: ClassifyContext = { dirs: {} as ThreadDirs, sandboxKind: "local", allowHostCommands: false };
const fetchCall = (url: string) => ({ name: "web_fetch", args: { url } });

test("web is its own class: ask by default on the host and in a dev container, settable with --approval web=", () => {
  assert.equal(defaultPolicy("local").web, "ask");
  assert.equal(defaultPolicy("devcontainer").web, "ask");
  assert.deepEqual(parsePolicySpec("web=auto"), { web: "auto" });
  assert.deepEqual(parsePolicySpec("web=deny,shell=ask"), { web: "deny", shell: "ask" });
  assert.equal(toolClassOf("web_fetch"), "web");
});

test("a web_fetch call names its address; one the guard refuses is inert (never asks)", () => {
  const c = classifyToolCall(fetchCall("https://docs.python.org/3/"), ctx);
  assert.equal(c.class, "web");
  assert.match(c.reason, /fetches https:\/\/docs\.python\.org\/3\/ from docs\.python\.org/);
  assert.equal(c.inert, undefined);
  for (const url of ["http://127.0.0.1/", "http://localhost:8080/", "http://2130706433/", "file:///etc/passwd", "not a url"]) {
    const r = classifyToolCall(fetchCall(url), ctx);
    assert.equal(r.class, "web", url);
    assert.equal(r.inert, true, url);
  }
  // With allow_private_addresses the operator allowed them: they ask like any other fetch.
  assert.equal(classifyToolCall(fetchCall("http://127.0.0.1/"), { ...ctx, webAllowPrivateAddresses: true }).inert, undefined);
});

test("Always allow covers the card's host only, and survives the thread's state", () => {
  const offer = alwaysAllowFor(fetchCall("https://docs.python.org/3/library/"), "web", "local");
  assert.ok(offer);
  assert.deepEqual(offer.rule, { tool: "web_fetch", class: "web", sandbox: "local", host: "docs.python.org" });
  assert.match(offer.label, /docs\.python\.org/);
  assert.ok(ruleCovers(offer.rule, fetchCall("https://DOCS.python.org/3/whatsnew/"), "web", "local"));
  assert.equal(ruleCovers(offer.rule, fetchCall("https://evil.example/?q=docs.python.org"), "web", "local"), false);
  assert.equal(ruleCovers(offer.rule, fetchCall("https://docs.python.org.evil.example/"), "web", "local"), false);
  assert.equal(ruleCovers(offer.rule, fetchCall("https://docs.python.org/"), "web", "devcontainer"), false);
  assert.equal(ruleCovers({ tool: "web_fetch", class: "web", sandbox: "local" }, fetchCall("https://docs.python.org/"), "web", "local"), false, "a rule without a host covers nothing");
  assert.deepEqual(readRules([offer.rule]), [offer.rule]);
});
