/**
 * Which Docker engine the dev container sandbox talks to, read from the environment the way the
 * docker CLI reads it, so that our Engine API calls and the `docker` that @devcontainers/cli
 * runs reach the same engine: `DOCKER_HOST` (`unix://…` or `tcp://host[:port]`), with TLS when
 * `DOCKER_TLS_VERIFY` (verify the engine against `ca.pem`) or `DOCKER_TLS` is set and the client
 * certificate from `DOCKER_CERT_PATH` (default ~/.docker); without DOCKER_HOST, the docker
 * context named by `DOCKER_CONTEXT` or by the config's `currentContext` (DOCKER_CONFIG, default
 * ~/.docker); else the local socket. A `deerflow serve` on one machine can so run its sandboxes
 * on another machine's engine (issue 26): the workspace folder must then exist at the same path
 * on that machine, since the container bind-mounts it there.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { HarnessError } from "../../errors.js";

export const DEFAULT_SOCKET_PATH = "/var/run/docker.sock";

export interface EngineTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** Check the engine's certificate (DOCKER_TLS_VERIFY, or a context without SkipTLSVerify). */
  readonly verify: boolean;
}

export type EngineEndpoint =
  | { readonly kind: "unix"; readonly socketPath: string; readonly url: string; readonly context?: string }
  | { readonly kind: "tcp"; readonly host: string; readonly port: number; readonly tls?: EngineTls; readonly url: string; readonly context?: string };

/** A unix socket path as an endpoint (tests, and the provider's `socketPath` option). */
export function unixEndpoint(socketPath: string): EngineEndpoint {
  return { kind: "unix", socketPath, url: `unix://${socketPath}` };
}

const set = (v: string | undefined): v is string => v !== undefined && v !== "";

/** The engine the environment names; throws `sandbox_engine_unavailable` for one we cannot reach. */
export function engineEndpoint(env: NodeJS.ProcessEnv = process.env): EngineEndpoint {
  const dockerDir = set(env.DOCKER_CONFIG) ? env.DOCKER_CONFIG : join(env.HOME ?? homedir(), ".docker");
  if (set(env.DOCKER_HOST)) {
    const certDir = set(env.DOCKER_CERT_PATH) ? env.DOCKER_CERT_PATH : dockerDir;
    const tls = set(env.DOCKER_TLS_VERIFY) || set(env.DOCKER_TLS) ? readTls(certDir, set(env.DOCKER_TLS_VERIFY)) : undefined;
    return parseHost(env.DOCKER_HOST, tls);
  }
  const context = set(env.DOCKER_CONTEXT) ? env.DOCKER_CONTEXT : currentContext(dockerDir);
  if (context && context !== "default") return contextEndpoint(dockerDir, context);
  return unixEndpoint(DEFAULT_SOCKET_PATH);
}

function parseHost(host: string, tls: EngineTls | undefined, context?: string): EngineEndpoint {
  const ctx = context ? { context } : {};
  if (host.startsWith("unix://")) return { ...unixEndpoint(host.slice("unix://".length)), ...ctx };
  let url: URL | undefined;
  try {
    url = new URL(host);
  } catch {
    url = undefined;
  }
  if (url && url.protocol === "tcp:" && url.hostname !== "") {
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    // The engine's conventional ports, as the docker CLI assumes them.
    const port = url.port !== "" ? Number(url.port) : tls ? 2376 : 2375;
    return { kind: "tcp", host: hostname, port, ...(tls ? { tls } : {}), url: `tcp://${url.port !== "" ? url.host : `${url.host}:${port}`}`, ...ctx };
  }
  const hint = host.startsWith("ssh://")
    ? " An ssh:// engine is reached by forwarding its socket (ssh -NL /tmp/docker.sock:/var/run/docker.sock HOST) and DOCKER_HOST=unix:///tmp/docker.sock."
    : " Use unix:///path/to/docker.sock or tcp://HOST:PORT.";
  throw new HarnessError("sandbox_engine_unavailable", `DOCKER_HOST${context ? ` of docker context "${context}"` : ""} is ${JSON.stringify(host)}, which the dev container sandbox cannot use.${hint}`);
}

function readTls(dir: string, verify: boolean): EngineTls {
  const file = (name: string) => {
    const path = join(dir, name);
    return existsSync(path) ? readFileSync(path) : undefined;
  };
  const ca = file("ca.pem");
  const cert = file("cert.pem");
  const key = file("key.pem");
  if (verify && !ca) {
    throw new HarnessError("sandbox_engine_unavailable", `DOCKER_TLS_VERIFY is set but ${join(dir, "ca.pem")} does not exist: set DOCKER_CERT_PATH to the folder with ca.pem, cert.pem and key.pem.`);
  }
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}), verify };
}

function currentContext(dockerDir: string): string | undefined {
  try {
    const config = JSON.parse(readFileSync(join(dockerDir, "config.json"), "utf8")) as { currentContext?: unknown };
    return typeof config.currentContext === "string" && config.currentContext !== "" ? config.currentContext : undefined;
  } catch {
    return undefined; // no config, or not JSON: the docker CLI then uses the default context too
  }
}

/** A docker context's engine: contexts/meta/<sha256(name)>/meta.json and its TLS files. */
function contextEndpoint(dockerDir: string, name: string): EngineEndpoint {
  const id = createHash("sha256").update(name).digest("hex");
  const metaPath = join(dockerDir, "contexts", "meta", id, "meta.json");
  let docker: { Host?: unknown; SkipTLSVerify?: unknown } | undefined;
  try {
    docker = (JSON.parse(readFileSync(metaPath, "utf8")) as { Endpoints?: { docker?: { Host?: unknown; SkipTLSVerify?: unknown } } }).Endpoints?.docker;
  } catch (err) {
    throw new HarnessError("sandbox_engine_unavailable", `Docker context "${name}" is not readable (${metaPath}: ${err instanceof Error ? err.message : String(err)}). Run \`docker context ls\`, or set DOCKER_HOST.`);
  }
  if (typeof docker?.Host !== "string" || docker.Host === "") {
    throw new HarnessError("sandbox_engine_unavailable", `Docker context "${name}" names no engine (${metaPath}). Set DOCKER_HOST instead.`);
  }
  const tlsDir = join(dockerDir, "contexts", "tls", id, "docker");
  const tls = existsSync(tlsDir) ? readTls(tlsDir, docker.SkipTLSVerify !== true) : undefined;
  return parseHost(docker.Host, tls, name);
}

/**
 * The environment for a docker client (the CLI @devcontainers/cli runs) that must reach this
 * endpoint. DOCKER_HOST names it (the docker CLI prefers it to any context); a context is left to
 * the CLI to resolve, with its TLS files. DOCKER_TLS_VERIFY / DOCKER_CERT_PATH pass through as
 * they are, so the CLI speaks TLS exactly when we do.
 */
export function dockerClientEnv(endpoint: EngineEndpoint): Record<string, string> {
  return endpoint.context ? { DOCKER_CONTEXT: endpoint.context } : { DOCKER_HOST: endpoint.url };
}

/** How an error message names the engine: its address, and the context it came from. */
export function describeEndpoint(endpoint: EngineEndpoint): string {
  return endpoint.context ? `${endpoint.url} (docker context "${endpoint.context}")` : endpoint.url;
}
