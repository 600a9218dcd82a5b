/**
 * Which network addresses a server-side web tool may reach (issue 35, DeerFlow's
 * `community/url_safety.py`): public unicast only. Loopback, private (RFC 1918, unique-local),
 * link-local (169.254/16, where the cloud metadata services answer), CGNAT, multicast, reserved,
 * documentation and unspecified addresses are refused, and so are `localhost`, `*.localhost` and
 * the metadata host names. An IPv6 address that embeds an IPv4 one (`::ffff:127.0.0.1`, NAT64
 * `64:ff9b::/96`, IPv4-compatible `::a.b.c.d`) is judged by the IPv4 address it carries.
 *
 * Where this differs from DeerFlow on purpose: DeerFlow checks the names it resolved and then
 * lets its HTTP client resolve again (a DNS answer that changes between the two reaches the
 * private address). Here the rule is applied to the address the socket connects to
 * (tools/webRequest.ts hands the checked address to the connection), so there is no second lookup.
 *
 * The spellings the WHATWG URL parser normalises (`2130706433`, `0177.0.0.1`, `0x7f.1`,
 * `[::ffff:7f00:1]`) reach this module already as dotted IPv4 or compressed IPv6: the URL's own
 * `hostname` is what is checked, never the text the model wrote.
 */
import { isIP } from "node:net";

/** The host names that always mean this machine or a metadata service. */
const BLOCKED_NAMES = new Set(["localhost", "metadata.google.internal", "metadata", "instance-data", "metadata.azure.internal"]);

/** [first address, prefix length, why] — IPv4 ranges no web tool may reach. */
const V4_BLOCKED: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (CGNAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

/** IPv6 ranges, as [first address, prefix length, why]; embedded IPv4 forms are handled apart. */
const V6_BLOCKED: ReadonlyArray<readonly [string, number, string]> = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["100::", 64, "discard"],
  ["2001:db8::", 32, "documentation"],
  ["2001::", 23, "reserved (IETF protocol assignments)"],
  ["fc00::", 7, "unique-local (private)"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

function v4Bytes(ip: string): number[] {
  return ip.split(".").map(Number);
}

/** The 16 bytes of an IPv6 address (`isIP(ip) === 6`), a trailing dotted IPv4 part included. */
function v6Bytes(ip: string): number[] {
  let text = ip.replace(/%.*$/, "");
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    tail.push(...v4Bytes(dotted[1]!));
    text = text.slice(0, -dotted[1]!.length) + "0:0";
  }
  const [head, rest] = text.includes("::") ? text.split("::") : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(":").filter((g) => g !== "") : []);
  const h = groups(head);
  const r = groups(rest);
  const all = rest === undefined ? h : [...h, ...Array<string>(8 - h.length - r.length).fill("0"), ...r];
  const bytes = all.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function inPrefix(bytes: readonly number[], base: readonly number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((bytes[byte]! & mask) !== (base[byte]! & mask)) return false;
  }
  return true;
}

/**
 * The IPv4 address an IPv6 one carries and how: mapped (`::ffff:a.b.c.d`) and NAT64 are judged by
 * it; the deprecated IPv4-compatible form (`::a.b.c.d`) is refused whatever it carries.
 */
function embeddedV4(b: readonly number[]): { v4: string; compat: boolean } | undefined {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = b.slice(12, 16).join(".");
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return { v4, compat: false };
  if (inPrefix(b, v6Bytes("64:ff9b::"), 96)) return { v4, compat: false };
  if (zeros(0, 12) && !zeros(12, 14)) return { v4, compat: true };
  return undefined;
}

/** Why `ip` is refused ("loopback", "private", …), or undefined for a public address. */
export function blockedAddressReason(ip: string): string | undefined {
  const family = isIP(ip);
  if (family === 4) {
    const b = v4Bytes(ip);
    if (ip === "255.255.255.255") return "broadcast";
    return V4_BLOCKED.find(([base, bits]) => inPrefix(b, v4Bytes(base), bits))?.[2];
  }
  if (family === 6) {
    const b = v6Bytes(ip);
    const inner = embeddedV4(b);
    if (inner) return inner.compat ? "IPv4-compatible (deprecated)" : blockedAddressReason(inner.v4);
    return V6_BLOCKED.find(([base, bits]) => inPrefix(b, v6Bytes(base), bits))?.[2];
  }
  return "not an IP address";
}

/** A URL's `hostname` without IPv6 brackets or a trailing dot, lower case. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase();
}

/** Why a host name is refused before any lookup (`localhost`, a metadata name), or undefined. */
export function blockedHostNameReason(hostname: string): string | undefined {
  const host = bareHost(hostname);
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback (localhost)";
  if (BLOCKED_NAMES.has(host)) return "a metadata service";
  if (isIP(host)) return blockedAddressReason(host);
  return undefined;
}
