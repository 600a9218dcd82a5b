/**
 * The network guard of `web_fetch` (issue 35): one GET over http(s) that can only reach the
 * addresses trust/netAddress.ts allows, with a time limit and a size cap.
 *
 * How "checked before any byte is sent" holds:
 * - a literal IP host (after the URL parser normalised `2130706433`, `0177.0.0.1`, `[::ffff:…]`)
 *   is judged before a socket exists;
 * - a host name is resolved by our own `lookup`, every address it has is judged (one private
 *   answer refuses the host, as DeerFlow's `validate_public_http_url` does), and the socket
 *   connects to the address that was judged: Node's connection uses what `lookup` answers, so a
 *   DNS answer that changes afterwards (rebinding) is never consulted;
 * - every redirect is a new request through the same checks (scheme, name, address), followed by
 *   hand, at most MAX_REDIRECTS times.
 * No proxy from the environment is used: a proxy would do its own lookup of the name.
 */
import http from "node:http";
import https from "node:https";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Readable } from "node:stream";
import { bareHost, blockedAddressReason, blockedHostNameReason } from "../trust/netAddress.js";

export const MAX_REDIRECTS = 5;

export type WebFetchErrorCode =
  | "web_url_invalid"
  | "web_address_refused"
  | "web_host_unresolved"
  | "web_redirect_limit"
  | "web_timeout"
  | "web_http_status"
  | "web_connection_failed";

/** A refusal or failure of one fetch; `message` is what the model is told (what to do next included). */
export class WebFetchError extends Error {
  constructor(
    readonly code: WebFetchErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "WebFetchError";
  }
}

export interface GuardedGetOptions {
  timeoutMs: number;
  /** Bytes of body kept (after decompression); the rest is not read. */
  maxBytes: number;
  /** DeerFlow's `allow_private_addresses`: skip the address rules (http(s) only still holds). */
  allowPrivateAddresses: boolean;
  signal?: AbortSignal;
  /** The name resolution used (DNS through the OS by default); tests give names their own answers. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
}

export interface FetchedBody {
  /** The URL the body came from, after redirects. */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The body was longer than `maxBytes`. */
  truncated: boolean;
}

const PRIVATE_HINT = "web_fetch reaches public addresses only (the operator can allow private ones with allow_private_addresses in the web_fetch tools: entry).";

