/**
 * Bearer-token auth for every route of `deerflow serve`: `Authorization: Bearer <token>`, compared
 * in constant time. Without it, or with another token: 401 with a JSON error (and the
 * WWW-Authenticate header HTTP asks for). The token is the operator's (`--token-file`) or one
 * generated at start and printed once; it is never logged.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import type { MiddlewareHandler } from "hono";
import { HarnessError, errorMessage } from "../errors.js";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Whether an Authorization header carries the token (the HTTP routes and the `/rpc` upgrade). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  // Digests: equal lengths for timingSafeEqual, and nothing about the token's length leaks.
  return m !== null && timingSafeEqual(digest(m[1]!), digest(token));
}

export function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (!bearerMatches(c.req.header("Authorization"), token)) {
      c.header("WWW-Authenticate", 'Bearer realm="deerflow"');
      return c.json({ error: "unauthorized", message: "This server needs its bearer token: Authorization: Bearer <token>." }, 401);
    }
    await next();
  };
}

/** The token from `--token-file` (its first line), or a new random one. */
export function loadToken(file: string | undefined): { token: string; generated: boolean } {
  if (file === undefined) return { token: randomBytes(32).toString("base64url"), generated: true };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new HarnessError("usage", `Cannot read --token-file ${file}: ${errorMessage(err)}`);
  }
  const token = text.split(/\r?\n/, 1)[0]!.trim();
  if (token.length < 16) throw new HarnessError("usage", `--token-file ${file} must hold a token of at least 16 characters on its first line.`);
  return { token, generated: false };
}
