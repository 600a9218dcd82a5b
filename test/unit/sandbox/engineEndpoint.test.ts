// Which Docker engine the dev container sandbox talks to, read from the environment as the docker
// CLI reads it (sandbox/devcontainer/engineEndpoint.ts); and that a docker client we start is
// pointed at the same engine. The engine itself is reached for real in test/devcontainer/dockerHost.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HarnessError } from "../../../extension/harness/errors.js";
import { describeEndpoint, dockerClientEnv, engineEndpoint } from "../../../extension/harness/sandbox/devcontainer/engineEndpoint.js";
import { EngineApi } from "../../../extension/harness/sandbox/devcontainer/engineApi.js";

const emptyHome = () => mkdtempSync(join(tmpdir(), "deerflow-docker-home-"));
const refused = (pattern: RegExp) => (err: unknown) => {
  assert.ok(err instanceof HarnessError, String(err));
  assert.equal(err.code, "sandbox_engine_unavailable");
  assert.match(err.message, pattern);
  return true;
};

test("no DOCKER_HOST, no context: the local socket", () => {
  const e = engineEndpoint({ HOME: emptyHome() });
  assert.deepEqual(e, { kind: "unix", socketPath: "/var/run/docker.sock", url: "unix:///var/run/docker.sock" });
  assert.deepEqual(dockerClientEnv(e), { DOCKER_HOST: "unix:///var/run/docker.sock" });
});

test("DOCKER_HOST unix:// and tcp:// (the engine's conventional port when none is given)", () => {
  const home = emptyHome();
  assert.deepEqual(engineEndpoint({ HOME: home, DOCKER_HOST: "unix:///run/user/1000/docker.sock" }), { kind: "unix", socketPath: "/run/user/1000/docker.sock", url: "unix:///run/user/1000/docker.sock" });
  const tcp = engineEndpoint({ HOME: home, DOCKER_HOST: "tcp://build-box.internal:23750" });
  assert.deepEqual(tcp, { kind: "tcp", host: "build-box.internal", port: 23750, url: "tcp://build-box.internal:23750" });
  assert.deepEqual(dockerClientEnv(tcp), { DOCKER_HOST: "tcp://build-box.internal:23750" });
  assert.equal(new EngineApi(tcp).url, "tcp://build-box.internal:23750");
  assert.deepEqual(engineEndpoint({ HOME: home, DOCKER_HOST: "tcp://10.0.0.5" }), { kind: "tcp", host: "10.0.0.5", port: 2375, url: "tcp://10.0.0.5:2375" });
  const v6 = engineEndpoint({ HOME: home, DOCKER_HOST: "tcp://[::1]:2375" });
  assert.equal(v6.kind === "tcp" && v6.host, "::1");
  // An empty DOCKER_HOST is unset, as for the docker CLI.
  assert.equal(engineEndpoint({ HOME: home, DOCKER_HOST: "" }).url, "unix:///var/run/docker.sock");
});

test("TLS: DOCKER_TLS_VERIFY reads ca/cert/key from DOCKER_CERT_PATH, port 2376 by default; without ca.pem it says what to set", () => {
  const certs = mkdtempSync(join(tmpdir(), "deerflow-certs-"));
  for (const f of ["ca.pem", "cert.pem", "key.pem"]) writeFileSync(join(certs, f), `-- ${f} --`);
  const e = engineEndpoint({ HOME: emptyHome(), DOCKER_HOST: "tcp://remote", DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: certs });
  assert.equal(e.kind, "tcp");
  assert.equal(e.url, "tcp://remote:2376");
  assert.ok(e.kind === "tcp" && e.tls);
  assert.equal(e.tls.verify, true);
  assert.equal(e.tls.ca?.toString(), "-- ca.pem --");
  assert.equal(e.tls.cert?.toString(), "-- cert.pem --");
  assert.equal(e.tls.key?.toString(), "-- key.pem --");
  // DOCKER_TLS alone: TLS, the engine's certificate not checked (the docker CLI's --tls).
  const loose = engineEndpoint({ HOME: emptyHome(), DOCKER_HOST: "tcp://remote:2376", DOCKER_TLS: "1", DOCKER_CERT_PATH: certs });
  assert.equal(loose.kind === "tcp" && loose.tls?.verify, false);
  const none = mkdtempSync(join(tmpdir(), "deerflow-nocerts-"));
  assert.throws(() => engineEndpoint({ HOME: emptyHome(), DOCKER_HOST: "tcp://remote", DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: none }), refused(/DOCKER_TLS_VERIFY is set but .*ca\.pem does not exist: set DOCKER_CERT_PATH/));
});

