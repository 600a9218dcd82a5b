/**
 * The bearer token of `deerflow serve`: `Authorization: Bearer <token>`, compared in constant
 * time (every route takes it, session.ts; the `/rpc` upgrade takes only it). The token is the operator's (`--token-file`) or one
 * generated at start and printed once; it is never logged.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { HarnessError, errorMessage } from "../errors.js";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Whether an Authorization header carries the token (the HTTP routes and the `/rpc` upgrade). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  // Digests: equal lengths for timingSafeEqual, and nothing about the token's length leaks.
  return m !== null && timingSafeEqual(digest(m[1]!), digest(token));
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
