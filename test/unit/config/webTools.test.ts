// Issue 35: DeerFlow's `tools:` entry `name: web_fetch` turns web_fetch on (whatever its `use:`),
// with `timeout`, `allow_private_addresses` and the port's `max_bytes`; without it there is none.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readHarnessConfig } from "../../../extension/harness/config/harnessConfig.js";
import { chainSettings } from "../../../extension/harness/config/sections.js";

test("without a tools: entry there is no web_fetch", () => {
  const { config } = readHarnessConfig({}, "test");
  assert.equal(chainSettings(config).webFetch, undefined);
  const withOthers = readHarnessConfig({ tools: [{ name: "ls", use: "deerflow.sandbox.tools:ls_tool" }] }, "test");
  assert.equal(chainSettings(withOthers.config).webFetch, undefined);
  assert.deepEqual(withOthers.unsupported, [], "the port's own tools need no entry and are not listed");
});

test("DeerFlow's Jina entry enables web_fetch with its timeout; other tools and keys are listed, not fatal", () => {
  const { config, unsupported } = readHarnessConfig(
    {
      tools: [
        { name: "web_search", group: "web", use: "deerflow.community.ddg_search.tools:web_search_tool" },
        { name: "web_fetch", group: "web", use: "deerflow.community.jina_ai.tools:web_fetch_tool", timeout: 10, proxy: "http://proxy:3128" },
      ],
    },
    "test",
  );
  assert.deepEqual(chainSettings(config).webFetch, { timeoutMs: 10_000, maxBytes: 2 * 1024 * 1024, allowPrivateAddresses: false });
  assert.deepEqual(unsupported, ["tools[web_search]", "tools[web_fetch].proxy"]);
});

test("allow_private_addresses and max_bytes are read; a wrong value is a usage error", () => {
  const { config } = readHarnessConfig({ tools: [{ name: "web_fetch", use: "x:y", timeout_s: 5, allow_private_addresses: true, max_bytes: 4096 }] }, "test");
  assert.deepEqual(chainSettings(config).webFetch, { timeoutMs: 5000, maxBytes: 4096, allowPrivateAddresses: true });
  assert.throws(() => readHarnessConfig({ tools: [{ name: "web_fetch", allow_private_addresses: "maybe" }] }, "test"), /web_fetch\.allow_private_addresses/);
});