test("a DOCKER_HOST the sandbox cannot use is refused with what to do instead", () => {
  assert.throws(() => engineEndpoint({ HOME: emptyHome(), DOCKER_HOST: "ssh://me@build-box" }), refused(/"ssh:\/\/me@build-box".*ssh -NL .*DOCKER_HOST=unix:\/\//));
  assert.throws(() => engineEndpoint({ HOME: emptyHome(), DOCKER_HOST: "npipe:////./pipe/docker_engine" }), refused(/unix:\/\/\/path\/to\/docker\.sock or tcp:\/\/HOST:PORT/));
});

/** A docker config dir with one context, laid out as `docker context create` writes it. */
function dockerConfigWithContext(name: string, host: string, opts: { current?: boolean; tls?: boolean; skipVerify?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "deerflow-docker-config-"));
  const id = createHash("sha256").update(name).digest("hex");
  mkdirSync(join(dir, "contexts", "meta", id), { recursive: true });
  writeFileSync(join(dir, "contexts", "meta", id, "meta.json"), JSON.stringify({ Name: name, Metadata: {}, Endpoints: { docker: { Host: host, SkipTLSVerify: opts.skipVerify ?? false } } }));
  if (opts.tls) {
    mkdirSync(join(dir, "contexts", "tls", id, "docker"), { recursive: true });
    for (const f of ["ca.pem", "cert.pem", "key.pem"]) writeFileSync(join(dir, "contexts", "tls", id, "docker", f), `ctx ${f}`);
  }
  if (opts.current) writeFileSync(join(dir, "config.json"), JSON.stringify({ currentContext: name }));
  return dir;
}

test("docker contexts: DOCKER_CONTEXT or the config's currentContext, with the context's TLS files; DOCKER_HOST wins over both", () => {
  const config = dockerConfigWithContext("remote-box", "tcp://remote-box:2376", { tls: true });
  const e = engineEndpoint({ DOCKER_CONFIG: config, DOCKER_CONTEXT: "remote-box" });
  assert.equal(e.url, "tcp://remote-box:2376");
  assert.equal(e.context, "remote-box");
  assert.ok(e.kind === "tcp" && e.tls?.verify === true && e.tls.ca?.toString() === "ctx ca.pem");
  // The docker client resolves the context itself, with its TLS files.
  assert.deepEqual(dockerClientEnv(e), { DOCKER_CONTEXT: "remote-box" });
  assert.equal(describeEndpoint(e), 'tcp://remote-box:2376 (docker context "remote-box")');

  const current = dockerConfigWithContext("lab", "unix:///srv/docker.sock", { current: true });
  assert.equal(engineEndpoint({ DOCKER_CONFIG: current }).url, "unix:///srv/docker.sock");
  assert.equal(engineEndpoint({ DOCKER_CONFIG: current, DOCKER_CONTEXT: "default" }).url, "unix:///var/run/docker.sock");
  assert.equal(engineEndpoint({ DOCKER_CONFIG: current, DOCKER_HOST: "tcp://other:2375", DOCKER_CONTEXT: "lab" }).url, "tcp://other:2375");
  assert.throws(() => engineEndpoint({ DOCKER_CONFIG: current, DOCKER_CONTEXT: "gone" }), refused(/Docker context "gone" is not readable .*docker context ls/));
});