/** The URL, parsed and judged by what can be judged without a lookup. */
export function checkUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebFetchError("web_url_invalid", `Error: Not a valid URL: ${raw}. Give the full address with its scheme, e.g. https://example.com/page.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new WebFetchError("web_url_invalid", "Error: Only http:// and https:// URLs are supported");
  if (!url.hostname) throw new WebFetchError("web_url_invalid", "Error: URL host could not be parsed");
  if (url.username || url.password) throw new WebFetchError("web_url_invalid", "Error: URLs with a user name or password are not fetched.");
  if (!allowPrivate) {
    const why = blockedHostNameReason(url.hostname);
    if (why) throw new WebFetchError("web_address_refused", `Error: Refusing to fetch ${url.hostname}: a ${why} address. ${PRIVATE_HINT}`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http(s).request that judges every address before the socket may use one. */
const osResolve = (hostname: string) =>
  new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, a) => (err ? reject(err) : resolve(a))));

function guardedLookup(allowPrivate: boolean, refused: { error?: WebFetchError }, resolve: (hostname: string) => Promise<LookupAddress[]>) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback) => {
    const answered = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (err || addresses.length === 0) {
        refused.error = new WebFetchError("web_host_unresolved", `Error: URL host could not be resolved: ${hostname}. Check the address.`);
        callback(err ?? Object.assign(new Error("no address"), { code: "ENOTFOUND" }), []);
        return;
      }
      if (!allowPrivate) {
        const bad = addresses.map((a) => ({ a, why: blockedAddressReason(a.address) })).find((x) => x.why);
        if (bad) {
          refused.error = new WebFetchError("web_address_refused", `Error: Refusing to fetch ${hostname}: it resolves to a ${bad.why} address. ${PRIVATE_HINT}`);
          callback(Object.assign(new Error(refused.error.message), { code: "EDEERFLOWREFUSED" }), []);
          return;
        }
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    resolve(hostname).then((a) => answered(null, a), (err: NodeJS.ErrnoException) => answered(err, []));
  };
}

function decoded(res: http.IncomingMessage): Readable {
  switch ((res.headers["content-encoding"] ?? "").toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return res.pipe(createGunzip());
    case "deflate":
      return res.pipe(createInflate());
    case "br":
      return res.pipe(createBrotliDecompress());
    default:
      return res;
  }
}

interface Hop {
  status: number;
  location?: string;
  contentType: string;
  body: Buffer;
  truncated: boolean;
}

function oneRequest(url: URL, o: GuardedGetOptions, signal: AbortSignal): Promise<Hop> {
  const refused: { error?: WebFetchError } = {};
  const host = bareHost(url.hostname);
  return new Promise<Hop>((resolve, reject) => {
    const mod = url.protocol === "https:" ? https : http;
    const req = mod.request(
      url,
      {
        method: "GET",
        // A literal IP is connected to as it is (judged in checkUrl); a name goes through the guard.
        ...(isIP(host) ? {} : { lookup: guardedLookup(o.allowPrivateAddresses, refused, o.resolve ?? osResolve) }),
        headers: { "user-agent": "DeerFlow-VSCode web_fetch", accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5", "accept-encoding": "gzip, deflate, br" },
        signal,
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const contentType = String(res.headers["content-type"] ?? "");
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          resolve({ status, location: res.headers.location, contentType, body: Buffer.alloc(0), truncated: false });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const stream = decoded(res);
        stream.on("data", (chunk: Buffer) => {
          if (truncated) return;
          const room = o.maxBytes - size;
          if (chunk.length >= room) {
            chunks.push(chunk.subarray(0, room));
            size += room;
            truncated = true;
            // Nothing more is read: the rest of a huge page never enters memory.
            resolve({ status, contentType, body: Buffer.concat(chunks), truncated });
            req.destroy();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        stream.on("end", () => resolve({ status, contentType, body: Buffer.concat(chunks), truncated }));
        stream.on("error", (err) => (truncated ? undefined : reject(err)));
      },
    );
    req.on("error", (err) => reject(refused.error ?? err));
    req.end();
  });
}

/** GET `raw` within the guard; redirects followed by hand and judged again at every hop. */
export async function guardedGet(raw: string, o: GuardedGetOptions): Promise<FetchedBody> {
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  let url = checkUrl(raw, o.allowPrivateAddresses);
  for (let hop = 0; ; hop++) {
    let res: Hop;
    try {
      res = await oneRequest(url, o, signal);
    } catch (err) {
      if (err instanceof WebFetchError) throw err;
      if (timeout.aborted) throw new WebFetchError("web_timeout", `Error: ${url.href} did not answer within ${Math.round(o.timeoutMs / 1000)} s. Try again later or another source.`);
      if (o.signal?.aborted) throw err;
      throw new WebFetchError("web_connection_failed", `Error: Could not fetch ${url.href}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
    }
    if (res.location !== undefined) {
      if (hop >= MAX_REDIRECTS) throw new WebFetchError("web_redirect_limit", `Error: ${raw} redirects more than ${MAX_REDIRECTS} times; not followed further.`);
      let next: string;
      try {
        next = new URL(res.location, url).href;
      } catch {
        throw new WebFetchError("web_url_invalid", `Error: ${url.href} redirects to an invalid URL.`);
      }
      url = checkUrl(next, o.allowPrivateAddresses);
      continue;
    }
    if (res.status >= 400) throw new WebFetchError("web_http_status", `Error: ${url.href} answered HTTP ${res.status}. Check the URL, or fetch another page.`);
    return { url: url.href, status: res.status, contentType: res.contentType, body: res.body, truncated: res.truncated };
  }
}
