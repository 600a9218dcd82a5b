/**
 * Which browser pages and which host names `deerflow serve` answers (issue 31 item 6), for every
 * HTTP route (app.ts, before the token is looked at) and the `/rpc` upgrade (rpc.ts). Defence in
 * depth: every route but the login page's also wants the token, which a page cannot learn.
 *
 * - `Origin`, as DeerFlow's gateway checks it on its auth routes (app/gateway/csrf_middleware.py
 *   `is_allowed_auth_origin`), here on every request: absent is fine (curl, the SDK, VS Code's
 *   socket: no browser); present, it must be the request's own origin or an `--allow-origin`
 *   entry, else 403. The request's origin is the one the browser aimed at: a proxy's
 *   `Forwarded: proto=…;host=…` or `X-Forwarded-Proto` / `X-Forwarded-Host` (+ `X-Forwarded-Port`),
 *   which Next's rewrites to serve set, else `Host` over http (serve has no TLS of its own).
 * - `Host` (and a proxy's forwarded host): a name this server answers to, so a DNS-rebinding page
 *   (`evil.example` resolving to 127.0.0.1, same-origin with itself, so its Origin check passes)
 *   gets nothing. Bound to loopback: `localhost`, `127.0.0.1`, `[::1]` (and the bound address);
 *   bound to one address: that address; bound to every interface (`0.0.0.0`, `::`): those names,
 *   the machine's interface addresses and its host name. Always the hosts of `--allow-origin`.
 *   Ports are not compared: a rebinding page can make the browser send only its own domain as
 *   the host, never one of these names, and an `ssh -L 9000:127.0.0.1:2024` tunnel or Next on
 *   :3000 legitimately names another port; the Origin check keeps pages on other ports apart.
 */
import { hostname as machineName, networkInterfaces } from "node:os";
import type { MiddlewareHandler } from "hono";
import { HarnessError } from "../errors.js";

export interface OriginPolicy {
  /** Host names a request's Host and a proxy's forwarded host may name (lower case, IPv6 in brackets). */
  readonly hosts: ReadonlySet<string>;
  /** Origins (`scheme://host[:port]`, the default port left out) a page may call from besides the request's own. */
  readonly origins: ReadonlySet<string>;
}

export type RequestHeader = (name: string) => string | undefined;

