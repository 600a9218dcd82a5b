// serve's Origin and Host rules (serve/origin.ts) on their own: what an origin is, which names a
// bound address answers to, what a proxy may forward. The HTTP and /rpc ends are in
// test/integration/serveOrigin.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { networkInterfaces } from "node:os";
import { checkOrigin, hostName, normalizeOrigin, originPolicy, parseAllowOrigin, requestOrigin } from "../../../extension/harness/serve/origin.js";
import { StreamSlots } from "../../../extension/harness/serve/streamSlots.js";

const headers = (h: Record<string, string>) => (name: string) => h[name.toLowerCase()];

test("an origin is scheme://host[:port] and nothing else, normalized as a browser sends it", () => {
  assert.equal(normalizeOrigin("HTTPS://UI.Example.com:443"), "https://ui.example.com");
  assert.equal(normalizeOrigin("http://[::1]:2024"), "http://[::1]:2024");
  for (const bad of ["null", "https://ui.example.com/", "https://u:p@ui.example.com", "ftp://x", "https://x?y", "ui.example.com"]) assert.equal(normalizeOrigin(bad), undefined, bad);
  assert.throws(() => parseAllowOrigin("https://ui.example.com/app"), /--allow-origin https:\/\/ui\.example\.com\/app is not an origin/);
  assert.equal(hostName("LocalHost:2024"), "localhost");
  assert.equal(hostName("[::1]:9"), "[::1]");
  assert.equal(hostName("a b"), undefined);
});

test("the names a bound address answers to: loopback names on loopback, the address itself, every interface and the host name on 0.0.0.0, and --allow-origin hosts", () => {
  assert.deepEqual([...originPolicy("127.0.0.1").hosts].sort(), ["127.0.0.1", "[::1]", "localhost"]);
  assert.deepEqual([...originPolicy("10.1.2.3").hosts], ["10.1.2.3"]);
  const all = originPolicy("0.0.0.0", [parseAllowOrigin("https://deerflow.example.com")]);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === "IPv4") assert.ok(all.hosts.has(a.address), a.address);
  assert.ok(all.hosts.has("localhost") && all.hosts.has("deerflow.example.com"));
  assert.ok(all.origins.has("https://deerflow.example.com"));
});

test("checkOrigin: Host, then a forwarded host, then Origin against the request's own origin or the allowed ones", () => {
  const p = originPolicy("127.0.0.1", [parseAllowOrigin("https://ui.example.com")]);
  assert.equal(checkOrigin(headers({ host: "127.0.0.1:2024" }), p), undefined);
  assert.equal(checkOrigin(headers({ host: "evil.example:2024", origin: "http://evil.example:2024" }), p)?.code, "host_denied");
  assert.equal(checkOrigin(headers({}), p)?.code, "host_denied", "no Host at all");
  assert.equal(checkOrigin(headers({ host: "127.0.0.1:2024", "x-forwarded-host": "localhost:3000", origin: "http://localhost:3000" }), p), undefined);
  assert.equal(checkOrigin(headers({ host: "127.0.0.1:2024", "x-forwarded-host": "evil.example", origin: "http://evil.example" }), p)?.code, "host_denied");
  assert.equal(checkOrigin(headers({ host: "127.0.0.1:2024", origin: "http://localhost:2024" }), p)?.code, "origin_denied", "localhost and 127.0.0.1 are two origins");
  assert.equal(checkOrigin(headers({ host: "127.0.0.1:2024", origin: "https://ui.example.com" }), p), undefined);
  assert.equal(requestOrigin(headers({ host: "127.0.0.1:2024", "x-forwarded-proto": "https, http", "x-forwarded-host": "ui.example.com, inner" })), "https://ui.example.com");
  assert.equal(requestOrigin(headers({ host: "h", forwarded: 'proto=https;host="a.example:8443", proto=http' })), "https://a.example:8443");
});

test("stream slots: a slot past the cap is refused with too_many_streams; freeing is once only", () => {
  const slots = new StreamSlots(2);
  const a = slots.acquire();
  slots.acquire();
  assert.throws(() => slots.acquire(), (err: { code?: string }) => err.code === "too_many_streams");
  a();
  a();
  assert.equal(slots.count, 1, "a second free of the same slot frees nothing");
  slots.acquire();
  assert.equal(slots.count, 2);
});