export interface OriginRefusal {
  code: "origin_denied" | "host_denied";
  message: string;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/** `scheme://host[:port]` with nothing else (DeerFlow's _normalize_origin), normalized; undefined when it is not one. */
export function normalizeOrigin(value: string): string | undefined {
  const m = /^(https?):\/\/([^/?#@\s\\]+)$/i.exec(value.trim());
  if (!m) return undefined;
  try {
    const u = new URL(`${m[1]!.toLowerCase()}://${m[2]!}`);
    return u.hostname ? `${u.protocol}//${u.host}` : undefined;
  } catch {
    return undefined;
  }
}

/** A Host value's name (lower case, IPv6 in brackets), without its port; undefined when it is not a host. */
export function hostName(value: string): string | undefined {
  if (!/^[^/?#@\s\\]+$/.test(value.trim())) return undefined;
  try {
    return new URL(`http://${value.trim()}`).hostname || undefined;
  } catch {
    return undefined;
  }
}

/** `--allow-origin VALUE`: an origin as a browser sends it, or a usage error naming the flag. */
export function parseAllowOrigin(value: string): string {
  const origin = normalizeOrigin(value);
  if (!origin) throw new HarnessError("usage", `--allow-origin ${value} is not an origin: write scheme://host[:port] (e.g. https://deerflow.example.com), nothing after it`);
  return origin;
}

const bracketed = (address: string) => (address.includes(":") ? `[${address.replace(/^\[|\]$/g, "").replace(/%.*$/, "")}]` : address);

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The policy for a server bound to `bind` (serve's `--host`) with these `--allow-origin` entries (already parsed). */
export function originPolicy(bind: string, allowOrigins: readonly string[] = []): OriginPolicy {
  const hosts = new Set<string>();
  const b = bind.trim().toLowerCase();
  const wildcard = b === "" || b === "0.0.0.0" || b === "::" || b === "[::]";
  if (wildcard || isLoopback(b)) for (const n of LOOPBACK_NAMES) hosts.add(n);
  if (wildcard) {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) hosts.add(bracketed(a.address).toLowerCase());
    const own = hostName(machineName());
    if (own) hosts.add(own);
  } else {
    const own = hostName(bracketed(b));
    if (own) hosts.add(own);
  }
  const origins = new Set(allowOrigins);
  for (const o of allowOrigins) hosts.add(new URL(o).hostname);
  return { hosts, origins };
}

const first = (value: string | undefined) => value?.split(",", 1)[0]!.trim() || undefined;

/** A parameter of the first `Forwarded` entry (RFC 7239), as DeerFlow reads it. */
function forwardedParam(header: RequestHeader, name: string): string | undefined {
  const entry = first(header("forwarded"));
  for (const part of entry?.split(";") ?? []) {
    const [key, ...rest] = part.trim().split("=");
    if (key?.toLowerCase() === name && rest.length > 0) return rest.join("=").trim().replace(/^"|"$/g, "") || undefined;
  }
  return undefined;
}

/** The host a proxy says the browser aimed at, if a proxy says so. */
function forwardedHost(header: RequestHeader): string | undefined {
  return forwardedParam(header, "host") ?? first(header("x-forwarded-host"));
}

/** The origin this request was made to: a proxy's forwarded proto and host, else Host over http. */
export function requestOrigin(header: RequestHeader): string | undefined {
  const scheme = (forwardedParam(header, "proto") ?? first(header("x-forwarded-proto")) ?? "http").toLowerCase();
  let host = forwardedHost(header) ?? header("host")?.trim();
  if (!host) return undefined;
  const port = first(header("x-forwarded-port"));
  if (port && !host.split("]").at(-1)!.includes(":")) host = `${host}:${port}`;
  return normalizeOrigin(`${scheme}://${host}`);
}

/** Undefined when the request may go on; else why not (the caller answers 403). */
export function checkOrigin(header: RequestHeader, policy: OriginPolicy): OriginRefusal | undefined {
  const allow = "start serve with --allow-origin";
  const host = header("host")?.trim() ?? "";
  const name = hostName(host);
  if (!name || !policy.hosts.has(name)) {
    return { code: "host_denied", message: `This server does not answer to the host name "${host}" (a page on another domain pointing at it?). To serve it under that name, ${allow} http(s)://${host || "NAME"}.` };
  }
  const forwarded = forwardedHost(header);
  if (forwarded !== undefined) {
    const fname = hostName(forwarded);
    // A proxy on this machine (Next on :3000) forwards a loopback name with its own port.
    if (!fname || (!policy.hosts.has(fname) && !isLoopback(fname))) {
      return { code: "host_denied", message: `The proxy in front of this server forwards the host name "${forwarded}", which this server does not answer to. To serve it under that name, ${allow} http(s)://${forwarded}.` };
    }
  }
  const origin = header("origin");
  if (origin === undefined) return undefined;
  const normalized = normalizeOrigin(origin);
  if (normalized && (normalized === requestOrigin(header) || policy.origins.has(normalized))) return undefined;
  return { code: "origin_denied", message: `A page at ${origin} may not call this server (cross-site request). To allow that page, ${allow} ${normalized ?? "ORIGIN"}.` };
}

/**
 * The HTTP routes' gate, before the token's: a refusal is a 403 in the route's error shape
 * (DeerFlow's `{detail}` under /api, its own text on the sign-in routes, `{error, message}` at
 * the root).
 */
export function originGuard(policy: OriginPolicy): MiddlewareHandler {
  return async (c, next) => {
    const refused = checkOrigin((name) => c.req.header(name), policy);
    if (!refused) return next();
    const path = c.req.path;
    if (refused.code === "origin_denied" && path.startsWith("/api/v1/auth/")) return c.json({ detail: "Cross-site auth request denied." }, 403);
    if (path === "/api" || path.startsWith("/api/")) return c.json({ detail: { code: refused.code, message: refused.message } }, 403);
    return c.json({ error: refused.code, message: refused.message }, 403);
  };
}
